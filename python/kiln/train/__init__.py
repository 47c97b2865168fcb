"""kiln.train (tf.train): tf.train.Example's messages, and checkpoints in TF's
object-based TensorBundle format (_checkpoint.py, _bundle.py, _table.py)."""
from ..io._messages import (BytesList, Example, Feature, FeatureList, FeatureLists, Features,  # noqa: F401
                            FloatList, Int64List, SequenceExample)
from ._checkpoint import (Checkpoint, CheckpointManager, CheckpointReader, CheckpointState,  # noqa: F401
                          get_checkpoint_state, latest_checkpoint, list_variables, load_checkpoint, load_variable,
                          update_checkpoint_state)


class CheckpointOptions:
    """tf.train.CheckpointOptions: accepted; Kiln writes and reads on the calling thread."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False):
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = experimental_enable_async_checkpoint
        self.enable_async = enable_async


from ._averages import ExponentialMovingAverage, checkpoints_iterator  # noqa: E402,F401
