"""kiln.audio (tf.audio): decode_wav and encode_wav, the engine's DecodeWav and EncodeWav ops
(src/ops/audio_ops.cpp, src/ops/wav_format.cpp): 16-bit PCM WAV files, the only format TF reads and writes,
as float32 samples in [-1, 1) and an int32 sample rate. A file TF refuses raises InvalidArgumentError."""
import collections

from . import _C
from . import dtypes as _dtypes
from ._ops import convert_to_tensor

__all__ = ["decode_wav", "encode_wav"]

# What TF's generated wrapper returns.
DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def _int_attr(value, name):
    if isinstance(value, _C.Tensor):
        value = value.numpy()
    try:
        return int(value)
    except (TypeError, ValueError):
        raise TypeError(f"Expected int for argument '{name}' not {value!r}.") from None


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """(audio float32 [samples, channels], sample_rate int32) of the WAV file in the string scalar `contents`.
    desired_channels / desired_samples -1 keep the file's; more channels repeat its last one, more samples pad
    with zeros, fewer cut."""
    if not isinstance(contents, _C.Tensor):
        contents = convert_to_tensor(contents, _dtypes.string)
    return DecodeWav(*_C.decode_wav(contents, _int_attr(desired_channels, "desired_channels"),
                                    _int_attr(desired_samples, "desired_samples")))


def encode_wav(audio, sample_rate, name=None):
    """The WAV file (a string scalar) of float32 `audio` [frames, channels] at `sample_rate` (an int32 scalar):
    16-bit PCM, each sample scaled by 32768, rounded and clamped."""
    audio = convert_to_tensor(audio, _dtypes.float32)
    sample_rate = convert_to_tensor(sample_rate, _dtypes.int32)
    return _C.encode_wav(audio, sample_rate)
