"""tf.signal.linear_to_mel_weight_matrix (HTK's mel scale, triangles linear in mel) and
mfccs_from_log_mel_spectrograms, computed in the matrix's dtype as TF's ops do."""
import numpy as _np

from .. import dtypes as _dtypes
from .._array_ops import _tensor
from .._ops import cast, constant
from ._dct import dct

_MEL_BREAK_FREQUENCY_HERTZ = 700.0
_MEL_HIGH_FREQUENCY_Q = 1127.0


def _hertz_to_mel(hertz, t):
    return t(_MEL_HIGH_FREQUENCY_Q) * _np.log(t(1.0) + hertz / t(_MEL_BREAK_FREQUENCY_HERTZ))


def _linspace(start, stop, num, t):
    """TF's linspace: start + i * delta, the last value `stop` itself."""
    if num == 1:
        return _np.array([start], t)
    delta = (t(stop) - t(start)) / t(num - 1)
    values = t(start) + _np.arange(num, dtype=t) * delta
    values[-1] = stop
    return values


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000,
                                lower_edge_hertz=125.0, upper_edge_hertz=3800.0, dtype=_dtypes.float32, name=None):
    """[num_spectrogram_bins, num_mel_bins]: a linear spectrogram (bins 0 .. sample_rate / 2) times this is a
    mel spectrogram. The DC bin gets no weight, as HTK's."""
    dtype = _dtypes.as_dtype(dtype)
    if num_mel_bins <= 0:
        raise ValueError(f"num_mel_bins must be positive. Got: {num_mel_bins}")
    if lower_edge_hertz < 0.0:
        raise ValueError(f"lower_edge_hertz must be non-negative. Got: {lower_edge_hertz}")
    if lower_edge_hertz >= upper_edge_hertz:
        raise ValueError(f"lower_edge_hertz {lower_edge_hertz:.1f} >= upper_edge_hertz {upper_edge_hertz:.1f}")
    if sample_rate <= 0.0:
        raise ValueError(f"sample_rate must be positive. Got: {sample_rate}")
    if upper_edge_hertz > sample_rate / 2:
        raise ValueError(f"upper_edge_hertz must not be larger than the Nyquist frequency (sample_rate / 2). "
                         f"Got {upper_edge_hertz} for sample_rate: {sample_rate}")
    if not dtype.is_floating:
        raise ValueError(f"dtype must be a floating point type. Got: {dtype}")
    t = _np.float64 if dtype.name == "float64" else _np.float32
    nyquist = t(sample_rate) / t(2.0)
    linear = _linspace(0.0, nyquist, num_spectrogram_bins, t)[1:]
    bins_mel = _hertz_to_mel(linear, t)[:, None]
    edges = _linspace(_hertz_to_mel(t(lower_edge_hertz), t), _hertz_to_mel(t(upper_edge_hertz), t),
                      num_mel_bins + 2, t)
    lower, center, upper = edges[None, :-2], edges[None, 1:-1], edges[None, 2:]
    rising = (bins_mel - lower) / (center - lower)
    falling = (upper - bins_mel) / (upper - center)
    weights = _np.maximum(t(0.0), _np.minimum(rising, falling)).astype(t)
    matrix = _np.concatenate([_np.zeros([1, num_mel_bins], t), weights], axis=0)
    out = constant(matrix)
    return out if dtype.name in ("float32", "float64") else cast(out, dtype)


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """[..., num_mel_bins] log mel spectrograms -> MFCCs: the orthonormal-style DCT-II scaled by
    1 / sqrt(2 num_mel_bins), as TF's."""
    x = _tensor(log_mel_spectrograms)
    bins = x.shape.as_list()[-1] if x.shape.rank else None
    if bins is None:
        raise ValueError(f"kiln.signal.mfccs_from_log_mel_spectrograms needs the last dim known, got {x.shape}")
    scale = _np.dtype(x.dtype.name).type(1.0) / _np.sqrt(_np.dtype(x.dtype.name).type(2.0 * bins))
    return dct(x, type=2) * constant(scale, x.dtype)
