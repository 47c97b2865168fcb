"""tf.signal's FFTs (issue #42): values against NumPy's np.fft in float64 for every length kind (radix 2, 3,
4, 5 and Bluestein), batched and awkward shapes, empty tensors, fft_length cropping and padding, errors,
gradients against central differences (real and imaginary parts), traced equal to eager."""
import numpy as np
import pytest

import kiln as tf

LENGTHS = [1, 2, 3, 5, 7, 8, 12, 16, 17, 97, 100, 128, 1000, 1024]
RNG = np.random.default_rng(42)


def random_complex(shape, dtype=np.complex128):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def relative_error(got, want):
    scale = np.linalg.norm(want)
    return np.linalg.norm(got - want) / (scale if scale else 1.0)


@pytest.mark.parametrize("n", LENGTHS)
def test_fft_and_ifft_against_numpy_every_length(n):
    x64 = random_complex([3, n], np.complex64)
    x128 = x64.astype(np.complex128)
    want = np.fft.fft(x128)
    # float32 is computed in float32 (as TF's kernels): within a few units of roundoff times log n.
    got = tf.signal.fft(tf.constant(x64))
    assert got.dtype == tf.complex64
    assert relative_error(got.numpy(), want) < 2e-6
    assert relative_error(tf.signal.fft(tf.constant(x128)).numpy(), want) < 1e-14
    assert relative_error(tf.signal.ifft(tf.constant(x64)).numpy(), np.fft.ifft(x128)) < 2e-6
    assert relative_error(tf.signal.ifft(tf.constant(x128)).numpy(), np.fft.ifft(x128)) < 1e-14


@pytest.mark.parametrize("n", LENGTHS)
def test_rfft_and_irfft_against_numpy_every_length(n):
    x = RNG.standard_normal([2, n])
    got = tf.signal.rfft(tf.constant(x.astype(np.float32)))
    assert got.dtype == tf.complex64 and got.shape == (2, n // 2 + 1)
    assert relative_error(got.numpy(), np.fft.rfft(x.astype(np.float32).astype(np.float64))) < 2e-6
    assert relative_error(tf.signal.rfft(tf.constant(x)).numpy(), np.fft.rfft(x)) < 1e-14
    spectrum = np.fft.rfft(x)
    back = tf.signal.irfft(tf.constant(spectrum), [n])
    assert back.dtype == tf.float64
    np.testing.assert_allclose(back.numpy(), np.fft.irfft(spectrum, n), atol=1e-13)


def test_multi_dim_transforms_against_numpy():
    x = random_complex([2, 7, 1, 9])
    np.testing.assert_allclose(tf.signal.fft2d(tf.constant(x)).numpy(), np.fft.fft2(x), atol=1e-12)
    np.testing.assert_allclose(tf.signal.ifft2d(tf.constant(x)).numpy(), np.fft.ifft2(x), atol=1e-13)
    np.testing.assert_allclose(tf.signal.fft3d(tf.constant(x)).numpy(), np.fft.fftn(x, axes=(1, 2, 3)),
                               atol=1e-12)
    np.testing.assert_allclose(tf.signal.ifft3d(tf.constant(x)).numpy(), np.fft.ifftn(x, axes=(1, 2, 3)),
                               atol=1e-13)
    r = RNG.standard_normal([3, 6, 10])
    np.testing.assert_allclose(tf.signal.rfft2d(tf.constant(r)).numpy(), np.fft.rfft2(r), atol=1e-12)
    np.testing.assert_allclose(tf.signal.rfft3d(tf.constant(r)).numpy(), np.fft.rfftn(r), atol=1e-12)
    spec = np.fft.rfft2(r)
    np.testing.assert_allclose(tf.signal.irfft2d(tf.constant(spec), [6, 10]).numpy(), r, atol=1e-13)
    np.testing.assert_allclose(tf.signal.irfft3d(tf.constant(np.fft.rfftn(r)), [3, 6, 10]).numpy(), r, atol=1e-13)


def test_fft_length_crops_and_pads_as_tf():
    x = RNG.standard_normal([4, 10])
    for n in (4, 7, 10, 16, 25):
        np.testing.assert_allclose(tf.signal.rfft(tf.constant(x), [n]).numpy(), np.fft.rfft(x, n), atol=1e-12)
    for s in ([3, 8], [6, 5], [2, 30]):
        np.testing.assert_allclose(tf.signal.rfft2d(tf.constant(x), s).numpy(), np.fft.rfft2(x, s), atol=1e-12)
    y = random_complex([4, 6])
    for n in (1, 2, 5, 10, 11, 20):
        # irfft crops / pads the half spectrum to n // 2 + 1 bins; the imaginary parts of the zero and
        # Nyquist bins are ignored (as NumPy's and TF's).
        np.testing.assert_allclose(tf.signal.irfft(tf.constant(y), [n]).numpy(), np.fft.irfft(y, n), atol=1e-12)
    for s in ([3, 4], [5, 9], [8, 12]):
        np.testing.assert_allclose(tf.signal.irfft2d(tf.constant(y), s).numpy(), np.fft.irfft2(y, s), atol=1e-12)
    # The default fft_length of irfft is 2 (n - 1).
    assert tf.signal.irfft(tf.constant(y)).shape == (4, 10)
    np.testing.assert_allclose(tf.signal.irfft(tf.constant(y)).numpy(), np.fft.irfft(y), atol=1e-12)
    # fft_length as a tensor, as TF's tutorials pass it.
    np.testing.assert_allclose(tf.signal.rfft(tf.constant(x), tf.constant([8])).numpy(), np.fft.rfft(x, 8),
                               atol=1e-12)


def test_empty_tensors():
    assert tf.signal.fft(tf.zeros([0, 8], tf.complex64)).shape == (0, 8)
    assert tf.signal.fft(tf.zeros([3, 0], tf.complex64)).shape == (3, 0)
    assert tf.signal.rfft(tf.zeros([0, 8])).shape == (0, 5)
    assert tf.signal.irfft(tf.zeros([2, 0], tf.complex64), [6]).shape == (2, 6)
    np.testing.assert_array_equal(tf.signal.irfft(tf.zeros([2, 0], tf.complex64), [6]).numpy(), np.zeros([2, 6]))
    np.testing.assert_array_equal(tf.signal.rfft(tf.zeros([2, 0]), [0]).numpy(), np.zeros([2, 1]))


def test_errors_as_tf():
    with pytest.raises(TypeError, match="DataType float32 not in list of allowed values: complex64, complex128"):
        tf.signal.fft(tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="not in list of allowed values: float32, float64"):
        tf.signal.rfft(tf.constant([1, 2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="rank at least 2"):
        tf.signal.fft2d(tf.constant([1 + 1j, 2 + 0j]))
    with pytest.raises(ValueError, match="fft_length must have 2 elements"):
        tf.signal.rfft2d(tf.zeros([4, 4]), [4])


def test_fftshift_as_numpy():
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, 1, [0, 1], (1,)):
        np.testing.assert_array_equal(tf.signal.fftshift(tf.constant(x), axes).numpy(), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(tf.signal.ifftshift(tf.constant(x), axes).numpy(), np.fft.ifftshift(x, axes))


def complex_central_differences(loss, z, eps=1e-6):
    """dL/dRe(z) + i dL/dIm(z), TF's convention for the gradient of a real loss."""
    value = z.numpy()
    grad = np.zeros(value.shape, np.complex128)
    for idx in np.ndindex(value.shape):
        for unit in (1.0, 1j):
            parts = []
            for sign in (1, -1):
                moved = value.copy()
                moved[idx] += sign * eps * unit
                parts.append(float(loss(tf.constant(moved))))
            grad[idx] += unit * (parts[0] - parts[1]) / (2 * eps)
    return grad


def weighted(out, w):
    """sum(Re(conj(w) out)): a real loss reading every part of a complex output."""
    return tf.reduce_sum(tf.math.real(out) * np.real(w) + tf.math.imag(out) * np.imag(w))


@pytest.mark.parametrize("name,shape", [("fft", [2, 5]), ("ifft", [7]), ("fft2d", [3, 4]), ("ifft2d", [2, 3, 3]),
                                        ("fft3d", [2, 2, 3]), ("ifft3d", [2, 3, 2])])
def test_complex_fft_gradients_against_central_differences(name, shape):
    fn = getattr(tf.signal, name)
    z = tf.constant(random_complex(shape))
    w = random_complex(shape)

    def loss(v):
        return weighted(fn(v), w)

    with tf.GradientTape() as tape:
        tape.watch(z)
        value = loss(z)
    grad = tape.gradient(value, z)
    assert grad.dtype == tf.complex128
    np.testing.assert_allclose(grad.numpy(), complex_central_differences(loss, z), atol=1e-7)


@pytest.mark.parametrize("name,shape,length", [("rfft", [3, 8], [8]), ("rfft", [9], [7]), ("rfft", [5], [12]),
                                               ("rfft2d", [4, 6], [3, 7]), ("rfft3d", [2, 3, 4], [2, 4, 5])])
def test_rfft_gradients_against_central_differences(name, shape, length):
    fn = getattr(tf.signal, name)
    x = tf.constant(RNG.standard_normal(shape))
    w = random_complex(fn(x, length).shape)
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = weighted(fn(x, length), w)
    grad = tape.gradient(value, x)
    from numeric_grad import central_differences
    np.testing.assert_allclose(grad.numpy(), central_differences(lambda v: weighted(fn(v, length), w), [x], 0),
                               atol=1e-7)


@pytest.mark.parametrize("name,shape,length", [("irfft", [3, 5], [8]), ("irfft", [6], [7]), ("irfft", [3], [9]),
                                               ("irfft2d", [4, 4], [5, 6]), ("irfft3d", [2, 3, 3], [2, 3, 4])])
def test_irfft_gradients_against_central_differences(name, shape, length):
    fn = getattr(tf.signal, name)
    y = tf.constant(random_complex(shape))
    w = RNG.standard_normal(fn(y, length).shape)

    def loss(v):
        return tf.reduce_sum(fn(v, length) * w)

    with tf.GradientTape() as tape:
        tape.watch(y)
        value = loss(y)
    np.testing.assert_allclose(tape.gradient(value, y).numpy(), complex_central_differences(loss, y), atol=1e-7)


def test_traced_equals_eager_with_gradients():
    x = tf.constant(RNG.standard_normal([4, 16]).astype(np.float32))

    def step(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            spectrum = tf.signal.rfft(v, [16])
            power = tf.reduce_sum(tf.abs(spectrum) ** 2)
        return spectrum, tape.gradient(power, v)

    eager = step(x)
    traced = tf.function(step)(x)
    np.testing.assert_allclose(traced[0].numpy(), eager[0].numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(traced[1].numpy(), eager[1].numpy(), rtol=1e-5, atol=1e-5)
    # Parseval: the half spectrum's power is (16 sum x^2 + X_0^2 + X_8^2) / 2, so its gradient is
    # 16 x + X_0 + X_8 (-1)^j.
    xd = x.numpy().astype(np.float64)
    full = np.fft.rfft(xd)
    want = 16 * xd + full[:, :1].real + full[:, 8:9].real * (-1.0) ** np.arange(16)
    np.testing.assert_allclose(eager[1].numpy(), want, rtol=1e-4, atol=1e-4)
