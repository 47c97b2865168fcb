"""Activations (issue #18): values against NumPy/math references, gradients against the
closed forms, traced equal to eager."""
import math

import numpy as np
import pytest

import kiln as tf

X = np.array([-30.0, -2.5, -0.5, -1e-8, 0.0, 1e-8, 0.25, 1.5, 40.0], np.float64)
SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
erf = np.vectorize(math.erf)

REFERENCES = {
    "erf": (tf.math.erf, erf, lambda x: 2 / math.sqrt(math.pi) * np.exp(-x * x)),
    "softplus": (tf.nn.softplus, lambda x: np.logaddexp(0, x), lambda x: 1 / (1 + np.exp(-x))),
    "softsign": (tf.nn.softsign, lambda x: x / (1 + np.abs(x)), lambda x: 1 / (1 + np.abs(x)) ** 2),
    "elu": (tf.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), lambda x: np.where(x > 0, 1, np.exp(x))),
    "selu": (tf.nn.selu, lambda x: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
             # TF's SeluGrad takes scale unless y < 0: at 0 too
             lambda x: SELU_SCALE * np.where(x >= 0, 1, SELU_ALPHA * np.exp(x))),
    "gelu": (tf.nn.gelu, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
             lambda x: 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)),
    "silu": (tf.nn.silu, lambda x: x / (1 + np.exp(-x)),
             lambda x: 1 / (1 + np.exp(-x)) * (1 + x * (1 - 1 / (1 + np.exp(-x))))),
    "leaky_relu": (tf.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), lambda x: np.where(x > 0, 1, 0.2)),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients(name, dtype):
    fn, ref, dref = REFERENCES[name]
    x = tf.constant(X.astype(dtype))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(y.numpy(), ref(X).astype(dtype), rtol=tol, atol=tol)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), dref(X), rtol=10 * tol, atol=10 * tol)
    traced = tf.function(fn)(x)
    np.testing.assert_array_equal(traced.numpy(), y.numpy())


def test_variants_and_aliases():
    x = tf.constant([-1.0, 0.5, 2.0])
    approx = 0.5 * X * (1 + np.tanh(math.sqrt(2 / math.pi) * (X + 0.044715 * X ** 3)))
    np.testing.assert_allclose(tf.nn.gelu(tf.constant(X), approximate=True).numpy(), approx, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(tf.nn.leaky_relu(x, alpha=0.5).numpy(), [-0.5, 0.5, 2.0])
    assert tf.nn.swish is tf.nn.silu
    np.testing.assert_allclose(tf.nn.silu(x, beta=2.0).numpy(), x.numpy() / (1 + np.exp(-2 * x.numpy())), rtol=1e-6)
    assert tf.math.softplus(tf.constant(100.0)).numpy() == 100.0  # no overflow
    assert tf.math.softplus(tf.constant(-100.0)).numpy() > 0
    assert np.signbit(tf.nn.elu(tf.constant(-0.0)).numpy())
    with pytest.raises(tf.errors.InvalidArgumentError, match="Erf"):
        tf.math.erf(tf.constant([1, 2]))


@pytest.mark.parametrize("name", ["elu", "selu", "softplus", "softsign", "gelu", "swish", "silu"])
def test_keras_activations_by_name(name):
    x = tf.constant([-1.5, 0.5, 2.0])
    layer = tf.keras.layers.Dense(3, activation=name, kernel_initializer="ones", use_bias=False)
    y = layer(tf.reshape(x, [1, 3]))
    fn = {"swish": tf.nn.silu, "silu": tf.nn.silu}.get(name) or getattr(tf.nn, name)
    np.testing.assert_allclose(y.numpy()[0], fn(tf.fill([3], tf.reduce_sum(x))).numpy(), rtol=1e-6)
    assert tf.keras.activations.get(name) is tf.keras.activations.get(name)


def test_keras_elu_alpha():
    x = tf.constant([-1.0, 2.0])
    np.testing.assert_allclose(tf.keras.activations.elu(x, alpha=0.5).numpy(), [0.5 * math.expm1(-1.0), 2.0],
                               rtol=1e-6)
