"""tf.io.parse_single_example / parse_example: tf.train.Example protos to tensors, by
FixedLenFeature, VarLenFeature and FixedLenSequenceFeature.

A VarLenFeature parses to a tf.SparseTensor, a RaggedFeature to a tf.RaggedTensor
(_ragged_feature.py). On a symbolic input (inside Dataset.map or
kiln.function) the parsing runs as a py_function, its outputs given the static
shapes the features declare."""
import collections as _collections

import numpy as _np
from google.protobuf.message import DecodeError as _DecodeError

from .. import dtypes as _dtypes
from .. import errors as _errors
from . import _example_wire, _packed, _ragged_feature
from ._ragged_feature import RaggedFeature
from ._messages import Example

_KIND_OF = {"float32": "float_list", "int64": "int64_list", "string": "bytes_list"}
_TF_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}


class FixedLenFeature(_collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A feature of a fixed number of values, parsed to a tensor of `shape`."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(_collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of any number of `shape`-shaped items, parsed to [n] + shape (padded in a batch)."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(_collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values, parsed to a SparseTensor."""


def _shape_of(shape):
    """A feature's shape (a list, a TensorShape or an int) as a list of ints."""
    if isinstance(shape, (list, tuple)):
        return [int(d) for d in shape]
    return [int(d) for d in (shape.as_list() if hasattr(shape, "as_list") else [shape])]


def _check_features(features):
    if not features:
        raise ValueError("Invalid `features` argument: `features` cannot be None or empty.")
    for key, f in features.items():
        if not isinstance(f, (FixedLenFeature, FixedLenSequenceFeature, VarLenFeature, RaggedFeature)):
            raise ValueError(f"Unsupported feature type for key {key!r}: {type(f).__name__}.")
        dtype = _dtypes.as_dtype(f.dtype)
        if dtype.name not in _KIND_OF:
            raise ValueError(f"Unsupported dtype {dtype.name} for feature {key!r}: only float32, int64 and string "
                             "are parsed.")


def _np_dtype(dtype):
    return object if dtype.name == "string" else dtype._np


class _ProtoFeatures:
    """An Example's features through protobuf, with features_of's interface: get(key) is
    None or (kind, the kind's list message)."""

    def __init__(self, feature_map):
        self._map = feature_map

    def get(self, key):
        feature = self._map.get(key)
        if feature is None:
            return None
        kind = feature.WhichOneof("kind")
        return kind, (getattr(feature, kind) if kind else None)


def _features(serialized, name):
    """The features of one serialized Example: read from its bytes where their layout is
    the usual one (_example_wire), else through protobuf."""
    if hasattr(serialized, "numpy"):
        serialized = serialized.numpy()
    if isinstance(serialized, (bytes, _np.bytes_)):
        table = _example_wire.features_of(serialized)
        if table is not None:
            return _WireFeatures(table, serialized)
    return _ProtoFeatures(_parse_one(serialized, name).features.feature)


class _WireFeatures:
    """features_of's table, with the bytes it was read from (for protobuf's verdict on a
    list whose bytes are not whole)."""

    def __init__(self, table, serialized):
        self.get, self.serialized = table.get, serialized


def _values(features, key, dtype, name):
    """The values of feature `key` (of _features' table) as a NumPy array of `dtype`, or
    None if absent."""
    entry = features.get(key)
    if entry is None:
        return None
    kind, payload = entry
    if kind is None:
        return _np.zeros([0], _np_dtype(dtype))
    wanted = _KIND_OF[dtype.name]
    if kind != wanted:
        raise _errors.InvalidArgumentError(
            f"Name: {name}, Feature: {key}.  Data types don't match. Data type: {_TF_TYPE_NAME[kind]} but expected "
            f"type: {_TF_TYPE_NAME[wanted]}")
    if not isinstance(payload, (memoryview, list)):  # a protobuf list message
        if kind == "float_list":
            return _packed.float_values(payload)
        if kind == "int64_list":
            return _packed.int64_values(payload)
        return _np.array(list(payload.value), dtype=object).reshape(len(payload.value))
    values = _example_wire.values_of(kind, payload)
    if values is None:  # list bytes that are not whole: protobuf parses them, or says what is wrong
        return _values(_ProtoFeatures(_parse_one(features.serialized, name).features.feature), key, dtype, name)
    return values


def _default(value, dtype, shape, key):
    array = _np.asarray(value.numpy() if hasattr(value, "numpy") else value,
                        dtype=_np_dtype(dtype))
    if array.dtype == object:
        array = _np.vectorize(lambda v: v.encode() if isinstance(v, str) else v, otypes=[object])(array)
    try:
        return _np.broadcast_to(array, shape).copy() if array.size == 1 else array.reshape(shape)
    except ValueError:
        raise ValueError(f"The default_value of feature {key!r} does not fit its shape {shape}.") from None


def _parse_one(serialized, name):
    if hasattr(serialized, "numpy"):
        serialized = serialized.numpy()
    try:
        return Example.FromString(bytes(serialized))
    except (_DecodeError, TypeError):
        raise _errors.InvalidArgumentError(f"Could not parse example input, value: '{serialized!r}'") from None


def _parse_batch_numpy(serialized, features, names):
    """{key: array, or (indices, values, dense_shape) for a VarLenFeature} over a batch."""
    tables = [_features(s, n) for s, n in zip(serialized, names)]
    out = {}
    for key, f in features.items():
        dtype = _dtypes.as_dtype(f.dtype)
        source = f.value_key or key if isinstance(f, RaggedFeature) else key
        per = [_values(t, source, dtype, n) for t, n in zip(tables, names)]
        if isinstance(f, RaggedFeature):  # (values, [row splits]), the batch's outer splits first
            rows = []
            for t, n, v in zip(tables, names, per):
                parts = [_values(t, p.key, _dtypes.int64, n) if hasattr(p, "key") else None for p in f.partitions]
                parts = [_np.zeros([0], _np.int64) if a is None else a for a in parts]
                rows.append(_ragged_feature.parse_one(v if v is not None else _np.zeros([0], _np_dtype(dtype)),
                                                      parts, f, key, n))
            out[key] = _ragged_feature.batch(rows, _np_dtype(dtype))
            continue
        if isinstance(f, VarLenFeature):
            rows = [v if v is not None else _np.zeros([0], _np_dtype(dtype)) for v in per]
            indices = [[b, i] for b, r in enumerate(rows) for i in range(len(r))]
            values = _np.concatenate(rows) if rows else _np.zeros([0], _np_dtype(dtype))
            out[key] = (_np.array(indices, _np.int64).reshape(-1, 2), values.astype(_np_dtype(dtype)),
                        _np.array([len(rows), max((len(r) for r in rows), default=0)], _np.int64))
            continue
        shape = _shape_of(f.shape)
        size = int(_np.prod(shape)) if shape else 1
        if isinstance(f, FixedLenSequenceFeature):
            if not f.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
            items = []
            for v, n in zip(per, names):
                v = _np.zeros([0], _np_dtype(dtype)) if v is None else v
                if size == 0 or len(v) % size:
                    raise _errors.InvalidArgumentError(
                        f"Name: {n}, Key: {key}, Index: 0.  Number of values is not a multiple of stride length. "
                        f"Saw {len(v)} values but output shape is: {shape}")
                items.append(v.reshape([len(v) // size] + shape))
            longest = max((len(i) for i in items), default=0)
            pad = _default(0 if f.default_value is None and dtype.name != "string" else
                           (b"" if f.default_value is None else f.default_value), dtype, [], key)
            batch = _np.empty([len(items), longest] + shape, _np_dtype(dtype))
            batch[...] = pad
            for b, item in enumerate(items):
                batch[b, :len(item)] = item
            out[key] = batch
            continue
        rows = []
        for v, n in zip(per, names):
            if v is None:
                if f.default_value is None:
                    raise _errors.InvalidArgumentError(
                        f"Name: {n}, Feature: {key} (data type: {dtype.name}) is required but could not be found.")
                rows.append(_default(f.default_value, dtype, shape, key))
                continue
            if len(v) != size:
                raise _errors.InvalidArgumentError(
                    f"Name: {n}, Key: {key}, Index: 0.  Number of {_TF_TYPE_NAME[_KIND_OF[dtype.name]]} values != "
                    f"expected.  Values size: {len(v)} but output shape: {shape}")
            rows.append(v.reshape(shape))
        out[key] = _np.stack(rows) if rows else _np.zeros([0] + shape, _np_dtype(dtype))
    return out


def _graph_tensor(t):
    """A symbolic tensor of a function being traced (no value until the graph runs)."""
    from .. import _C
    return isinstance(t, _C.Tensor) and t._is_symbolic


def _to_tensors(parsed, features, batched):
    from .. import _ops
    out = {}
    for key, f in features.items():
        dtype = _dtypes.as_dtype(f.dtype)
        value = parsed[key]
        if isinstance(f, RaggedFeature):
            values, splits = value
            out[key] = _ragged_feature.to_value(_ops.convert_to_tensor(values, dtype),
                                                splits if batched else _one_example(splits), f)
            continue
        if isinstance(f, VarLenFeature):
            indices, values, dense_shape = value
            if not batched:
                indices, dense_shape = indices[:, 1:], dense_shape[1:]
            out[key] = _sparse(_ops.convert_to_tensor(indices, _dtypes.int64), _ops.convert_to_tensor(values, dtype),
                               _ops.convert_to_tensor(dense_shape, _dtypes.int64), 2 if batched else 1)
        else:
            out[key] = _ops.convert_to_tensor(value if batched else value[0], dtype)
    return out


def _sparse(indices, values, dense_shape, rank):
    """A tf.SparseTensor of the parsed parts (a py_function's outputs get their ranks here)."""
    from .. import _ops
    from ..sparse_tensor import SparseTensor
    return SparseTensor(_ops.reshape(indices, [-1, rank]), _ops.reshape(values, [-1]),
                        _ops.reshape(dense_shape, [rank]))


def _one_example(splits):
    """A one-Example batch's splits without the batch's outer level."""
    return splits[1:]


def _parse(serialized, features, example_names, batched):
    _check_features(features)
    features = dict(features)
    if _graph_tensor(serialized):
        return _parse_traced(serialized, features, example_names, batched)
    values = serialized.numpy() if hasattr(serialized, "numpy") else serialized
    if batched:
        values = list(_np.asarray(values, dtype=object).reshape(-1))
    else:
        values = [values.item() if hasattr(values, "item") else values]
    names = _names(example_names, len(values))
    return _to_tensors(_parse_batch_numpy(values, features, names), features, batched)


def _names(example_names, n):
    if example_names is None:
        return ["<unknown>"] * n
    names = example_names.numpy() if hasattr(example_names, "numpy") else example_names
    names = list(_np.asarray(names, dtype=object).reshape(-1))
    return [x.decode() if isinstance(x, bytes) else str(x) for x in names]


def _parse_traced(serialized, features, example_names, batched):
    """The parsing as a py_function of the serialized tensor; outputs flat, each
    VarLenFeature three of them, then given the shapes the features declare."""
    from .. import _ops
    from ..function import py_function
    touts = []
    for f in features.values():
        dtype = _dtypes.as_dtype(f.dtype)
        if isinstance(f, RaggedFeature):  # the values, then each level of row splits
            touts += [dtype] + [f.row_splits_dtype] * (len(f.partitions) + (1 if batched else 0))
            continue
        touts += [_dtypes.int64, dtype, _dtypes.int64] if isinstance(f, VarLenFeature) else [dtype]

    def run(s):
        parsed = _parse(s, features, example_names, batched)
        flat = []
        for key, f in features.items():
            if isinstance(f, RaggedFeature):
                rt = parsed[key]
                flat += [rt.flat_values] + list(rt.nested_row_splits) if hasattr(rt, "flat_values") else [rt]
                continue
            sp = parsed[key]
            flat += [sp.indices, sp.values, sp.dense_shape] if isinstance(f, VarLenFeature) else [sp]
        return flat

    flat = py_function(run, [serialized], touts)
    out, i = {}, 0
    for key, f in features.items():
        if isinstance(f, RaggedFeature):
            levels = len(f.partitions) + (1 if batched else 0)
            out[key] = _ragged_feature.to_value(_ops.reshape(flat[i], [-1]), flat[i + 1:i + 1 + levels], f)
            i += 1 + levels
            continue
        if isinstance(f, VarLenFeature):
            out[key] = _sparse(*flat[i:i + 3], 2 if batched else 1)
            i += 3
            continue
        t = flat[i]
        i += 1
        if isinstance(f, FixedLenFeature):
            t = _ops.reshape(t, ([-1] if batched else []) + _shape_of(f.shape))
        out[key] = t
    return out


def parse_single_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_single_example: one serialized tf.train.Example to {key: tensor}."""
    return _parse(serialized, features, example_names, batched=False)


def parse_example(serialized, features, example_names=None, name=None):
    """tf.io.parse_example: a vector of serialized Examples to {key: batched tensor}."""
    return _parse(serialized, features, example_names, batched=True)
