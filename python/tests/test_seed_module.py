"""The seed's "AutoGraph and tf.Module" walkthrough, as written with `import kiln as tf`:
a module wrapping its variable, a method with an input_signature, tf.saved_model
across processes, and the printed text the seed shows."""
import subprocess

import pytest

import kiln as tf

from built_tools import built_tool


class DemoModule(tf.Module):
    def __init__(self, init_value=tf.constant(0.0), name=None):
        super(DemoModule, self).__init__(name=name)
        with self.name_scope:
            self.x = tf.Variable(init_value, dtype=tf.float32, trainable=True)

    @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32)])
    def addprint(self, a):
        with self.name_scope:
            self.x.assign_add(a)
            tf.print(self.x)
            return (self.x)


def test_function_with_an_outer_variable_and_an_input_signature(capfd):
    x = tf.Variable(1.0, dtype=tf.float32)

    @tf.function(input_signature=[tf.TensorSpec(shape=[], dtype=tf.float32)])
    def add_print(a):
        x.assign_add(a)
        tf.print(x)
        return (x)

    assert repr(add_print(tf.constant(3.0))) == "<kiln.Tensor: shape=(), dtype=float32, numpy=4.0>"
    assert capfd.readouterr().err == "4\n"
    with pytest.raises(TypeError):
        add_print(tf.constant(3))  # does not fit the signature
    assert float(x) == 4.0


def test_demo_module_saved_and_loaded(tmp_path, capfd):
    demo = DemoModule(init_value=tf.constant(1.0))
    demo.addprint(tf.constant(5.0))
    demo.addprint(tf.constant(50.0))
    assert demo.submodules == ()
    assert [v.numpy() for v in demo.trainable_variables] == [56.0]
    assert capfd.readouterr().err == "6\n56\n"

    tf.saved_model.save(demo, str(tmp_path / "demo_model"), signatures={"serving_default": demo.addprint})
    demo2 = tf.saved_model.load(str(tmp_path / "demo_model"))
    assert repr(demo2.addprint(tf.constant(5.0))) == "<kiln.Tensor: shape=(), dtype=float32, numpy=61.0>"
    assert capfd.readouterr().err == "61\n"

    cli = built_tool("kiln-cli", "KILN_CLI")
    shown = subprocess.run([cli, "show", "--dir", str(tmp_path / "demo_model"), "--signature_def", "serving_default"],
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(
        "signature_def['serving_default']:\n"
        "  The given SavedModel SignatureDef contains the following input(s):\n"
        "    inputs['a'] tensor_info:\n"
        "        dtype: DT_FLOAT\n"
        "        shape: ()\n"
        "        name: serving_default_a:0\n"
        "  The given SavedModel SignatureDef contains the following output(s):\n"
        "    outputs['output_0'] tensor_info:\n"
        "        dtype: DT_FLOAT\n"
        "        shape: ()\n"), shown.stdout
