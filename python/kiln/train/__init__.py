"""kiln.train (tf.train): tf.train.Example's messages, and checkpoints (_checkpoint.py)."""
from ..io._messages import (BytesList, Example, Feature, FeatureList, FeatureLists, Features,  # noqa: F401
                            FloatList, Int64List, SequenceExample)
