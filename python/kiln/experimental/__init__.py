"""kiln.experimental: DLPack (tf.experimental.dlpack), the ragged shapes, and tf.experimental.numpy
(`numpy`, loaded on first use: `kiln.experimental.numpy` or `import kiln.experimental.numpy`)."""
import importlib as _importlib
import types as _types

from .. import _C

dlpack = _types.SimpleNamespace(to_dlpack=_C.to_dlpack, from_dlpack=_C.from_dlpack)

from ..ragged_shape import DynamicRaggedShape, RowPartition  # noqa: E402,F401 - tf.experimental's names


def __getattr__(name):
    if name == "numpy":
        return _importlib.import_module(".numpy", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
