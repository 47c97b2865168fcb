"""tf.feature_column's columns (TF 2.15's v2 columns): immutable descriptions (namedtuples, as TF's) of how a raw
feature becomes model input. Dense columns give a float tensor [batch, ...variable_shape]; categorical columns
give ids [batch, n] (-1 where an entry is missing or dropped) and optional weights, which indicator and embedding
columns (and crosses) consume. Kiln computes the ids densely instead of as TF's SparseTensors: a missing entry is
-1, which every consumer skips as TF skips an absent sparse entry."""
import collections
import functools
import math

import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..errors import InvalidArgumentError
from ..lookup._core import run_on_host


def _to_tensor(value):
    from .._ops import convert_to_tensor
    from ..ragged_tensor import RaggedTensor
    from ..sparse_tensor import SparseTensor
    missing = "" if getattr(value, "dtype", None) == _dtypes.string else -1  # what to_sparse_input drops
    if isinstance(value, SparseTensor):
        from ..sparse_ops import to_dense
        return to_dense(value, default_value=missing)
    if isinstance(value, RaggedTensor):
        return value.to_tensor(default_value=missing)
    return value if isinstance(value, (_C.Tensor, _C.Variable)) else convert_to_tensor(value)


def feature(features, key):
    """The raw feature `key` as a tensor of rank 2 at least ([batch] becomes [batch, 1])."""
    if key not in features:
        raise ValueError(f"Feature {key} is not in features dictionary.")
    x = _to_tensor(features[key])
    if x.shape.rank == 0:
        raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {x}")
    return _C.expand_dims(x, -1) if x.shape.rank == 1 else x


def _as_2d(x):
    """[batch, ...] -> [batch, n]."""
    dims = x.shape.as_list()
    if len(dims) == 2:
        return x
    rest = int(np.prod(dims[1:]))
    return _C.reshape(x, [-1, rest])


def _valid(values):
    """Entries TF's to_sparse_input keeps: not "" for strings, not -1 for integers."""
    values = np.asarray(values)
    return values != b"" if values.dtype == object else values != -1


class _Cache:
    """What one DenseFeatures call computed for each column (a column feeding several is computed once)."""

    def __init__(self, features):
        self.features = features
        self.values = {}

    def get(self, column, compute):
        if column not in self.values:
            self.values[column] = compute()
        return self.values[column]


# ---- configs (DenseFeatures.get_config) -------------------------------------------------------------------------

class _Config:
    """A column's config as TF's: its fields, nested columns as {"class_name", "config"}, dtypes by name,
    initializers and normalizer functions as Keras serializes them."""

    def get_config(self):
        return {field: _serialized(value) for field, value in self._asdict().items()}

    @classmethod
    def from_config(cls, config, custom_objects=None, columns_by_name=None):
        return cls(**{field: _deserialized(field, value, custom_objects) for field, value in config.items()})


def serialize_feature_column(column):
    return {"class_name": type(column).__name__, "config": column.get_config()}


def deserialize_feature_column(config, custom_objects=None, columns_by_name=None):
    if isinstance(config, str):
        return config  # a crossed column's raw key
    cls = _COLUMN_CLASSES().get(config.get("class_name"))
    if cls is None:
        raise ValueError(f"Unknown feature column: {config.get('class_name')}")
    return cls.from_config(config["config"], custom_objects, columns_by_name)


def _serialized(value):
    if isinstance(value, _Config):
        return serialize_feature_column(value)
    if isinstance(value, _dtypes.DType):
        return value.name
    if isinstance(value, (list, tuple)):
        return [_serialized(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    from ..keras._serialization import serialize_keras_object
    return serialize_keras_object(value)


def _deserialized(field, value, custom_objects):
    if field == "dtype":
        return _dtypes.as_dtype(value)
    if isinstance(value, dict) and value.get("class_name") in _COLUMN_CLASSES():
        return deserialize_feature_column(value, custom_objects)
    if isinstance(value, list):
        return tuple(_deserialized(None, v, custom_objects) for v in value)
    if field == "initializer" and value is not None:
        from ..keras import initializers
        return initializers.deserialize(value, custom_objects=custom_objects)
    if field == "normalizer_fn" and value is not None:
        from ..keras._serialization import deserialize_keras_object
        return deserialize_keras_object(value, custom_objects=custom_objects, printable_module_name="function")
    return value


def _COLUMN_CLASSES():  # noqa: N802 - a constant made on first use (the classes are below)
    return {cls.__name__: cls for cls in (NumericColumn, BucketizedColumn, IndicatorColumn, EmbeddingColumn,
                                          VocabularyListCategoricalColumn, VocabularyFileCategoricalColumn,
                                          IdentityCategoricalColumn, HashedCategoricalColumn,
                                          WeightedCategoricalColumn, CrossedColumn)}


# ---- dense columns --------------------------------------------------------------------------------------------

class DenseColumn(_Config):
    """A column that DenseFeatures accepts: `_dense(cache, state)` -> float32 [batch, prod(variable_shape)]."""
    _is_dense = True


class CategoricalColumn(_Config):
    """A column of ids: `_ids(cache)` -> (int64 ids [batch, n], -1 where none; float32 weights or None)."""
    _is_categorical = True

    @property
    def num_buckets(self):
        raise NotImplementedError


class NumericColumn(DenseColumn, collections.namedtuple(
        "NumericColumn", ("key", "shape", "default_value", "dtype", "normalizer_fn"))):

    @property
    def name(self):
        return self.key

    @property
    def variable_shape(self):
        from ..tensor_shape import TensorShape
        return TensorShape(self.shape)

    @property
    def parse_example_spec(self):
        from ..io import FixedLenFeature
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _values(self, cache):
        def compute():
            x = feature(cache.features, self.key)
            x = _C.cast(x, _dtypes.float32._enum) if x.dtype != _dtypes.float32 else x
            if self.normalizer_fn is not None:
                x = self.normalizer_fn(x)
            return _as_2d(x)
        return cache.get(self, compute)

    def _dense(self, cache, state):
        return self._values(cache)


class BucketizedColumn(DenseColumn, CategoricalColumn, collections.namedtuple(
        "BucketizedColumn", ("source_column", "boundaries"))):

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def variable_shape(self):
        from ..tensor_shape import TensorShape
        return TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    @property
    def num_buckets(self):
        return int(np.prod(self.source_column.shape)) * (len(self.boundaries) + 1)

    @property
    def parse_example_spec(self):
        return self.source_column.parse_example_spec

    def _buckets(self, cache):
        """Each value's bucket: i where boundaries[i-1] <= x < boundaries[i] (TF's Bucketize)."""
        def compute():
            x = self.source_column._values(cache)
            bounds = _C.constant(np.asarray(self.boundaries, np.float32), _dtypes.float32._enum)
            above = _C.cast(_C.greater_equal(_C.expand_dims(x, -1), bounds), _dtypes.int64._enum)
            return _C.reduce_sum(above, [-1], False)
        return cache.get(self, compute)

    def _dense(self, cache, state):
        hot = _C.one_hot(self._buckets(cache), len(self.boundaries) + 1, 1.0, 0.0, -1, _dtypes.float32._enum)
        return _as_2d(hot)

    def _ids(self, cache):
        buckets = self._buckets(cache)
        width = int(np.prod(self.source_column.shape))
        offsets = _C.constant(np.arange(width, dtype=np.int64) * (len(self.boundaries) + 1), _dtypes.int64._enum)
        return _C.add(buckets, offsets), None


class IndicatorColumn(DenseColumn, collections.namedtuple("IndicatorColumn", ("categorical_column",))):

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    @property
    def variable_shape(self):
        from ..tensor_shape import TensorShape
        return TensorShape([self.categorical_column.num_buckets])

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    def _dense(self, cache, state):
        ids, weights = self.categorical_column._ids(cache)
        # one_hot of -1 is a zero row: the missing entries add nothing; a sample's ids are summed (multi-hot).
        hot = _C.one_hot(ids, self.categorical_column.num_buckets, 1.0, 0.0, -1, _dtypes.float32._enum)
        if weights is not None:
            hot = _C.multiply(hot, _C.expand_dims(weights, -1))
        return _C.reduce_sum(hot, [-2], False)


def _combine(embeddings, ids, weights, combiner):
    """Keras' safe_embedding_lookup_sparse on dense ids: the rows of the valid ids, weighted, combined per sample
    (sum, mean, or sum / sqrt(sum of squared weights)); a sample without ids gets zeros."""
    valid = _C.greater_equal(ids, _C.constant(np.int64(0), _dtypes.int64._enum))
    w = _C.cast(valid, _dtypes.float32._enum)
    if weights is not None:
        w = _C.multiply(w, weights)
    rows = _C.gather(embeddings, _C.maximum(ids, _C.constant(np.int64(0), _dtypes.int64._enum)), 0)
    total = _C.reduce_sum(_C.multiply(rows, _C.expand_dims(w, -1)), [-2], False)
    if combiner == "sum":
        return total
    scale = _C.reduce_sum(w, [-1], True) if combiner == "mean" else \
        _C.sqrt(_C.reduce_sum(_C.multiply(w, w), [-1], True))
    empty = _C.equal(scale, _C.constant(np.float32(0), _dtypes.float32._enum))
    safe = _C.add(scale, _C.cast(empty, _dtypes.float32._enum))  # 1 where a sample has no ids (its total is 0)
    return _C.divide(total, safe)


def _clipped(embeddings, max_norm):
    if max_norm is None:
        return embeddings
    norms = _C.sqrt(_C.reduce_sum(_C.multiply(embeddings, embeddings), [-1], True))
    limit = _C.constant(np.float32(max_norm), _dtypes.float32._enum)
    return _C.multiply(embeddings, _C.divide(limit, _C.maximum(norms, limit)))


class _Embedding(DenseColumn):
    """What embedding and shared embedding columns share: a [num_buckets, dimension] matrix (DenseFeatures makes
    it, by `_weights_spec`) combined over each sample's ids."""

    @property
    def variable_shape(self):
        from ..tensor_shape import TensorShape
        return TensorShape([self.dimension])

    @property
    def parse_example_spec(self):
        return self.categorical_column.parse_example_spec

    def _dense(self, cache, state):
        ids, weights = self.categorical_column._ids(cache)
        return _combine(_clipped(state.embedding_weights(self), self.max_norm), ids, weights, self.combiner)


class EmbeddingColumn(_Embedding, collections.namedtuple(
        "EmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from",
                            "tensor_name_in_ckpt", "max_norm", "trainable", "use_safe_embedding_lookup"))):

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    def _weights_spec(self):
        """(variable name, shape, initializer, trainable) of the embedding weights DenseFeatures makes."""
        return (f"{self.name}/embedding_weights", [self.categorical_column.num_buckets, self.dimension],
                self.initializer, self.trainable)


class SharedEmbeddingColumn(_Embedding, collections.namedtuple(
        "SharedEmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer",
                                  "shared_embedding_collection_name", "max_norm", "trainable",
                                  "use_safe_embedding_lookup"))):

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    def _weights_spec(self):
        return (f"{self.shared_embedding_collection_name}/embedding_weights",
                [self.categorical_column.num_buckets, self.dimension], self.initializer, self.trainable)


def default_initializer(dimension):
    """TF's embedding default: truncated normal of mean 0 and stddev 1 / sqrt(dimension)."""
    from ..keras.initializers import TruncatedNormal
    return TruncatedNormal(mean=0.0, stddev=1.0 / math.sqrt(dimension))


# ---- categorical columns ----------------------------------------------------------------------------------------

def _host_ids(column, cache, fn):
    """ids from the raw feature by fn(NumPy values [batch, n]) -> int64 ids (-1 for what is dropped)."""
    def compute():
        x = _as_2d(feature(cache.features, column.key))
        column._check_dtype(x)
        ids, = run_on_host(lambda v: [fn(v)], [x], [_dtypes.int64], [x.shape.as_list()])
        return ids
    return cache.get(column, compute)


class _KeyedCategorical(CategoricalColumn):
    @property
    def name(self):
        return self.key

    @property
    def parse_example_spec(self):
        from ..io import VarLenFeature
        return {self.key: VarLenFeature(self.dtype)}

    def _check_dtype(self, x):
        if self.dtype.is_integer != x.dtype.is_integer or (self.dtype == _dtypes.string) != (x.dtype == _dtypes.string):
            raise ValueError(f"Column dtype and SparseTensors dtype must be compatible. key: {self.key}, column "
                             f"dtype: {self.dtype}, tensor dtype: {x.dtype}")


class VocabularyListCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "VocabularyListCategoricalColumn", ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"))):

    @property
    def num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _index(self):
        return _vocabulary_index(self.vocabulary_list)

    def _ids(self, cache):
        return _host_ids(self, cache, lambda v: _vocabulary_ids(v, self._index(), self.default_value,
                                                                self.num_oov_buckets)), None


class VocabularyFileCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "VocabularyFileCategoricalColumn", ("key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype",
                                            "default_value", "file_format"))):

    @property
    def num_buckets(self):
        return self.vocabulary_size + self.num_oov_buckets

    def _index(self):
        with open(self.vocabulary_file, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) < self.vocabulary_size:
            raise InvalidArgumentError(f"Invalid vocab_size in {self.vocabulary_file}: expected "
                                       f"{self.vocabulary_size} but got {len(lines)}")
        vocab = lines[:self.vocabulary_size]
        return _vocabulary_index(tuple(int(v) for v in vocab) if self.dtype.is_integer else tuple(vocab))

    def _ids(self, cache):
        index = self._index()
        default = -1 if self.default_value is None else self.default_value
        return _host_ids(self, cache, lambda v: _vocabulary_ids(v, index, default, self.num_oov_buckets)), None


class IdentityCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "IdentityCategoricalColumn", ("key", "number_buckets", "default_value"))):

    dtype = _dtypes.int64

    @property
    def num_buckets(self):
        return self.number_buckets

    def _check_dtype(self, x):
        if not x.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {x.dtype}")

    def _identity(self, values):
        values = np.asarray(values, np.int64)
        valid = values != -1
        out = np.where(valid, values, -1)
        outside = valid & ((values < 0) | (values >= self.number_buckets))
        if outside.any():
            if self.default_value is None:
                raise InvalidArgumentError(f"Bucket index for categorical column \"{self.key}\" exceeds number of "
                                           f"buckets: {values[outside][0]} is not in [0, {self.number_buckets})")
            out = np.where(outside, self.default_value, out)
        return out

    def _ids(self, cache):
        return _host_ids(self, cache, self._identity), None


class HashedCategoricalColumn(_KeyedCategorical, collections.namedtuple(
        "HashedCategoricalColumn", ("key", "hash_bucket_size", "dtype"))):

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    def _ids(self, cache):
        from ..lookup._tables import hash_bucket
        return _host_ids(self, cache, lambda v: np.where(_valid(v), hash_bucket(v, self.hash_bucket_size), -1)), None


class WeightedCategoricalColumn(CategoricalColumn, collections.namedtuple(
        "WeightedCategoricalColumn", ("categorical_column", "weight_feature_key", "dtype"))):

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def num_buckets(self):
        return self.categorical_column.num_buckets

    @property
    def parse_example_spec(self):
        from ..io import VarLenFeature
        return dict(self.categorical_column.parse_example_spec,
                    **{self.weight_feature_key: VarLenFeature(self.dtype)})

    def _ids(self, cache):
        ids, _ = self.categorical_column._ids(cache)
        weights = _as_2d(feature(cache.features, self.weight_feature_key))
        if weights.dtype != _dtypes.float32:
            weights = _C.cast(weights, _dtypes.float32._enum)
        if weights.shape.as_list()[1:] != ids.shape.as_list()[1:]:
            raise ValueError(f"Weights and ids of {self.name} must have the same shape: {weights.shape} and "
                             f"{ids.shape}")
        return ids, weights


class CrossedColumn(CategoricalColumn, collections.namedtuple("CrossedColumn", ("keys", "hash_bucket_size",
                                                                                "hash_key"))):

    @property
    def name(self):
        return "_X_".join(sorted(key if isinstance(key, str) else key.name for key in self._leaf_keys()))

    def _leaf_keys(self):
        out = []
        for key in self.keys:
            out.extend(key._leaf_keys() if isinstance(key, CrossedColumn) else [key])
        return out

    @property
    def num_buckets(self):
        return self.hash_bucket_size

    @property
    def parse_example_spec(self):
        from ..io import VarLenFeature
        spec = {}
        for key in self.keys:
            spec.update({key: VarLenFeature(_dtypes.string)} if isinstance(key, str) else key.parse_example_spec)
        return spec

    def _ids(self, cache):
        def compute():
            parts = []
            for key in self._leaf_keys():
                if isinstance(key, str):
                    parts.append(_as_2d(feature(cache.features, key)))  # raw values; "" and -1 are missing
                else:
                    parts.append(key._ids(cache)[0])
            width = int(np.prod([p.shape.as_list()[1] for p in parts]))
            ids, = run_on_host(lambda *v: [_cross(v, self.hash_bucket_size, self.hash_key)], parts,
                               [_dtypes.int64], [[parts[0].shape.as_list()[0], width]])
            return ids
        return cache.get(self, compute), None


# ---- host computations ------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _vocabulary_index(vocabulary):
    """value -> position of a vocabulary (a tuple), made once per vocabulary rather than per batch."""
    return {(v.encode("utf-8") if isinstance(v, str) else v): i for i, v in enumerate(vocabulary)}


def _vocabulary_ids(values, index, default_value, num_oov_buckets):
    """Vocabulary positions; OOV values in num_oov_buckets buckets after it (Fingerprint64 of the value, an integer
    as its decimal text, as index_table_from_tensor) or default_value; "" and -1 dropped (-1)."""
    from ..lookup._tables import hash_bucket
    values = np.asarray(values)
    flat = values.reshape(-1).tolist()
    out = np.asarray([index.get(v, -2) for v in flat], np.int64).reshape(values.shape)
    oov = out == -2
    if oov.any():
        fallback = hash_bucket(values, num_oov_buckets) + len(index) if num_oov_buckets else default_value
        out = np.where(oov, fallback, out)
    return np.where(_valid(values), out, -1)


def _cross(parts, num_buckets, hash_key):
    """Each row's cross: every combination of its valid entries (the last part varying fastest), hashed by
    FingerprintCat64 from hash_key as tf.sparse.cross_hashed; a combination with a missing entry is -1."""
    from .._farmhash import CROSS_KEY, cross_fingerprint
    parts = [np.asarray(p) for p in parts]
    batch = parts[0].shape[0]
    rows = []
    for b in range(batch):
        combos = [[]]
        for part in parts:
            combos = [c + [v] for c in combos for v in part[b].tolist()]
        row = []
        for combo in combos:
            if any(v == b"" or (not isinstance(v, bytes) and v == -1) for v in combo):
                row.append(-1)
                continue
            row.append(cross_fingerprint(combo, CROSS_KEY if hash_key is None else hash_key) % num_buckets)
        rows.append(row)
    return np.asarray(rows, np.int64).reshape(batch, -1)
