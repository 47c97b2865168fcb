"""Keras 2's backend functions (tf.keras.backend)."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras


def test_backend_functions():
    B = K.backend
    x = tf.constant([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])
    a = x.numpy().astype(np.float64)
    assert B.int_shape(x) == (2, 3) and B.ndim(x) == 2 and B.int_shape(K.Input((3,))) == (None, 3)
    np.testing.assert_allclose(B.std(x).numpy(), a.std(), rtol=1e-6)
    np.testing.assert_allclose(B.std(x, axis=0).numpy(), a.std(0), rtol=1e-6)
    np.testing.assert_allclose(B.var(x, axis=1, keepdims=True).numpy(), a.var(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(B.mean(x, axis=-1).numpy(), a.mean(-1), rtol=1e-6)
    assert B.epsilon() == 1e-7 and B.floatx() == "float32" and B.image_data_format() == "channels_last"
    sample = B.random_normal((4000,), mean=2.0, stddev=0.5, seed=3).numpy()
    assert sample.mean() == pytest.approx(2.0, abs=0.05) and sample.std() == pytest.approx(0.5, abs=0.03)
    assert B.random_uniform((3, 2)).shape == (3, 2)
    assert B.is_keras_tensor(K.Input((2,))) and not B.is_keras_tensor(x)
    assert B.count_params(tf.Variable(np.zeros((3, 4), np.float32))) == 12
    B.set_floatx("float64")
    try:
        assert K.layers.Dense(1).dtype == "float64"
    finally:
        B.set_floatx("float32")
    K.layers.Dense(1, name=None)
    B.clear_session()
    assert K.layers.Dense(1).name == "dense"
    with pytest.raises(ValueError, match="channels_first"):
        B.set_image_data_format("channels_first")
