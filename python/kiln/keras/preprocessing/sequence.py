"""keras.preprocessing.sequence: pad_sequences, make_sampling_table, skipgrams, TimeseriesGenerator."""
from .._sequence_utils import pad_sequences  # noqa: F401
from .._sequence_more import TimeseriesGenerator, make_sampling_table, skipgrams  # noqa: F401
