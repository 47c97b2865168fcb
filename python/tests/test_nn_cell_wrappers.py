"""tf.nn's RNN cell wrappers inside keras.layers.RNN: the residual wrapper adds each step's input to the cell's
output, the dropout wrapper drops (in inference too, as TF's) with fresh or variational masks, the device wrapper
changes nothing on the CPU; dir(tf.nn) lists them though they load on first use."""
import numpy as np
import pytest

import kiln as tf

RNG = np.random.default_rng(23)
X = RNG.normal(size=(3, 6, 4)).astype(np.float32)


def sequences(cell):
    return tf.keras.layers.RNN(cell, return_sequences=True)(X).numpy()


def test_residual_wrapper():
    cell = tf.keras.layers.LSTMCell(4)
    plain = sequences(cell)  # builds the cell: the wrapper reuses its weights
    wrapped = tf.nn.RNNCellResidualWrapper(cell)
    assert isinstance(wrapped, tf.keras.layers.AbstractRNNCell)
    np.testing.assert_allclose(sequences(wrapped), plain + X, rtol=1e-5, atol=1e-6)
    doubled = tf.nn.RNNCellResidualWrapper(cell, residual_fn=lambda i, o: 2 * i + o)
    np.testing.assert_allclose(sequences(doubled), plain + 2 * X, rtol=1e-5, atol=1e-6)


def test_dropout_wrapper_masks():
    cell = tf.keras.layers.GRUCell(5)
    plain = sequences(cell)
    np.testing.assert_allclose(sequences(tf.nn.RNNCellDropoutWrapper(cell)), plain, rtol=1e-6)
    # output dropout only: the states are the plain cell's, each output 0 or output / keep
    fresh = sequences(tf.nn.RNNCellDropoutWrapper(cell, output_keep_prob=0.5, seed=3))
    kept = fresh != 0
    assert 0.2 < kept.mean() < 0.8
    np.testing.assert_allclose(fresh[kept], plain[kept] / 0.5, rtol=1e-5)
    # variational: one mask for every step and every example
    varied = sequences(tf.nn.RNNCellDropoutWrapper(cell, output_keep_prob=0.5, variational_recurrent=True, seed=4))
    pattern = varied[0, 0] != 0
    assert np.all((varied != 0) == pattern)
    np.testing.assert_allclose(varied[..., pattern], plain[..., pattern] / 0.5, rtol=1e-5)


def test_dropout_wrapper_errors_and_training():
    cell = tf.keras.layers.SimpleRNNCell(3)
    with pytest.raises(ValueError, match="input_keep_prob must be between 0 and 1"):
        tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=0.0)
    with pytest.raises(ValueError, match="input_size must be provided"):
        tf.nn.RNNCellDropoutWrapper(cell, input_keep_prob=0.5, variational_recurrent=True)
    model = tf.keras.Sequential([tf.keras.Input((6, 4)), tf.keras.layers.RNN(tf.nn.RNNCellDropoutWrapper(
        tf.keras.layers.LSTMCell(4), input_keep_prob=0.9, state_keep_prob=0.9)), tf.keras.layers.Dense(1)])
    model.compile("adam", "mse")
    history = model.fit(X, np.ones((3, 1), np.float32), epochs=3, verbose=0).history["loss"]
    assert np.all(np.isfinite(history))


def test_device_wrapper_and_dir():
    cell = tf.keras.layers.SimpleRNNCell(3)
    plain = sequences(cell)
    np.testing.assert_allclose(sequences(tf.nn.RNNCellDeviceWrapper(cell, "/cpu:0")), plain, rtol=1e-6)
    assert {"RNNCellDeviceWrapper", "RNNCellDropoutWrapper", "RNNCellResidualWrapper"} <= set(dir(tf.nn))
    with pytest.raises(AttributeError):
        tf.nn.NoSuchWrapper  # noqa: B018
