"""kiln.signal (tf.signal): the FFTs (engine ops, src/ops/fft_ops.cpp, Kiln's own mixed-radix and Bluestein
plans), fftshift, frames and overlap-add, windows, STFT and its inverse, mel weight matrices, MFCCs and DCTs,
with TF 2.15's names, arguments and defaults."""
from ._dct import dct, idct  # noqa: F401
from ._fft import (fft, fft2d, fft3d, fftshift, ifft, ifft2d, ifft3d, ifftshift, irfft, irfft2d,  # noqa: F401
                   irfft3d, rfft, rfft2d, rfft3d)
from ._frames import frame, overlap_and_add  # noqa: F401
from ._mel import linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms  # noqa: F401
from ._spectral import inverse_stft, inverse_stft_window_fn, stft  # noqa: F401
from ._windows import (hamming_window, hann_window, kaiser_bessel_derived_window, kaiser_window,  # noqa: F401
                       vorbis_window)
from ._mdct import inverse_mdct, mdct  # noqa: F401,E402
