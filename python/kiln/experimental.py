"""kiln.experimental: DLPack (tf.experimental.dlpack)."""
import types as _types

from . import _C

dlpack = _types.SimpleNamespace(to_dlpack=_C.to_dlpack, from_dlpack=_C.from_dlpack)

from .ragged_shape import DynamicRaggedShape, RowPartition  # noqa: E402,F401 - tf.experimental's names
from .data._iterator import Optional  # noqa: E402,F401 - tf.experimental.Optional is tf.data.experimental's
