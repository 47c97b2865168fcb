"""kiln.data (tf.data): input pipelines on the engine's Dataset (_dataset.py), the
transformations made in Python (_transforms.py), file sources (_readers.py) and
tf.data.experimental (experimental.py)."""
from ._dataset import Dataset, AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY  # noqa: F401
from ._options import Options, AutotuneOptions, DistributeOptions, OptimizationOptions, ThreadingOptions  # noqa: F401
from ._transforms import DatasetSpec  # noqa: F401
from ._readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset  # noqa: F401
from ._iterator import OwnedIterator as Iterator  # noqa: F401
from . import experimental  # noqa: F401

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "Options", "DatasetSpec",
           "TextLineDataset", "TFRecordDataset", "FixedLengthRecordDataset", "Iterator", "experimental"]
