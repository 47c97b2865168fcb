"""tf.feature_column (TF 2.15): the functions that make feature columns, which keras.layers.DenseFeatures turns
into one dense tensor. The sequence_* columns (for SequenceFeatures, a tf.keras.experimental layer Kiln lacks)
are left out."""
import numpy as np

from .. import dtypes as _dtypes
from ._columns import (BucketizedColumn, CategoricalColumn, CrossedColumn, EmbeddingColumn,
                       HashedCategoricalColumn, IdentityCategoricalColumn, IndicatorColumn, NumericColumn,
                       SharedEmbeddingColumn, VocabularyFileCategoricalColumn, VocabularyListCategoricalColumn,
                       WeightedCategoricalColumn, default_initializer)

__all__ = ["numeric_column", "bucketized_column", "categorical_column_with_vocabulary_list",
           "categorical_column_with_vocabulary_file", "categorical_column_with_identity",
           "categorical_column_with_hash_bucket", "embedding_column", "shared_embeddings", "indicator_column",
           "crossed_column", "weighted_categorical_column", "make_parse_example_spec"]


def _check_key(key):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Given: {key}")


def numeric_column(key, shape=(1,), default_value=None, dtype=_dtypes.float32, normalizer_fn=None):
    _check_key(key)
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if any(d < 1 for d in shape):
        raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if default_value is not None:
        default_value = tuple(np.broadcast_to(np.asarray(default_value, dtype.as_numpy_dtype), shape).reshape(-1)
                              .tolist())
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    return NumericColumn(key, shape, default_value, dtype, normalizer_fn)


def bucketized_column(source_column, boundaries):
    if not isinstance(source_column, NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries:
        raise ValueError("boundaries must not be empty.")
    boundaries = tuple(float(b) for b in boundaries)
    if any(a >= b for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("boundaries must be a sorted list.")
    return BucketizedColumn(source_column, boundaries)


def _vocabulary_dtype(dtype, values, key):
    if dtype is None:
        dtype = _dtypes.string if all(isinstance(v, (str, bytes)) for v in values) else _dtypes.int64
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype == _dtypes.string):
        raise ValueError(f"dtype must be string or integer. dtype: {dtype}, column_name: {key}")
    return dtype


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    _check_key(key)
    values = [v.decode("utf-8") if isinstance(v, bytes) else v for v in np.asarray(vocabulary_list).tolist()]
    if not values:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(values)) != len(values):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    dtype = _vocabulary_dtype(dtype, values, key)
    if dtype == _dtypes.string and not all(isinstance(v, str) for v in values):
        raise ValueError(f"dtype {dtype} and vocabulary dtype {np.asarray(vocabulary_list).dtype} do not match, "
                         f"column_name: {key}")
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    return VocabularyListCategoricalColumn(key, tuple(values), dtype, default_value, int(num_oov_buckets))


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None, dtype=_dtypes.string,
                                            default_value=None, num_oov_buckets=0, file_format=None):
    _check_key(key)
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        with open(vocabulary_file, encoding="utf-8") as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = _vocabulary_dtype(dtype, [], key)
    return VocabularyFileCategoricalColumn(key, vocabulary_file, int(vocabulary_size), int(num_oov_buckets), dtype,
                                           default_value, file_format)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    _check_key(key)
    if num_buckets < 1:
        raise ValueError(f"Invalid num_buckets {num_buckets}.")
    if default_value is not None and not 0 <= default_value < num_buckets:
        raise ValueError(f"Invalid default_value {default_value}.")
    return IdentityCategoricalColumn(key, int(num_buckets), default_value)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=_dtypes.string):
    _check_key(key)
    if hash_bucket_size is None or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype == _dtypes.string):
        raise ValueError(f"dtype must be string or integer. dtype: {dtype}, column_name: {key}")
    return HashedCategoricalColumn(key, int(hash_bucket_size), dtype)


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=_dtypes.float32):
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return WeightedCategoricalColumn(categorical_column, weight_feature_key, dtype)


def _check_categorical(column, what):
    if not isinstance(column, CategoricalColumn):
        raise ValueError(f"{what} must be a categorical column (made by categorical_column_with_*, bucketized_column, "
                         f"crossed_column or weighted_categorical_column). Given: {column}")


_COMBINERS = ("mean", "sqrtn", "sum")


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")
    if ckpt_to_load_from is not None:
        raise NotImplementedError("kiln.feature_column.embedding_column: ckpt_to_load_from is not supported (restore "
                                  "the DenseFeatures layer's weights with tf.train.Checkpoint)")
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{getattr(categorical_column, 'name', categorical_column)}")
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of {list(_COMBINERS)}, got {combiner}")
    _check_categorical(categorical_column, "categorical_column")
    return EmbeddingColumn(categorical_column, int(dimension), combiner, initializer or default_initializer(dimension),
                           ckpt_to_load_from, tensor_name_in_ckpt, max_norm, trainable, use_safe_embedding_lookup)


def shared_embeddings(categorical_columns, dimension, combiner="mean", initializer=None,
                      shared_embedding_collection_name=None, ckpt_to_load_from=None, tensor_name_in_ckpt=None,
                      max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if ckpt_to_load_from is not None or tensor_name_in_ckpt is not None:
        raise NotImplementedError("kiln.feature_column.shared_embeddings: ckpt_to_load_from is not supported")
    if combiner not in _COMBINERS:
        raise ValueError(f"combiner must be one of {list(_COMBINERS)}, got {combiner}")
    columns = list(categorical_columns)
    for column in columns:
        _check_categorical(column, "All categorical_columns")
    if len({c.num_buckets for c in columns}) > 1:
        raise ValueError(f"To use shared_embedding_column, all categorical_columns must have the same number of "
                         f"buckets. Given column: {columns[0]} with buckets: {columns[0].num_buckets}, and column: "
                         f"{next(c for c in columns if c.num_buckets != columns[0].num_buckets)}")
    name = shared_embedding_collection_name or "_".join(sorted(c.name for c in columns)) + "_shared_embedding"
    init = initializer or default_initializer(dimension)
    return [SharedEmbeddingColumn(c, int(dimension), combiner, init, name, max_norm, trainable,
                                  use_safe_embedding_lookup) for c in columns]


def indicator_column(categorical_column):
    _check_categorical(categorical_column, "categorical_column")
    return IndicatorColumn(categorical_column)


def crossed_column(keys, hash_bucket_size, hash_key=None):
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, CategoricalColumn)):
            raise ValueError(f"Unsupported key type. All keys must be either string, or categorical column except "
                             f"HashedCategoricalColumn. Given: {key}")
        if isinstance(key, HashedCategoricalColumn):
            raise ValueError(f"categorical_column_with_hash_bucket is not supported for crossing. Hashing before "
                             f"crossing will increase probability of collision. Instead, use the feature name as a "
                             f"string. Given: {key}")
    return CrossedColumn(tuple(keys), int(hash_bucket_size), hash_key)


def make_parse_example_spec(feature_columns):
    spec = {}
    for column in feature_columns:
        if not hasattr(column, "parse_example_spec"):
            raise ValueError(f"All feature_columns must be FeatureColumn instances. Given: {column}")
        for key, value in column.parse_example_spec.items():
            if key in spec and spec[key] != value:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. Given {value} and "
                                 f"{spec[key]}")
            spec[key] = value
    return spec
