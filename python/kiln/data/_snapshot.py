"""Dataset.save / Dataset.load (and tf.data.experimental.save/load) in Kiln's own
format, a directory holding:

- `shard_<k>.tfrecord`: TFRecord files (GZIP or ZLIB when `compression` says so), each
  element as one record per component, the component a serialized TensorProto
  (tf.io.serialize_tensor); `shard_func(*element)` picks an element's shard (0 by default);
- `dataset_spec.json`: the element_spec (nested dicts/tuples of TensorSpecs), the
  compression, the shard count and the element count, written last (a directory
  without it is not a saved dataset).

TF's own format (snapshot protos) is not read: a directory TF saved is a NotFoundError
naming the missing spec file."""
import json as _json
import os as _os

from .. import _composite
from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import nest as _nest
from ..function import TensorSpec
from ..io import _tfrecord
from ..io._codecs import parse_tensor, serialize_tensor
from . import _composite_elements as _ce
from ._python_dataset import PyDataset

SPEC_FILE = "dataset_spec.json"


def _encode(spec):
    if isinstance(spec, TensorSpec):
        return {"shape": None if spec.shape.rank is None else spec.shape.as_list(), "dtype": spec.dtype.name}
    if _ce.is_composite_spec(spec):
        return _composite.spec_to_json(spec)
    if isinstance(spec, dict):
        return {"dict": {str(k): _encode(v) for k, v in spec.items()}}
    if isinstance(spec, (tuple, list)):
        return {"tuple": [_encode(v) for v in spec]}
    raise TypeError(f"Dataset.save: Kiln saves elements of tensors, RaggedTensors and SparseTensors, not "
                    f"{type(spec).__name__}")


def _decode(doc):
    if "dict" in doc:
        return {k: _decode(v) for k, v in doc["dict"].items()}
    if "tuple" in doc:
        return tuple(_decode(v) for v in doc["tuple"])
    if "ragged" in doc or "sparse" in doc:
        return _composite.spec_from_json(doc)
    return TensorSpec(doc["shape"], _dtypes.as_dtype(doc["dtype"]))


def _template(spec):
    """What packs an element's components: TensorSpecs stand for themselves, composites for their components."""
    return _ce.loose_spec(spec)


def _shard_path(path, k):
    return _os.path.join(path, f"shard_{k}.tfrecord")


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    path = str(path)
    compression = _tfrecord.compression_of(compression)
    spec = dataset.element_spec
    doc = {"format": "kiln-dataset-1", "element_spec": _encode(spec), "compression": compression}
    _os.makedirs(path, exist_ok=True)
    if _os.path.exists(_os.path.join(path, SPEC_FILE)):
        _os.remove(_os.path.join(path, SPEC_FILE))
    options = _tfrecord.TFRecordOptions(compression_type=compression)
    writers, count = {}, 0
    try:
        for element in dataset:
            shard = 0
            if shard_func is not None:
                args = element if isinstance(element, tuple) else (element,)
                shard = int(shard_func(*args))
                if shard < 0:
                    raise _errors.InvalidArgumentError(f"shard_func returned a negative shard index {shard}")
            if shard not in writers:
                writers[shard] = _tfrecord.TFRecordWriter(_shard_path(path, shard), options)
            for component in _ce.flatten(element):  # a composite as its components
                writers[shard].write(serialize_tensor(component).numpy())
            count += 1
    finally:
        for w in writers.values():
            w.close()
    doc["shards"] = sorted(writers)
    doc["count"] = count
    tmp = _os.path.join(path, SPEC_FILE + ".tmp")
    with open(tmp, "w") as f:
        _json.dump(doc, f)
    _os.replace(tmp, _os.path.join(path, SPEC_FILE))


def _read_spec(path):
    try:
        with open(_os.path.join(path, SPEC_FILE)) as f:
            doc = _json.load(f)
    except FileNotFoundError:
        raise _errors.NotFoundError(f"{_os.path.join(path, SPEC_FILE)}; No such file or directory (not a dataset "
                                    "Kiln saved)") from None
    except ValueError as e:
        raise _errors.DataLossError(f"{_os.path.join(path, SPEC_FILE)}: not a saved dataset's spec ({e})") from None
    if doc.get("format") != "kiln-dataset-1":
        raise _errors.DataLossError(f"{_os.path.join(path, SPEC_FILE)}: unknown format {doc.get('format')!r}")
    return doc


def _shard_dataset(path, shard, spec, compression):
    template = _template(spec)
    flat_specs = _nest.flatten(template, expand_composites=True)

    def open_pass():
        records = _tfrecord.read_records(_shard_path(path, shard), compression)
        while True:
            parts = []
            for s in flat_specs:
                record = next(records, None)
                if record is None:
                    if parts:
                        raise _errors.DataLossError(f"{_shard_path(path, shard)}: ends inside an element")
                    return
                parts.append(parse_tensor(record, s.dtype))
            yield _nest.pack_sequence_as(template, parts, expand_composites=True)

    return PyDataset(open_pass, spec=spec, template=template)


def load(path, element_spec=None, compression=None, reader_func=None):
    path = str(path)
    doc = _read_spec(path)
    try:
        spec = _decode(doc["element_spec"])
        _tfrecord.compression_of(doc["compression"])
        int(doc["count"]), [int(k) for k in doc["shards"]]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise _errors.DataLossError(f"{_os.path.join(path, SPEC_FILE)}: a damaged spec ({e!r})") from None
    if element_spec is not None:
        _nest.assert_same_structure(element_spec, spec, check_types=False)
    stored = doc["compression"]
    shards = [_shard_dataset(path, int(k), spec, stored) for k in doc["shards"]]
    if reader_func is not None:
        from ._dataset import Dataset
        out = reader_func(_datasets_dataset(shards))
        if not isinstance(out, Dataset):
            raise TypeError("`reader_func` must return a `tf.data.Dataset`")
        return out

    def open_pass():
        count = 0
        for shard in shards:
            for element in shard:
                count += 1
                yield element
        if count != int(doc["count"]):
            raise _errors.DataLossError(f"{path}: {count} elements read, {doc['count']} saved (a shard was cut "
                                        "short or replaced)")

    return PyDataset(open_pass, spec=spec, template=_template(spec), card=doc["count"])


def _datasets_dataset(shards):
    """A dataset whose elements are the shard datasets (what reader_func receives;
    iterated in Python, as flat_map's and interleave's inputs are)."""
    from ._transforms import DatasetSpec
    return PyDataset(lambda: iter(shards), spec=DatasetSpec(shards[0].element_spec) if shards else None,
                     template=0, card=len(shards))


def snapshot(dataset, path, compression="AUTO", reader_func=None, shard_func=None):
    """Dataset.snapshot: the first pass computes the elements and saves them to `path`
    (Kiln's save format, GZIP for "AUTO"); later passes, and later programs, read them
    back from there. A snapshot from a different pipeline is not detected: use a new path."""
    path = str(path)
    compression = "GZIP" if compression == "AUTO" else compression

    def open_pass():
        if not _os.path.exists(_os.path.join(path, SPEC_FILE)):
            save(dataset, path, compression, shard_func)
        yield from load(path, reader_func=reader_func)

    return PyDataset(open_pass, parents=(dataset,), spec=lambda: dataset.element_spec,
                     template=lambda: dataset._template(), card=dataset._cardinality())
