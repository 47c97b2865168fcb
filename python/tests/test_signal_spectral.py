"""tf.signal's compositions (issue #42): frame, overlap_and_add, windows, stft / inverse_stft, mel weight
matrices, MFCCs and DCTs against NumPy references written out in float64, TF's defaults and errors,
gradients through stft, traced equal to eager."""
import numpy as np
import pytest

import kiln as tf

RNG = np.random.default_rng(3)


def np_frame(x, length, step):
    count = max(0, 1 + (x.shape[-1] - length) // step)
    return np.stack([x[..., i * step:i * step + length] for i in range(count)], axis=-2) if count else \
        np.zeros(x.shape[:-1] + (0, length))


def np_window(n, periodic, a, b):
    if n == 1:
        return np.ones(1)
    denominator = n - 1 + (1 if periodic and n % 2 == 0 else 0)
    return a - b * np.cos(2 * np.pi * np.arange(n) / denominator)


def test_frame_and_pad_end():
    x = RNG.standard_normal([2, 23])
    np.testing.assert_array_equal(tf.signal.frame(x, 5, 3).numpy(), np_frame(x, 5, 3))
    assert tf.signal.frame(x, 5, 3).shape == (2, 7, 5)
    padded = tf.signal.frame(x, 5, 3, pad_end=True, pad_value=-1.0).numpy()
    assert padded.shape == (2, 8, 5)  # ceil(23 / 3) frames
    np.testing.assert_array_equal(padded[:, 7], np.concatenate([x[:, 21:], -np.ones([2, 3])], axis=1))
    # Another axis: [4, samples, 2] framed along axis 1.
    y = RNG.standard_normal([4, 10, 2])
    got = tf.signal.frame(y, 4, 2, axis=1).numpy()
    assert got.shape == (4, 4, 4, 2)
    np.testing.assert_array_equal(got[:, 1], y[:, 2:6])
    assert tf.signal.frame(x, 30, 3).shape == (2, 0, 30)


def test_overlap_and_add_inverts_rectangular_frames():
    x = RNG.standard_normal([3, 20])
    frames = tf.signal.frame(x, 4, 4)
    np.testing.assert_allclose(tf.signal.overlap_and_add(frames, 4).numpy(), x, atol=0)
    frames = RNG.standard_normal([2, 5, 7])
    want = np.zeros([2, 4 * 3 + 7])
    for i in range(5):
        want[:, i * 3:i * 3 + 7] += frames[:, i]
    np.testing.assert_allclose(tf.signal.overlap_and_add(frames, 3).numpy(), want, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 7, 8, 255, 256])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows(n, periodic):
    hann = tf.signal.hann_window(n, periodic=periodic)
    assert hann.dtype == tf.float32 and hann.shape == (n,)
    np.testing.assert_allclose(hann.numpy(), np_window(n, periodic, 0.5, 0.5), atol=1e-6)
    hamming = tf.signal.hamming_window(n, periodic=periodic, dtype=tf.float64)
    np.testing.assert_allclose(hamming.numpy(), np_window(n, periodic, 0.54, 0.46), atol=1e-14)
    with pytest.raises(ValueError, match="floating point"):
        tf.signal.hann_window(4, dtype=tf.int32)


def test_stft_defaults_against_numpy():
    x = RNG.standard_normal([2, 1000]).astype(np.float32)
    got = tf.signal.stft(x, frame_length=255, frame_step=128)
    assert got.dtype == tf.complex64 and got.shape == (2, 6, 129)  # fft_length 256, pad_end False
    frames = np_frame(x.astype(np.float64), 255, 128) * np_window(255, True, 0.5, 0.5)
    want = np.fft.rfft(frames, 256)
    np.testing.assert_allclose(got.numpy(), want, atol=2e-4 * np.abs(want).max())
    explicit = tf.signal.stft(x, 64, 16, fft_length=100, window_fn=tf.signal.hamming_window, pad_end=True)
    frames = np.concatenate([x, np.zeros([2, 56], np.float32)], axis=1).astype(np.float64)  # 63 frames
    want = np.fft.rfft(np_frame(frames, 64, 16) * np_window(64, True, 0.54, 0.46), 100)
    assert explicit.shape == (2, 63, 51)
    np.testing.assert_allclose(explicit.numpy(), want, atol=1e-4 * np.abs(want).max())


def test_inverse_stft_reconstructs():
    x = RNG.standard_normal([3, 2048])
    spectrum = tf.signal.stft(x, 256, 64)
    back = tf.signal.inverse_stft(spectrum, 256, 64, window_fn=tf.signal.inverse_stft_window_fn(64))
    assert back.shape == (3, 2048)
    # Away from the edges (where fewer than four windows overlap) the signal comes back.
    np.testing.assert_allclose(back.numpy()[:, 256:-256], x[:, 256:-256], atol=1e-10)


def test_stft_gradient_and_trace():
    x = tf.constant(RNG.standard_normal([300]))

    def power(v):
        return tf.reduce_sum(tf.abs(tf.signal.stft(v, 64, 32)) ** 2)

    with tf.GradientTape() as tape:
        tape.watch(x)
        value = power(x)
    grad = tape.gradient(value, x).numpy()
    from numeric_grad import central_differences
    np.testing.assert_allclose(grad, central_differences(power, [x], 0), rtol=1e-6, atol=1e-6)
    traced = tf.function(lambda v: tf.signal.stft(v, 64, 32))(x)
    np.testing.assert_allclose(traced.numpy(), tf.signal.stft(x, 64, 32).numpy(), atol=1e-12)


def np_mel_matrix(bins, spectrogram_bins, rate, low, high):
    def mel(f):
        return 1127.0 * np.log(1.0 + f / 700.0)
    freqs = mel(np.linspace(0, rate / 2, spectrogram_bins)[1:])[:, None]
    edges = np.linspace(mel(low), mel(high), bins + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0, np.minimum((freqs - lower) / (center - lower), (upper - freqs) / (upper - center)))
    return np.vstack([np.zeros([1, bins]), weights])


def test_linear_to_mel_weight_matrix():
    got = tf.signal.linear_to_mel_weight_matrix()
    assert got.shape == (129, 20) and got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), np_mel_matrix(20, 129, 8000, 125.0, 3800.0), atol=2e-5)
    got = tf.signal.linear_to_mel_weight_matrix(80, 513, 16000, 80.0, 7600.0, dtype=tf.float64)
    np.testing.assert_allclose(got.numpy(), np_mel_matrix(80, 513, 16000, 80.0, 7600.0), atol=1e-12)
    with pytest.raises(ValueError, match="Nyquist"):
        tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0)
    with pytest.raises(ValueError, match="num_mel_bins must be positive"):
        tf.signal.linear_to_mel_weight_matrix(0)


def np_dct(x, kind, norm=None):
    n = x.shape[-1]
    k = np.arange(n)[:, None]
    if kind == 1:
        basis = 2 * np.cos(np.pi * k * np.arange(n)[None, :] / (n - 1))
        basis[:, 0] = 1
        basis[:, -1] = (-1.0) ** np.arange(n)
        return x @ basis.T
    if kind == 2:
        out = x @ (2 * np.cos(np.pi * k * (2 * np.arange(n)[None, :] + 1) / (2 * n))).T
        if norm == "ortho":
            out = out * np.r_[np.sqrt(1 / (4 * n)), np.full(n - 1, np.sqrt(1 / (2 * n)))]
        return out
    y = x * np.r_[1 / np.sqrt(n), np.full(n - 1, np.sqrt(2 / n) / 2)] if norm == "ortho" else x
    basis = 2 * np.cos(np.pi * np.arange(n)[None, :] * (2 * k + 1) / (2 * n))
    basis[:, 0] = 1
    return y @ basis.T


@pytest.mark.parametrize("kind", [1, 2, 3])
@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_against_numpy(kind, norm):
    if kind == 1 and norm:
        with pytest.raises(ValueError, match="Normalization is not supported"):
            tf.signal.dct(tf.zeros([4]), type=1, norm=norm)
        return
    x = RNG.standard_normal([3, 13])
    got = tf.signal.dct(tf.constant(x), type=kind, norm=norm).numpy()
    np.testing.assert_allclose(got, np_dct(x, kind, norm), atol=1e-11)
    if kind != 1:
        back = tf.signal.idct(tf.constant(got), type=kind, norm=norm).numpy()
        np.testing.assert_allclose(back, x * (1 if norm else 2 * 13), atol=1e-10)


def test_mfccs():
    log_mel = RNG.standard_normal([2, 5, 40]).astype(np.float32)
    got = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)
    want = np_dct(log_mel.astype(np.float64), 2) / np.sqrt(2 * 40)
    np.testing.assert_allclose(got.numpy(), want, atol=1e-5)
