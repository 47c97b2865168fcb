"""kiln.onnx: exports checked by ONNX's own checker (Debian's python3-onnx, with
strict shape inference), imports that give back Kiln's bits, and clear errors."""
import numpy as np
import pytest

import kiln as tf


def _onnx():
    """ONNX's own package, for the tests that run its checker (the import tests need only Kiln)."""
    return pytest.importorskip("onnx")


def _needs_onnx_build(tmp_path):
    probe = tf.function(lambda x: x + 1.0, input_signature=[tf.TensorSpec([1], tf.float32)])
    try:
        tf.onnx.export(probe, tmp_path / "probe.onnx")
    except tf.errors.UnimplementedError as e:
        pytest.skip(str(e))


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(12, dtype=np.float32).reshape(4, 3) / 10.0, name="w")
        self.b = tf.Variable(np.array([0.5, -0.5, 0.0], dtype=np.float32), name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32)])
    def __call__(self, x):
        return tf.nn.softmax(tf.nn.relu(tf.matmul(x, self.w) + self.b))


def test_export_passes_onnx_checker_and_keeps_batch_symbolic(tmp_path):
    onnx = _onnx()
    _needs_onnx_build(tmp_path)
    net = Net()
    path = tmp_path / "net.onnx"
    tf.onnx.export(net.__call__, path, input_names=["x"])
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == 8
    assert [o.version for o in model.opset_import] == [tf.onnx.OPSET_VERSION]
    (x,) = model.graph.input
    assert x.name == "x"
    assert x.type.tensor_type.shape.dim[0].dim_param == "x_dim0"
    assert x.type.tensor_type.shape.dim[1].dim_value == 4
    assert sorted(i.name for i in model.graph.initializer)[:2] == ["b", "w"]
    assert [o.name for o in model.graph.output] == ["output_0"]


def test_import_gives_back_kilns_bits(tmp_path):
    _needs_onnx_build(tmp_path)
    net = Net()
    path = tmp_path / "net.onnx"
    tf.onnx.export(net.__call__, path, input_names=["x"])
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    imported = tf.onnx.import_model(path)
    got = imported(x=x)["output_0"].numpy()
    assert got.dtype == np.float32 and got.shape == (5, 3)
    np.testing.assert_array_equal(got, net(x).numpy())


def test_export_of_a_loaded_signature(tmp_path):
    onnx = _onnx()
    _needs_onnx_build(tmp_path)
    net = Net()
    tf.saved_model.save(net, str(tmp_path / "saved"), signatures={"serving_default": net.__call__})
    loaded = tf.saved_model.load(str(tmp_path / "saved"))
    path = tmp_path / "sig.onnx"
    tf.onnx.export(loaded.signatures["serving_default"], path)
    onnx.checker.check_model(onnx.load(str(path)), full_check=True)


def test_refusals_name_the_op_and_node(tmp_path):
    _needs_onnx_build(tmp_path)
    v = tf.Variable(1.0)

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def bump(x):
        v.assign_add(x)
        return v.read_value()

    with pytest.raises(tf.errors.UnimplementedError, match=r"op AssignAddVariable \(node 'assign_add_variable'\)"):
        tf.onnx.export(bump, tmp_path / "bump.onnx")
    with pytest.raises(TypeError, match="expected a kiln.function"):
        tf.onnx.export(lambda x: x, tmp_path / "f.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"\x08\x07garbage")
    with pytest.raises(tf.errors.InvalidArgumentError, match="not an ONNX model"):
        tf.onnx.import_model(tmp_path / "bad.onnx")
