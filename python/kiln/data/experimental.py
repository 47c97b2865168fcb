"""tf.data.experimental: the names TF 2.15 keeps there (most are also Dataset methods)."""
from ._dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset  # noqa: F401
from ._options import AutoShardPolicy, ExternalStatePolicy, AutotuneOptions, DistributeOptions  # noqa: F401
from ._options import OptimizationOptions, ThreadingOptions  # noqa: F401
from . import _transforms as _t
from ._readers import CsvDataset, make_csv_dataset  # noqa: F401
from ._iterator import Optional  # noqa: F401


def cardinality(dataset):
    return dataset.cardinality()


def assert_cardinality(expected_cardinality):
    return lambda dataset: dataset.assert_cardinality(expected_cardinality)


def ignore_errors(log_warning=False):
    return lambda dataset: dataset.ignore_errors(log_warning)


def unique():
    return lambda dataset: dataset.unique()


def rejection_resample(class_func, target_dist, initial_dist=None, seed=None):
    return lambda ds: _t.rejection_resample(ds, class_func, target_dist, initial_dist, seed)


def scan(initial_state, scan_func):
    return lambda dataset: dataset.scan(initial_state, scan_func)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    return lambda dataset: dataset.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    return lambda dataset: dataset.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
        pad_to_bucket_boundary, no_padding, drop_remainder)


def enumerate_dataset(start=0):
    return lambda dataset: dataset.enumerate(start)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    return _t.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    return _t.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def Counter(start=0, step=1, dtype=None):  # noqa: N802 - TF's name
    from .. import dtypes
    return Dataset.counter(start, step, dtypes.int64 if dtype is None else dtype)


def get_single_element(dataset):
    return dataset.get_single_element()


def save(dataset, path, compression=None, shard_func=None, checkpoint_args=None):
    dataset.save(path, compression, shard_func, checkpoint_args)


def load(path, element_spec=None, compression=None, reader_func=None):
    return Dataset.load(path, element_spec, compression, reader_func)


class TFRecordWriter:
    """tf.data.experimental.TFRecordWriter: writes a dataset of string scalars as one
    TFRecord file (compression_type None, "", "ZLIB" or "GZIP")."""

    def __init__(self, filename, compression_type=None):
        from ..io import _tfrecord
        self._filename = filename.numpy().decode() if hasattr(filename, "numpy") else str(filename)
        self._compression = _tfrecord.compression_of(compression_type)

    def write(self, dataset):
        from .. import dtypes
        from ..function import TensorSpec
        from ..io import _tfrecord
        spec = dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.dtype != dtypes.string or spec.shape.rank != 0:
            raise TypeError("Invalid `dataset.` Expected a `dataset` that produces scalar `tf.string` elements, but "
                            f"got a dataset which produces elements with element_spec {spec}.")
        options = _tfrecord.TFRecordOptions(compression_type=self._compression)
        with _tfrecord.TFRecordWriter(self._filename, options) as writer:
            for record in dataset:
                writer.write(record.numpy())


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=None):
    from .. import dtypes
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder,
                                                dtypes.int64 if row_splits_dtype is None else row_splits_dtype)


def dense_to_sparse_batch(batch_size, row_shape):
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)


# TF's deprecated tf.data.experimental transformations: each is what TF's documentation says it equals.
def take_while(predicate):
    return lambda dataset: dataset.take_while(predicate)


def unbatch():
    return lambda dataset: dataset.unbatch()


def snapshot(path, compression="AUTO", reader_func=None, shard_func=None):
    return lambda dataset: dataset.snapshot(path, compression, reader_func, shard_func)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """shuffle (reshuffled each epoch) then repeat."""
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed, reshuffle_each_iteration=True).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    return lambda dataset: dataset.map(map_func, num_parallel_calls=num_parallel_calls).batch(
        batch_size, drop_remainder=drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                        prefetch_input_elements=None):
    """interleave, in its deterministic order (TF's with sloppy=False; sloppy only permits other orders)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length=cycle_length, block_length=block_length)


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """Batches of serialized Examples parsed with tf.io.parse_example."""
    from ..io import parse_example
    return lambda dataset: dataset.map(lambda serialized: parse_example(serialized, features))


def get_structure(dataset_or_iterator):
    """The element_spec of a dataset or an iterator over one."""
    spec = getattr(dataset_or_iterator, "element_spec", None)
    if spec is None:
        raise TypeError(f"Invalid `dataset_or_iterator`. `dataset_or_iterator` must be a `tf.data.Dataset` or "
                        f"tf.data.Iterator object, but got {type(dataset_or_iterator)}.")
    return spec


def get_next_as_optional(iterator):
    return iterator.get_next_as_optional()


def at(dataset, index):
    """The element at `index`; OutOfRangeError past the end."""
    from .. import errors
    from .._ops import convert_to_tensor
    index = int(convert_to_tensor(index).numpy())
    if index < 0:
        raise errors.InvalidArgumentError(f"Index must be non-negative, but got {index}.")
    for element in dataset.skip(index).take(1):
        return element
    raise errors.OutOfRangeError(f"Index out of range [0, {index}).")


def from_list(elements, name=None):
    """A dataset of the list's elements (each a structure of the same kind), as from_tensor_slices of them
    stacked."""
    from .. import nest
    from .._ops import stack
    if not elements:
        raise ValueError("Invalid `elements`. `elements` should not be empty.")
    if not isinstance(elements, list):
        raise ValueError(f"Invalid `elements`. `elements` must be a list, but got {type(elements)}.")
    flat = [nest.flatten(e) for e in elements]
    stacked = [stack([f[k] for f in flat]) for k in range(len(flat[0]))]
    return Dataset.from_tensor_slices(nest.pack_sequence_as(elements[0], stacked))


def RandomDataset(seed=None, rerandomize_each_iteration=None, name=None):  # noqa: N802 - TF's (class) name
    """Random int64 scalars in [0, 2**32), forever: Dataset.random (TF's class is that dataset's type)."""
    return Dataset.random(seed, rerandomize_each_iteration)


def SqlDataset(driver_name, data_source_name, query, output_types):  # noqa: N802 - TF's (class) name
    """The rows a SQL query returns, each a tuple in output_types; TF's one driver, "sqlite" (Python's sqlite3).
    The query runs anew on every pass."""
    import sqlite3
    from .. import dtypes
    from ..function import TensorSpec
    if driver_name != "sqlite":
        raise ValueError(f"The database type, {driver_name}, is not supported by SqlDataset. The set of supported "
                         "databases is: {'sqlite'}.")
    types = tuple(dtypes.as_dtype(t) for t in (output_types if isinstance(output_types, (list, tuple))
                                               else (output_types,)))

    def rows():
        connection = sqlite3.connect(data_source_name.decode() if isinstance(data_source_name, bytes)
                                     else str(data_source_name))
        try:
            for row in connection.execute(query.decode() if isinstance(query, bytes) else str(query)):
                if len(row) != len(types):
                    from .. import errors
                    raise errors.InvalidArgumentError(f"The number of columns in the query ({len(row)}) must match "
                                                      f"the number of elements in output_types ({len(types)}).")
                yield tuple(str(v).encode() if t == dtypes.string and not isinstance(v, bytes) else v
                            for v, t in zip(row, types))
        finally:
            connection.close()
    signature = tuple(TensorSpec([], t) for t in types)
    if isinstance(output_types, (list, tuple)):
        return Dataset.from_generator(rows, output_signature=signature)
    return Dataset.from_generator(lambda: (r[0] for r in rows()), output_signature=signature[0])
