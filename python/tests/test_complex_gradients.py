"""Gradients through complex ops (issue #42), TF's convention: for a real loss L of complex z the tape
returns dL/dRe(z) + i dL/dIm(z) (so d|z|^2/dz = 2z, and a holomorphic f seeded with 1 gives conj(f'(z))).
Checked against central differences on the real and imaginary parts separately, eager and traced."""
import numpy as np
import pytest

import kiln as tf
from test_signal_fft import complex_central_differences, weighted

RNG = np.random.default_rng(7)
Z = (RNG.standard_normal([2, 3]) + 1j * RNG.standard_normal([2, 3])) * 0.8 + 0.3
W = RNG.standard_normal([2, 3]) + 1j * RNG.standard_normal([2, 3])
C = RNG.standard_normal([2, 3]) - 1j * RNG.standard_normal([2, 3])

COMPLEX_TO_COMPLEX = {
    "multiply": lambda z: z * tf.constant(C),
    "multiply_self": lambda z: z * z,
    "divide": lambda z: tf.constant(C) / z,
    "divide_num": lambda z: z / tf.constant(C),
    "exp": tf.exp,
    "log": tf.math.log,
    "sqrt": tf.sqrt,
    "square": tf.square,
    "sin": tf.sin,
    "cos": tf.cos,
    "tanh": tf.tanh,
    "conj": tf.math.conj,
    "reciprocal": tf.math.reciprocal,
    "pow": lambda z: tf.pow(z, tf.constant(C)),
    "pow_base": lambda z: tf.pow(tf.constant(C), z),
    "add_sub_neg": lambda z: -(z + 2.0) - z * 0.5,
    "matmul": lambda z: tf.matmul(z, tf.constant(C.T)),
    "matmul_adjoint": lambda z: tf.linalg.matmul(z, tf.constant(C), adjoint_b=True),
    "reduce_sum": lambda z: tf.reduce_sum(z, axis=0),
    "reshape_transpose": lambda z: tf.transpose(tf.reshape(z, [3, 2])),
}
COMPLEX_TO_REAL = {
    "abs": tf.abs,
    "real": tf.math.real,
    "imag": tf.math.imag,
    "angle": tf.math.angle,
    "abs_squared": lambda z: tf.abs(z) ** 2,
    "cast": lambda z: tf.cast(z, tf.float64),
}


def tape_gradient(fn, z, traced=False):
    def grad(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            loss = fn(v)
        return tape.gradient(loss, v)
    return (tf.function(grad) if traced else grad)(z)


@pytest.mark.parametrize("name", sorted(COMPLEX_TO_COMPLEX))
@pytest.mark.parametrize("traced", [False, True])
def test_complex_to_complex_ops(name, traced):
    op = COMPLEX_TO_COMPLEX[name]
    out_w = W if op(tf.constant(Z)).shape == W.shape else (RNG.standard_normal(op(tf.constant(Z)).shape) + 0.5j)

    def loss(v):
        return weighted(op(v), out_w)

    z = tf.constant(Z)
    got = tape_gradient(loss, z, traced)
    assert got.dtype == tf.complex128
    np.testing.assert_allclose(got.numpy(), complex_central_differences(loss, z), atol=1e-6)


@pytest.mark.parametrize("name", sorted(COMPLEX_TO_REAL))
@pytest.mark.parametrize("traced", [False, True])
def test_complex_to_real_ops(name, traced):
    op = COMPLEX_TO_REAL[name]
    w = RNG.standard_normal([2, 3])

    def loss(v):
        return tf.reduce_sum(op(v) * w)

    z = tf.constant(Z)
    np.testing.assert_allclose(tape_gradient(loss, z, traced).numpy(), complex_central_differences(loss, z),
                               atol=1e-6)


def test_real_to_complex_ops():
    x, y = tf.constant(RNG.standard_normal([2, 3])), tf.constant(RNG.standard_normal([3]))
    with tf.GradientTape() as tape:
        tape.watch([x, y])
        loss = weighted(tf.complex(x, y) * tf.constant(C), W)
    gx, gy = tape.gradient(loss, [x, y])
    # d/dx Re(conj(W) (x + iy) C) = Re(conj(W) C); d/dy = Re(conj(W) i C), y summed over its broadcast axis.
    np.testing.assert_allclose(gx.numpy(), np.real(np.conj(W) * C), atol=1e-12)
    np.testing.assert_allclose(gy.numpy(), np.real(np.conj(W) * 1j * C).sum(0), atol=1e-12)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.abs(tf.cast(x, tf.complex128) * tf.constant(C)))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.sign(x.numpy()) * np.abs(C), atol=1e-12)


def test_tf_documented_results():
    z = tf.constant([3 + 4j, -1 + 0.5j])
    with tf.GradientTape() as tape:
        tape.watch(z)
        loss = tf.reduce_sum(tf.abs(z) ** 2)
    np.testing.assert_allclose(tape.gradient(loss, z).numpy(), 2 * z.numpy())  # d|z|^2/dz = 2z
    # A complex target is seeded with ones: a holomorphic f gives conj(f'(z)).
    with tf.GradientTape() as tape:
        tape.watch(z)
        y = z * z
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), np.conj(2 * z.numpy()))
    v = tf.Variable([1.0 + 2.0j, 0.5 - 1.0j])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.real(v * tf.math.conj(v)))
    np.testing.assert_allclose(tape.gradient(loss, v).numpy(), 2 * v.numpy())


def test_complex64_gradients_stay_complex64():
    z = tf.constant(Z.astype(np.complex64))
    grad = tape_gradient(lambda v: tf.reduce_sum(tf.abs(tf.exp(v))), z)
    assert grad.dtype == tf.complex64
    want = complex_central_differences(lambda v: tf.reduce_sum(tf.abs(tf.exp(v))), tf.constant(Z))
    np.testing.assert_allclose(grad.numpy(), want, rtol=1e-4, atol=1e-4)


def test_complex_pow_values():
    base = np.array([0j, 1 + 1j, -2 + 0.5j, 3 - 1j])
    exponent = np.array([2 + 0j, 0.5 - 1j, 1.5 + 0j, -1 + 2j])
    np.testing.assert_allclose(tf.pow(tf.constant(base), tf.constant(exponent)).numpy(),
                               [0j] + [b ** e for b, e in zip(base[1:], exponent[1:])], rtol=1e-14)
    assert tf.pow(tf.constant(base.astype(np.complex64)), 2.0).dtype == tf.complex64
