"""TensorFlow's guide "Using the SavedModel format" (site/en/guide/saved_model.ipynb): its custom-module
and signature cells run with `import kiln as tf`, asserting what the guide prints and states. The
MobileNet cells download a pretrained Keras application (no network here, no tf.keras.applications in
Kiln)."""
import os

import pytest

import kiln as tf


class CustomModule(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable(1.)

    @tf.function
    def __call__(self, x):
        print("Tracing with", x)
        return x * self.v

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
    def mutate(self, new_v):
        self.v.assign(new_v)


class CustomModuleWithOutputName(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable(1.)

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def __call__(self, x):
        return {"custom_output_name": x * self.v}


def test_custom_module_saved_without_signatures(tmp_path, capfd):
    module = CustomModule()
    module(tf.constant(0.))
    out, _ = capfd.readouterr()
    assert out == 'Tracing with Tensor("x:0", shape=(), dtype=float32)\n'
    path = str(tmp_path / "module_no_signatures")
    tf.saved_model.save(module, path)

    imported = tf.saved_model.load(path)
    assert imported(tf.constant(3.)).numpy() == 3
    imported.mutate(tf.constant(2.))
    assert imported(tf.constant(3.)).numpy() == 6
    assert imported.v.numpy() == 2.0 and module.v.numpy() == 1.0  # the restored object has its own variables
    assert len(imported.signatures) == 0
    with pytest.raises((ValueError, TypeError)):
        imported(tf.constant([3.]))  # no saved trace takes a vector: the function was traced for a scalar


def test_signatures_and_output_names(tmp_path, capfd):
    module = CustomModule()
    call = module.__call__.get_concrete_function(tf.TensorSpec(None, tf.float32))
    path = str(tmp_path / "module_with_signature")
    tf.saved_model.save(module, path, signatures=call)
    assert list(tf.saved_model.load(path).signatures.keys()) == ["serving_default"]

    signatures = {"serving_default": call,
                  "array_input": module.__call__.get_concrete_function(tf.TensorSpec([None], tf.float32))}
    path = str(tmp_path / "module_with_multiple_signatures")
    tf.saved_model.save(module, path, signatures=signatures)
    assert sorted(tf.saved_model.load(path).signatures.keys()) == ["array_input", "serving_default"]
    out, _ = capfd.readouterr()
    assert out.splitlines() == ['Tracing with Tensor("x:0", shape=<unknown>, dtype=float32)',
                                'Tracing with Tensor("x:0", shape=(None,), dtype=float32)']

    module_output = CustomModuleWithOutputName()
    call_output = module_output.__call__.get_concrete_function(tf.TensorSpec(None, tf.float32))
    path = str(tmp_path / "module_with_output_name")
    tf.saved_model.save(module_output, path, signatures={"serving_default": call_output})
    imported = tf.saved_model.load(path)
    outputs = imported.signatures["serving_default"].structured_outputs
    assert list(outputs) == ["custom_output_name"]
    assert repr(outputs["custom_output_name"]) == \
        "TensorSpec(shape=<unknown>, dtype=tf.float32, name='custom_output_name')"
    assert imported.signatures["serving_default"](x=tf.constant(4.))["custom_output_name"].numpy() == 4.0
    assert os.path.isdir(path)


def test_fine_tuning_a_restored_function(tmp_path):
    # The guide's "Fine-tuning" cell: the restored __call__ is differentiable, its variables are
    # watched, and SGD drives v towards 5. Reference: the same updates in float64.
    module = CustomModule()
    module(tf.constant(0.))
    path = str(tmp_path / "module_no_signatures")
    tf.saved_model.save(module, path)
    imported = tf.saved_model.load(path)
    imported.mutate(tf.constant(2.))
    optimizer = tf.keras.optimizers.SGD(0.05)

    def train_step():
        with tf.GradientTape() as tape:
            loss = (10. - imported(tf.constant(2.))) ** 2
        variables = tape.watched_variables()
        grads = tape.gradient(loss, variables)
        optimizer.apply_gradients(zip(grads, variables))
        return loss

    lines = ["loss={:.2f} v={:.2f}".format(train_step(), imported.v.numpy()) for _ in range(10)]
    v, expected = 2.0, []
    for _ in range(10):
        loss = (10. - 2. * v) ** 2
        v -= 0.05 * (-4. * (10. - 2. * v))
        expected.append("loss={:.2f} v={:.2f}".format(loss, v))
    assert lines == expected
    assert lines[0] == "loss=36.00 v=3.20"
