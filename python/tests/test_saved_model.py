"""kiln.saved_model: saving a Module's variables and kiln.functions from Python,
loading them back, and the same directories crossing to C++ (kiln-cli,
mnist_train) and back."""
import re
import subprocess

import numpy as np
import pytest

import kiln as tf

from built_tools import built_tool


def _tool(env, name):
    return built_tool(name, env)


class Demo(tf.Module):
    def __init__(self):
        super().__init__()
        self.x = tf.Variable(1.0)
        self.inner = [tf.Module(name="inner")]
        self.inner[0].w = tf.Variable([1.0, 2.0])

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def addprint(self, a):
        self.x.assign_add(a)
        return self.x * 2

    @tf.function
    def scale(self, v):
        return v * self.inner[0].w


def test_a_module_round_trips_with_its_methods_found_without_listing(tmp_path):
    d = Demo()
    d.scale(tf.constant([3.0, 4.0]))
    tf.saved_model.save(d, tmp_path / "m", signatures=d.addprint)
    loaded = tf.saved_model.load(tmp_path / "m")
    assert float(loaded.x) == 1.0
    assert loaded.inner_0.w.numpy().tolist() == [1.0, 2.0]
    assert float(loaded.addprint(tf.constant(5.0))) == 12.0
    assert float(loaded.x) == 6.0  # the loaded function updates the loaded variable
    assert float(d.x) == 1.0  # and not the original
    assert loaded.scale(tf.constant([1.0, 1.0])).numpy().tolist() == [1.0, 2.0]
    assert len(loaded.variables) == 2


def test_signature_inputs_are_named_after_the_python_parameters(tmp_path):
    d = Demo()
    tf.saved_model.save(d, tmp_path / "m", signatures={"serving_default": d.addprint,
                                                       "scale": d.scale.get_concrete_function(tf.TensorSpec([2]))})
    sig = tf.saved_model.load(tmp_path / "m").signatures
    assert set(sig) == {"serving_default", "scale"}
    assert list(sig["serving_default"].structured_input_signature[1]) == ["a"]
    assert list(sig["scale"].structured_input_signature[1]) == ["v"]
    out = sig["serving_default"](a=2.0)
    assert list(out) == ["output_0"] and float(out["output_0"]) == 6.0
    with pytest.raises(TypeError, match="by keyword: a"):
        sig["serving_default"](2.0)


def test_a_tensor_spec_name_names_the_input(tmp_path):
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="pixels")])
        def f(self, x):
            return x + 1

    tf.saved_model.save(M(), tmp_path / "m")  # one kiln.function: the default signature
    sig = tf.saved_model.load(tmp_path / "m").signatures["serving_default"]
    assert sig(pixels=[1.0, 2.0])["output_0"].numpy().tolist() == [2.0, 3.0]


def test_a_dict_result_names_the_signature_outputs_in_the_file(tmp_path):
    # TF names a signature's outputs after the returned dict's keys; TF Serving's clients (and
    # kiln-serve, which reads the file) see those names, not output_0...
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
        def f(self, x):
            return {"scores": x * 2.0, "classes": tf.argmax(x, axis=1)}

    tf.saved_model.save(M(), tmp_path / "m")
    import json
    doc = json.loads((tmp_path / "m" / "saved_model.json").read_text())
    outputs = doc["signatures"]["serving_default"]["outputs"]
    assert sorted(o["name"] for o in outputs) == ["classes", "scores"]
    out = tf.saved_model.load(tmp_path / "m").signatures["serving_default"](x=[[1.0, 3.0]])
    assert sorted(out) == ["classes", "scores"]
    assert out["scores"].numpy().tolist() == [[2.0, 6.0]] and out["classes"].numpy().tolist() == [1]


def test_bad_signatures_are_clear_errors(tmp_path):
    d = Demo()
    d.scale(tf.constant([1.0, 2.0]))
    d.scale(tf.constant([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="exactly one trace"):
        tf.saved_model.save(d, tmp_path / "m", signatures=d.scale)
    with pytest.raises(ValueError, match="expected a kiln.function or a ConcreteFunction"):
        tf.saved_model.save(d, tmp_path / "m", signatures={"s": 3})
    assert not (tmp_path / "m").exists()


def test_loading_a_damaged_model_raises_tf_errors(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf.saved_model.load(tmp_path / "nothing")
    d = Demo()
    tf.saved_model.save(d, tmp_path / "bad", signatures=d.addprint)
    (tmp_path / "bad" / "saved_model.json").write_text("{not json")
    with pytest.raises(tf.errors.InvalidArgumentError, match="saved_model.json"):
        tf.saved_model.load(tmp_path / "bad")


def test_a_model_saved_from_python_runs_in_kiln_cli(tmp_path):
    cli = _tool("KILN_CLI", "kiln-cli")
    d = Demo()
    tf.saved_model.save(d, tmp_path / "m", signatures=d.addprint)
    shown = subprocess.run([cli, "show", "--dir", str(tmp_path / "m"), "--all"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "inputs['a'] tensor_info" in shown.stdout
    assert "inner_0/w: name='Variable' shape=(2,) dtype=float32" in shown.stdout
    ran = subprocess.run([cli, "run", "--dir", str(tmp_path / "m"), "--signature_def", "serving_default", "--input",
                          "a=2"], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == "Result for output key output_0:\n6.0\n"


def _write_idx(path, array):
    array = np.ascontiguousarray(array, np.uint8)
    header = bytes([0, 0, 0x08, array.ndim]) + np.array(array.shape, ">i4").tobytes()
    with open(path, "wb") as f:
        f.write(header + array.tobytes())


def _synthetic_mnist(root, train, test):
    """Digit d is a bright row at height 2 + 2d (the C++ examples test's digits)."""
    root.mkdir()
    for prefix, n in (("train", train), ("t10k", test)):
        labels = np.arange(n) % 10
        images = np.zeros((n, 28, 28), np.uint8)
        images[np.arange(n), 2 + 2 * labels, :] = 255
        _write_idx(root / f"{prefix}-images-idx3-ubyte", images)
        _write_idx(root / f"{prefix}-labels-idx1-ubyte", labels)
    return images


def test_a_model_saved_from_cpp_runs_in_python(tmp_path):
    train = _tool("KILN_MNIST_TRAIN", "examples/mnist_train")
    cli = _tool("KILN_CLI", "kiln-cli")
    test_images = _synthetic_mnist(tmp_path / "mnist", 100, 20)
    model = tmp_path / "model"
    r = subprocess.run([train, "--epochs", "1", "--batch-size", "20", "--seed", "3", "--max-steps", "3",
                        "--data-dir", str(tmp_path / "mnist"), "--save", str(model)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr

    loaded = tf.saved_model.load(model)
    serve = loaded.signatures["serving_default"]
    spec = serve.structured_input_signature[1]["images"]
    assert spec.shape.as_list() == [None, 28, 28, 1] and spec.dtype == tf.float32
    images = (test_images.astype(np.float32) / 255)[..., None]
    probs = serve(images=images)["output_0"].numpy()
    assert probs.shape == (20, 10)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-5)

    served = subprocess.run([cli, "run", "--dir", str(model), "--signature_def", "serving_default", "--input_idx",
                             f"images={tmp_path / 'mnist' / 't10k-images-idx3-ubyte'}:3", "--outdir",
                             str(tmp_path / "out")], capture_output=True, text=True)
    assert served.returncode == 0, served.stderr
    cli_probs = [float(v) for v in re.findall(r"[-+0-9.e]+", served.stdout.split("\n", 1)[1].split("Output output_0")[0])]
    np.testing.assert_allclose(cli_probs, probs[3], rtol=1e-4, atol=1e-6)
    # The C++ engine's result, bit for bit, equals Python's for the same batch.
    assert f"Output output_0 is saved to {tmp_path / 'out' / 'output_0.npy'}" in served.stdout
    cpp = np.load(tmp_path / "out" / "output_0.npy")
    assert cpp.dtype == np.float32 and cpp.shape == (1, 10)
    np.testing.assert_array_equal(cpp, serve(images=images[3:4])["output_0"].numpy())
