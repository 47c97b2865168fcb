"""kiln.onnx: exports checked by ONNX's own checker (Debian's python3-onnx, with
strict shape inference), imports that give back Kiln's bits, and clear errors."""
import time

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


def _endless_loop_model(path, trip_count):
    """v = v0 + 1, `trip_count` times (None: no trip count, only a condition that stays true)."""
    onnx = _onnx()
    from onnx import TensorProto, helper
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["v_in", "one"], ["v_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [])],
        [helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])])
    inits = [helper.make_tensor("keep_going", TensorProto.BOOL, [], [True])]
    if trip_count is not None:
        inits.append(helper.make_tensor("trip_count", TensorProto.INT64, [], [trip_count]))
    loop = helper.make_node("Loop", ["trip_count" if trip_count is not None else "", "keep_going", "v0"], ["v"],
                            body=body)
    graph = helper.make_graph([loop], "loop", [helper.make_tensor_value_info("v0", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, [])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return path


@pytest.mark.parametrize("trip_count", [2**62, None], ids=["2^62", "no-trip-count"])
def test_import_timeout_stops_an_endless_loop(tmp_path, trip_count):
    model = tf.onnx.import_model(_endless_loop_model(tmp_path / "loop.onnx", trip_count), timeout=0.2)
    for _ in range(2):  # the model stays usable after a stopped call
        begin = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError, match="deadline of 0.2 s"):
            model(v0=np.float32(0))
        assert 0.2 <= time.monotonic() - begin < 3


def test_import_timeout_lets_a_bounded_loop_finish(tmp_path):
    path = _endless_loop_model(tmp_path / "loop.onnx", 1000)
    assert float(tf.onnx.import_model(path, timeout=60)(v0=np.float32(2))["v"].numpy()) == 1002.0
    assert float(tf.onnx.import_model(path)(v0=np.float32(0))["v"].numpy()) == 1000.0
    for bad, error in [(0, ValueError), (-1.5, ValueError), (float("nan"), ValueError), ("2", TypeError),
                       (True, TypeError)]:
        with pytest.raises(error, match="timeout"):
            tf.onnx.import_model(path, timeout=bad)
