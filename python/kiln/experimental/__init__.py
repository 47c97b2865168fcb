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


from ..data._iterator import Optional  # noqa: E402,F401 - tf.experimental.Optional is tf.data.experimental's


import contextlib as _contextlib  # noqa: E402


@_contextlib.contextmanager
def async_scope():
    """TF runs the block's ops asynchronously, raising their errors by the scope's end at the latest; Kiln runs
    every op synchronously, so an error is raised where its op runs, inside the block."""
    yield


def async_clear_error():
    """Clears the error an async scope left behind: Kiln's ops run synchronously and leave none."""


@_contextlib.contextmanager
def function_executor_type(executor_type):
    """The executor tf.functions run on inside the block: Kiln has one (its plans' executor), whatever is asked."""
    yield
