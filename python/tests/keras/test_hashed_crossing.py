"""HashedCrossing reproduces Keras 2.15's documented bins (its docstring's examples: "int" and "one_hot"), for
rank 0 / 1 / 2 inputs, eagerly, traced and in a functional model; configs and Keras' errors."""
import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
FEAT1 = ["A", "B", "A", "B", "A"]
FEAT2 = [101, 101, 101, 102, 102]


def test_keras_documented_bins():
    layer = L.HashedCrossing(num_bins=5)
    out = layer((tf.constant(FEAT1), tf.constant(FEAT2)))
    assert out.dtype == tf.int64 and out.numpy().tolist() == [1, 4, 1, 1, 3]
    one_hot = L.HashedCrossing(num_bins=5, output_mode="one_hot")((tf.constant(FEAT1), tf.constant(FEAT2)))
    np.testing.assert_array_equal(one_hot.numpy(), np.eye(5)[[1, 4, 1, 1, 3]])
    assert one_hot.dtype == tf.float32


def test_ranks_traced_and_functional():
    layer = L.HashedCrossing(num_bins=5)
    column = layer((tf.constant([[f] for f in FEAT1]), tf.constant([[f] for f in FEAT2])))
    assert column.shape == (5, 1) and column.numpy().ravel().tolist() == [1, 4, 1, 1, 3]
    assert int(layer((tf.constant("B"), tf.constant(101)))) == 4
    traced = tf.function(lambda a, b: layer((a, b)))(tf.constant(FEAT1), tf.constant(FEAT2))
    assert traced.numpy().tolist() == [1, 4, 1, 1, 3]
    a = tf.keras.Input(shape=(), dtype="string")
    b = tf.keras.Input(shape=(), dtype="int64")
    model = tf.keras.Model([a, b], L.HashedCrossing(5, output_mode="one_hot")((a, b)))
    assert model.output_shape == (None, 5)
    np.testing.assert_array_equal(model([tf.constant(FEAT1), tf.constant(FEAT2)]).numpy(), np.eye(5)[[1, 4, 1, 1, 3]])


def test_config_and_errors():
    config = L.HashedCrossing(7, output_mode="one_hot").get_config()
    assert config["num_bins"] == 7 and config["output_mode"] == "one_hot"
    assert L.HashedCrossing.from_config(config).get_config() == config
    with pytest.raises(ValueError, match="should be called on a list or tuple of inputs"):
        L.HashedCrossing(3)(tf.constant(FEAT1))
    with pytest.raises(ValueError, match="should be called on at least two inputs"):
        L.HashedCrossing(3)([tf.constant(FEAT1)])
    with pytest.raises(ValueError, match="should have an integer or string dtype"):
        L.HashedCrossing(3)((tf.constant([1.0]), tf.constant([2])))
    with pytest.raises(ValueError, match="should have shape"):
        L.HashedCrossing(3)((tf.constant([1, 2]), tf.constant([1])))
