"""What the serialization guide needs of saving: save_weights without an extension writes a TF checkpoint whose
root is the model (load_weights returns its status), a subclassed model saved as a SavedModel directory loads
without its class, custom activations by name in a custom_object_scope, non-identifier layer names."""
import os

import numpy as np
import pytest

import kiln as tf
from kiln import keras


def _mlp(name="mlp", out=3):
    inputs = keras.Input(shape=(4,), name="digits")
    x = keras.layers.Dense(5, activation="relu", name="dense_1")(inputs)
    return keras.Model(inputs, keras.layers.Dense(out, name="predictions")(x), name=name)


def test_save_weights_without_extension_is_a_tf_checkpoint(tmp_path):
    model = _mlp("3_layer_mlp")  # Keras names need not be Python identifiers
    prefix = os.path.join(tmp_path, "ckpt")
    model.save_weights(prefix)
    assert os.path.exists(prefix + ".index") and os.path.exists(os.path.join(tmp_path, "checkpoint"))
    keys = dict(tf.train.list_variables(prefix))
    assert keys["layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"] == [4, 5]
    assert keys["layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE"] == [3]
    assert tf.train.latest_checkpoint(str(tmp_path)) == prefix
    other = _mlp()
    other.load_weights(prefix).assert_consumed()
    for a, b in zip(model.get_weights(), other.get_weights()):
        np.testing.assert_array_equal(a, b)
    # The guide's transfer learning: a checkpoint of the model without its head loads into a model with another.
    pretrained = keras.Model(model.inputs, model.layers[-1].input)
    pretrained.save_weights(os.path.join(tmp_path, "pretrained_ckpt"))
    head = _mlp(out=2)
    status = head.load_weights(os.path.join(tmp_path, "pretrained_ckpt"))
    np.testing.assert_array_equal(head.get_weights()[0], model.get_weights()[0])
    with pytest.raises(AssertionError):
        status.assert_consumed()
    with pytest.raises(FileExistsError):
        model.save_weights(prefix, overwrite=False)


class _Sub(keras.Model):
    def __init__(self, units):
        super().__init__()
        self.units = units
        self.layers_ = [keras.layers.Dense(u) for u in units]

    def call(self, inputs):
        for layer in self.layers_:
            inputs = layer(inputs)
        return inputs


def test_subclassed_saved_model_loads_without_its_class(tmp_path):
    model = _Sub([4, 2])
    x = np.random.default_rng(0).normal(size=(3, 5)).astype("float32")
    expected = model(x).numpy()
    path = os.path.join(tmp_path, "sub")
    model.save(path)
    revived = keras.models.load_model(path)
    assert type(revived).__name__ == "_Sub" and isinstance(revived, keras.Model)
    np.testing.assert_allclose(revived(x).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(revived.predict(x, verbose=0), expected, rtol=1e-6)
    assert tf.saved_model.load(path)(x).shape == (3, 2)  # the loaded object is callable, as TF's
    loaded = keras.models.load_model(path, custom_objects={"_Sub": lambda **kw: _Sub([4, 2])})
    assert type(loaded) is _Sub


def test_custom_activation_by_name_in_a_scope():
    def custom_activation(x):
        return tf.nn.tanh(x) ** 2

    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Activation(custom_activation)(inputs))
    config = model.get_config()
    with pytest.raises(ValueError, match="Unknown activation"):
        keras.Model.from_config(config)
    with keras.utils.custom_object_scope({"custom_activation": custom_activation}):
        rebuilt = keras.Model.from_config(config)
    np.testing.assert_allclose(rebuilt(np.ones((1, 3), "float32")).numpy(), np.tanh(1.0) ** 2 * np.ones((1, 3)),
                               rtol=1e-6)
