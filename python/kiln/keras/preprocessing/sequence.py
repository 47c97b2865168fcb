"""keras.preprocessing.sequence: pad_sequences."""
from .._sequence_utils import pad_sequences  # noqa: F401
