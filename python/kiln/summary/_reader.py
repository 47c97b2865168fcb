"""Reading event files back: every summary under a log directory, by run and tag, decoded
to plain Python (what kiln.board draws and the tests check).

Reads what TF 2 writes (tensor summaries with a plugin name) and the older forms other
writers still use (simple_value scalars, HistogramProto histograms). A file cut short
(a writer still running) gives its whole records and stops there, as TensorBoard does."""
import collections
import os

import numpy as np

from .. import errors
from ..io import _messages as pb
from ..io._tfrecord import read_records

__all__ = ["Series", "Images", "read_logdir", "event_files", "read_events", "tensor_to_numpy"]

# TF DataType numbers -> NumPy (little-endian tensor_content).
_NUMPY_OF = {1: "<f4", 2: "<f8", 3: "<i4", 4: "u1", 5: "<i2", 6: "i1", 9: "<i8", 10: "?", 19: "<f2"}
# Where each DataType keeps its values when tensor_content is empty.
_VALUES_FIELD = {1: "float_val", 2: "double_val", 3: "int_val", 4: "int_val", 5: "int_val", 6: "int_val",
                 9: "int64_val", 10: "bool_val", 19: "half_val"}


class Series:
    """One tag of one run: `kind` ("scalars", "histograms", "text" or another plugin's name) and
    its points (step, wall_time, value) in the order written. A scalar's value is a float, a
    histogram's a [k, 3] array (left edge, right edge, count), a text's a str, an image
    summary's an Images."""
    __slots__ = ("kind", "points", "description")

    def __init__(self, kind, description=""):
        self.kind = kind
        self.points = []
        self.description = description

    def __repr__(self):
        return f"Series(kind={self.kind!r}, {len(self.points)} points)"


class Images(collections.namedtuple("Images", ["width", "height", "pngs"])):
    """An image summary's value: the images' width and height, and each image's PNG bytes."""
    __slots__ = ()


def event_files(logdir):
    """(run, path) of every event file under `logdir`, the run being the directory relative to
    it ("." for logdir itself), sorted by run then file name (the files' creation order)."""
    found = []
    for directory, _, names in os.walk(logdir):
        run = os.path.relpath(directory, logdir).replace(os.sep, "/")
        found += [(run, os.path.join(directory, n)) for n in names if "tfevents" in n]
    return sorted(found)


def read_events(path):
    """The Event protos of one file; a damaged or unfinished tail ends it quietly."""
    try:
        for record in read_records(path):
            yield pb.Event.FromString(record)
    except errors.DataLossError:
        return


def tensor_to_numpy(proto):
    """A TensorProto's value as a NumPy array (strings as an object array of bytes)."""
    shape = [d.size for d in proto.tensor_shape.dim]
    if proto.dtype == 7:
        return np.array(list(proto.string_val), dtype=object).reshape(shape)
    if proto.dtype not in _NUMPY_OF:
        raise ValueError(f"Unsupported tensor dtype {proto.dtype} in a summary")
    dtype = np.dtype(_NUMPY_OF[proto.dtype])
    if proto.tensor_content:
        return np.frombuffer(proto.tensor_content, dtype=dtype).reshape(shape)
    values = list(getattr(proto, _VALUES_FIELD[proto.dtype]))
    if proto.dtype == 19:
        values = np.array(values, np.uint16).view(np.float16)
    values = np.asarray(values, dtype=dtype)
    count = int(np.prod(shape)) if shape else 1
    if values.size == 1 and count != 1:  # TF writes a repeated value once
        values = np.full(count, values[0], dtype)
    return values.reshape(shape)


def _histogram_from_proto(histo):
    """A HistogramProto (TF 1's form: bucket right edges and counts) as [k, 3] rows."""
    limits, counts = list(histo.bucket_limit), list(histo.bucket)
    rows, left = [], histo.min
    for right, count in zip(limits, counts):
        right = min(right, histo.max)
        if count:
            rows.append((left, right, count))
        left = right
    return np.array(rows, np.float64).reshape(-1, 3)


def _decode(value, kind):
    """The value of one Summary.Value as the board shows it, or None for kinds it does not draw."""
    which = value.WhichOneof("value")
    if which == "image":  # TF 1's Summary.Image: one PNG
        image = value.image
        return "images", Images(image.width, image.height, [image.encoded_image_string])
    if which == "simple_value":
        return "scalars", float(value.simple_value)
    if which == "histo":
        return "histograms", _histogram_from_proto(value.histo)
    if which != "tensor":
        return kind or which, None
    array = tensor_to_numpy(value.tensor)
    if kind == "scalars":
        return kind, float(array.reshape(-1)[0])
    if kind == "histograms":
        return kind, np.asarray(array, np.float64).reshape(-1, 3)
    if kind == "images" and array.ndim == 1 and array.size >= 2:
        return kind, Images(int(array[0]), int(array[1]), [bytes(v) for v in array[2:]])
    if kind in ("text", "graph_keras_model"):
        flat = [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in array.reshape(-1)]
        return kind, flat[0] if array.ndim == 0 else "\n".join(flat)
    return kind or "tensor", array


def read_logdir(logdir):
    """{run: {tag: Series}} of every summary under `logdir`."""
    if not os.path.isdir(logdir):
        raise errors.NotFoundError(f"{logdir}: no such log directory")
    runs = collections.OrderedDict()
    for run, path in event_files(logdir):
        tags = runs.setdefault(run, collections.OrderedDict())
        for event in read_events(path):
            if event.WhichOneof("what") != "summary":
                continue
            for value in event.summary.value:
                plugin = value.metadata.plugin_data.plugin_name if value.HasField("metadata") else ""
                known = tags.get(value.tag)
                kind, decoded = _decode(value, plugin or (known.kind if known else ""))
                if decoded is None:
                    continue
                if known is None:
                    known = tags[value.tag] = Series(kind, value.metadata.summary_description)
                known.points.append((int(event.step), float(event.wall_time), decoded))
    return runs
