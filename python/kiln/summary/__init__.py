"""kiln.summary (tf.summary): scalars, histograms, images and text for TensorBoard,
written as TF 2 writes them (event files of _writer.py; TensorBoard's "scalars",
"histograms", "images" and "text" plugins). Eagerly a summary is written when called; inside kiln.function
it is a host call of the graph, written each time the graph runs."""
import contextlib as _contextlib
import threading as _threading

import numpy as _np

from .. import dtypes as _dtypes
from ..io import _messages as _pb
from ._writer import EventFileWriter, summary_event

__all__ = ["create_file_writer", "create_noop_writer", "SummaryWriter", "scalar", "histogram", "image", "text",
           "write", "flush", "record_if", "should_record_summaries", "experimental"]

_DATA_CLASS_SCALAR, _DATA_CLASS_TENSOR, _DATA_CLASS_BLOB_SEQUENCE = 1, 2, 3
_DEFAULT_BUCKETS = 30


class _State(_threading.local):
    def __init__(self):
        self.writers = []  # the as_default stack; its last is the default writer
        self.step = None
        self.record = [True]


_state = _State()


class SummaryWriter:
    """tf.summary.SummaryWriter: what create_file_writer returns."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        self._logdir = logdir
        self._writer = EventFileWriter(logdir, max_queue, flush_millis, filename_suffix)

    def set_as_default(self, step=None):
        """Makes this the default writer from now on (until another is set)."""
        if step is not None:
            experimental.set_step(step)
        _state.writers[:] = [self]

    @_contextlib.contextmanager
    def as_default(self, step=None):
        """The default writer inside the `with` block (and the default step, if given)."""
        old_step = _state.step
        _state.writers.append(self)
        if step is not None:
            experimental.set_step(step)
        try:
            yield self
        finally:
            self.flush()
            _state.writers.pop()
            if step is not None:
                _state.step = old_step

    def init(self):
        """The file is made when the writer is; kept for TF code."""

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    def _write(self, event):
        self._writer.add_event(event)

    @property
    def _path(self):
        return self._writer.path


class _NoopWriter(SummaryWriter):
    def __init__(self):  # noqa: D107 - writes nothing
        self._writer = None

    def flush(self):
        pass

    def close(self):
        pass

    def _write(self, event):
        pass


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None):
    """A SummaryWriter for event files in `logdir` (made if missing)."""
    if hasattr(logdir, "numpy"):
        logdir = logdir.numpy().decode()
    return SummaryWriter(str(logdir), max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    return _NoopWriter()


def flush(writer=None, name=None):
    writer = writer if writer is not None else (_state.writers[-1] if _state.writers else None)
    if writer is not None:
        writer.flush()


@_contextlib.contextmanager
def record_if(condition):
    """Summaries are written only while `condition` (a bool, or a callable returning one) holds."""
    _state.record.append(condition)
    try:
        yield
    finally:
        _state.record.pop()


def should_record_summaries():
    condition = _state.record[-1]
    condition = condition() if callable(condition) else condition
    return bool(_state.writers) and not isinstance(_state.writers[-1], _NoopWriter) and bool(condition)


class experimental:  # noqa: N801 - tf.summary.experimental is a module in TF
    @staticmethod
    def set_step(step):
        """The step summaries take when called without one (an int, a tensor or a variable,
        read when each summary is written)."""
        _state.step = step

    @staticmethod
    def get_step():
        return _state.step

    @staticmethod
    @_contextlib.contextmanager
    def summary_scope(name, default_name=None, values=None):
        tag = name or default_name
        yield tag, tag


# ---- writing ---------------------------------------------------------------------------------

def _is_symbolic(value):
    return getattr(value, "_is_symbolic", False)


def _numpy(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    return _np.asarray(value)


def tensor_proto(array, dtype_name):
    """A TensorProto of a NumPy array as TF's summary ops write it (numbers in
    tensor_content, strings in string_val)."""
    proto = _pb.TensorProto(dtype=_pb.DATA_TYPE_OF[dtype_name])
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if dtype_name == "string":
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1))
    else:
        proto.tensor_content = _np.ascontiguousarray(array, dtype=_np.dtype(array.dtype).newbyteorder("<")).tobytes()
    return proto


def _emit(make_event, tensors, step):
    """Writes the event make_event(arrays..., step) to the default writer, now, or each time
    the graph runs when an input is symbolic. Returns whether it was written (a bool tensor)."""
    from .._ops import constant
    if step is None:
        step = _state.step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument or through "
                         "tf.summary.experimental.set_step()")
    if not should_record_summaries():
        return constant(False)
    writer = _state.writers[-1]
    inputs = list(tensors) + [step]
    from .. import _C
    if _C.is_tracing() or any(_is_symbolic(t) for t in inputs):  # a variable step is read when the graph runs
        from ..function import py_function
        from .._ops import convert_to_tensor

        def run(*values):
            writer._write(make_event(*[_numpy(v) for v in values[:-1]], int(_numpy(values[-1]))))
            return True

        return py_function(run, [convert_to_tensor(t) for t in inputs], _dtypes.bool)
    writer._write(make_event(*[_numpy(t) for t in tensors], int(_numpy(step))))
    return constant(True)


def scalar(name, data, step=None, description=None):
    """A float32 scalar under the "scalars" plugin."""
    def make(value, step_value):
        value = _np.asarray(value)
        if value.size != 1 or value.ndim != 0:
            raise ValueError(f"tf.summary.scalar: `data` must be a scalar, got shape {list(value.shape)} ({name})")
        return summary_event(name, tensor_proto(value.astype(_np.float32), "float32"), step_value, "scalars",
                             _DATA_CLASS_SCALAR, description)

    return _emit(make, [data], step)


def histogram_buckets(values, bucket_count=_DEFAULT_BUCKETS):
    """TensorBoard's [bucket_count, 3] float64 (left edge, right edge, count) of `values`:
    equal-width buckets from min to max, the max in the last; one value all in the last
    bucket, every edge at that value; no values: zeros."""
    data = _np.asarray(values, _np.float64).reshape(-1)
    if bucket_count == 0 or data.size == 0:
        return _np.zeros([bucket_count, 3], _np.float64)
    low, high = data.min(), data.max()
    if high == low:
        counts = _np.zeros(bucket_count)
        counts[-1] = data.size
        return _np.stack([_np.full(bucket_count, low), _np.full(bucket_count, low), counts], axis=1)
    width = (high - low) / bucket_count
    index = _np.minimum(_np.floor((data - low) / width).astype(_np.int64), bucket_count - 1)
    counts = _np.bincount(index, minlength=bucket_count).astype(_np.float64)
    edges = _np.linspace(low, high, bucket_count + 1)
    edges[-1] = high
    return _np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(name, data, step=None, buckets=None, description=None):
    """The distribution of `data` in `buckets` (30) equal-width buckets, "histograms" plugin."""
    bucket_count = _DEFAULT_BUCKETS if buckets is None else int(buckets)

    def make(values, step_value):
        return summary_event(name, tensor_proto(histogram_buckets(values, bucket_count), "float64"), step_value,
                             "histograms", _DATA_CLASS_TENSOR, description)

    return _emit(make, [data], step)


def _as_uint8(images):
    """tf.image.convert_image_dtype(images, uint8, saturate=True): floats in [0, 1] scaled
    by 255.5 and clamped (then truncated), wider integers shifted down to 8 bits."""
    if images.dtype == _np.uint8:
        return images
    if images.dtype.kind == "f":
        return _np.clip(images.astype(_np.float64) * 255.5, 0, 255).astype(_np.uint8)
    if images.dtype.kind in "iu":
        scale = (int(_np.iinfo(images.dtype).max) + 1) // 256
        return _np.clip(images.astype(_np.int64) // scale, 0, 255).astype(_np.uint8)
    if images.dtype == _np.bool_:
        return images.astype(_np.uint8) * 255
    raise TypeError(f"tf.summary.image: `data` of dtype {images.dtype} is not an image")


def image(name, data, step=None, max_outputs=3, description=None):
    """Up to `max_outputs` images of `data` ([k, height, width, channels], channels 1, 2, 3
    or 4; uint8, or floats in [0, 1]) as PNGs under the "images" plugin: a string tensor
    [width, height, png...] as TensorBoard's image summary writes."""
    from .._C import encode_png
    shape = getattr(data, "shape", None)
    rank = len(shape) if shape is not None and getattr(shape, "rank", len(shape)) is not None else None
    if rank is not None and rank != 4:
        raise ValueError(f"Tensor data must have rank 4. Received rank {rank}, shape {tuple(shape)}")
    limit = int(_numpy(max_outputs))
    if limit < 0:
        from .. import errors
        raise errors.InvalidArgumentError(f"max_outputs must be non-negative, got {limit}")

    def make(values, step_value):
        values = _np.asarray(values)
        if values.ndim != 4:
            raise ValueError(f"Tensor data must have rank 4. Received rank {values.ndim}, shape {values.shape}")
        if values.shape[3] not in (1, 2, 3, 4):
            from .. import errors
            raise errors.InvalidArgumentError(
                f"image must have 1, 2, 3, or 4 channels, got {values.shape[3]} ({name})")
        pixels = _as_uint8(values)
        encoded = [str(values.shape[2]).encode(), str(values.shape[1]).encode()]
        encoded += [encode_png(_np.ascontiguousarray(frame)) for frame in pixels[:limit]]
        return summary_event(name, tensor_proto(_np.array(encoded, dtype=object), "string"), step_value, "images",
                             _DATA_CLASS_BLOB_SEQUENCE, description)

    return _emit(make, [data], step)


def text(name, data, step=None, description=None):
    """A string tensor (Markdown) under the "text" plugin."""
    def make(value, step_value):
        value = _np.asarray(value, dtype=object)
        return summary_event(name, tensor_proto(value, "string"), step_value, "text", _DATA_CLASS_TENSOR,
                             description)

    return _emit(make, [data], step)


def write(tag, tensor, step=None, metadata=None, name=None):
    """A tensor under `tag` with the given SummaryMetadata (or its serialized bytes)."""
    if isinstance(metadata, (bytes, bytearray)):
        metadata = _pb.SummaryMetadata.FromString(bytes(metadata))

    def make(value, step_value):
        value = _np.asarray(value)
        dtype = "string" if value.dtype == object or value.dtype.kind in "SU" else \
            ("bool" if value.dtype == _np.bool_ else value.dtype.name)
        event = summary_event(tag, tensor_proto(value.astype(object) if dtype == "string" else value, dtype),
                              step_value, "", 0)
        event.summary.value[0].ClearField("metadata")
        if metadata is not None:
            event.summary.value[0].metadata.CopyFrom(metadata)
        return event

    return _emit(make, [tensor], step)
