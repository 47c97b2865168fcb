"""tf.lookup: the tables' values against TF's documented outputs and hand-computed ones (OOV buckets from
FarmHash's Fingerprint64, kiln._farmhash), eager against tf.function and tf.data map, the mutable tables' inserts,
removals, exports and checkpoints, and TF's error classes."""
import os

import numpy as np
import pytest

import kiln as tf
from kiln._farmhash import fingerprint64


def static_table():
    init = tf.lookup.KeyValueTensorInitializer(tf.constant(["a", "b", "c"]), tf.constant([7, 8, 9]))
    return tf.lookup.StaticHashTable(init, default_value=-1)


def test_static_hash_table_tf_doc_example():
    table = static_table()
    out = table.lookup(tf.constant(["a", "f"]))
    assert out.dtype == tf.int32 and out.numpy().tolist() == [7, -1]
    assert table[tf.constant([["a", "b"], ["c", "d"]])].numpy().tolist() == [[7, 8], [9, -1]]
    assert table.size().numpy() == 3 and table.size().dtype == tf.int64
    keys, values = table.export()
    assert sorted(zip(keys.numpy().tolist(), values.numpy().tolist())) == [(b"a", 7), (b"b", 8), (b"c", 9)]
    assert table.key_dtype == tf.string and table.value_dtype == tf.int32 and table.default_value.numpy() == -1


def test_static_hash_table_integer_and_float_values():
    init = tf.lookup.KeyValueTensorInitializer([1, 5, 9], [0.5, 1.5, 2.5], key_dtype=tf.int64, value_dtype=tf.float64)
    table = tf.lookup.StaticHashTable(init, default_value=np.nan)
    out = table.lookup(tf.constant([9, 1, 2], tf.int64)).numpy()
    assert out[:2].tolist() == [2.5, 0.5] and np.isnan(out[2])


def test_static_vocabulary_table_tf_doc_examples():
    init = tf.lookup.KeyValueTensorInitializer(keys=tf.constant(["emerson", "lake", "palmer"]),
                                               values=tf.constant([0, 1, 2], dtype=tf.int64))
    table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=5)
    assert table[tf.constant(["emerson", "lake", "palmer", "king", "crimson"])].numpy().tolist() == [0, 1, 2, 6, 7]
    assert table.size().numpy() == 8
    # OOV ids from the table's size regardless of its values (TF's note on collisions).
    init = tf.lookup.KeyValueTensorInitializer(keys=tf.constant(["emerson", "lake", "palmer"]),
                                               values=tf.constant([1, 2, 3], dtype=tf.int64))
    table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=1)
    assert table[tf.constant(["emerson", "lake", "palmer", "king"])].numpy().tolist() == [1, 2, 3, 3]


def test_static_vocabulary_table_from_text_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(["emerson", "lake", "palmer", "crimnson"]))
    init = tf.lookup.TextFileInitializer(str(path), key_dtype=tf.string, key_index=tf.lookup.TextFileIndex.WHOLE_LINE,
                                         value_dtype=tf.int64, value_index=tf.lookup.TextFileIndex.LINE_NUMBER)
    table = tf.lookup.StaticVocabularyTable(init, 3)
    out = table.lookup(tf.constant(["palmer", "crimnson", "king", "tarkus", "black", "moon"]))
    assert out.numpy().tolist() == [2, 3, 5, 6, 6, 4]  # TF's documented output


def test_oov_buckets_are_fingerprint64_of_the_key_or_its_decimal_text():
    table = tf.lookup.StaticVocabularyTable(None, num_oov_buckets=7)
    words = ["", "a", "hello world", "x" * 40]
    assert table.lookup(tf.constant(words)).numpy().tolist() == [fingerprint64(w.encode()) % 7 for w in words]
    init = tf.lookup.KeyValueTensorInitializer(tf.constant([10, 20], tf.int64), tf.constant([0, 1], tf.int64))
    table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=4)
    assert table.lookup(tf.constant([20, 42, -3], tf.int64)).numpy().tolist() == \
        [1, 2 + fingerprint64(b"42") % 4, 2 + fingerprint64(b"-3") % 4]


def test_text_file_columns_offset_and_vocab_size(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("cat\t3\nowl\t5\nyak\t11\n")
    by_column = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(str(path), tf.string, 0, tf.int64, 1), -1)
    assert by_column.lookup(tf.constant(["owl", "yak", "emu"])).numpy().tolist() == [5, 11, -1]
    offset = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(path), tf.string, 0, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, value_index_offset=100), -1)
    assert offset.lookup(tf.constant(["cat", "yak"])).numpy().tolist() == [100, 102]
    first_two = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(path), tf.string, 0, tf.int64, 1, vocab_size=2), -1)
    assert first_two.size().numpy() == 2
    lines = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
        str(path), tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE),
        "UNK")
    assert lines.lookup(tf.constant([1, 7], tf.int64)).numpy().tolist() == [b"owl\t5", b"UNK"]


def test_sparse_and_ragged_keys_keep_their_structure():
    table = static_table()
    sparse = tf.SparseTensor(indices=[[0, 0], [1, 2]], values=["c", "z"], dense_shape=[2, 3])
    out = table.lookup(sparse)
    assert isinstance(out, tf.SparseTensor) and out.values.numpy().tolist() == [9, -1]
    assert out.indices.numpy().tolist() == [[0, 0], [1, 2]]
    ragged = tf.ragged.constant([["a"], ["b", "q", "c"]])
    assert table.lookup(ragged).to_list() == [[7], [8, -1, 9]]


def test_eager_equals_tf_function_and_dataset_map():
    init = tf.lookup.KeyValueTensorInitializer(["x", "y"], tf.constant([3, 4], tf.int64))
    table = tf.lookup.StaticVocabularyTable(init, num_oov_buckets=2)
    keys = tf.constant([["y", "q"], ["x", "zz"]])
    eager = table.lookup(keys).numpy()
    traced = tf.function(lambda k: table.lookup(k))(keys)
    assert traced.shape == (2, 2) and traced.numpy().tolist() == eager.tolist()
    mapped = list(tf.data.Dataset.from_tensor_slices(keys).map(table.lookup).as_numpy_iterator())
    assert np.stack(mapped).tolist() == eager.tolist()


def test_mutable_hash_table_insert_remove_export_and_traced_updates():
    table = tf.lookup.experimental.MutableHashTable(key_dtype=tf.string, value_dtype=tf.int64, default_value=-1)
    table.insert(tf.constant(["a", "b", "c"]), tf.constant([1, 2, 3], tf.int64))
    table.insert(tf.constant(["b"]), tf.constant([20], tf.int64))  # overwrites
    table.remove(tf.constant(["c", "never"]))
    assert table.lookup(tf.constant(["a", "b", "c"])).numpy().tolist() == [1, 20, -1]
    assert table.size().numpy() == 2
    keys, values = table.export()
    assert dict(zip(keys.numpy().tolist(), values.numpy().tolist())) == {b"a": 1, b"b": 20}

    @tf.function
    def add_then_count(k, v):
        table.insert(k, v)
        return table.size(), table.lookup(k)

    size, found = add_then_count(tf.constant(["d", "e"]), tf.constant([4, 5], tf.int64))
    assert size.numpy() == 4 and found.numpy().tolist() == [4, 5]
    size, _ = add_then_count(tf.constant(["f"]), tf.constant([6], tf.int64))  # the graph reads the table each run
    assert size.numpy() == 5
    dynamic = table.lookup(tf.constant(["a", "zz"]), dynamic_default_values=tf.constant([0, 99], tf.int64))
    assert dynamic.numpy().tolist() == [1, 99]


def test_mutable_hash_table_vector_values():
    table = tf.lookup.experimental.MutableHashTable(tf.int64, tf.float32, default_value=[0.0, -1.0])
    table.insert(tf.constant([3, 4], tf.int64), tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    out = table.lookup(tf.constant([[4], [5]], tf.int64))
    assert out.shape == (2, 1, 2) and out.numpy().tolist() == [[[3.0, 4.0]], [[0.0, -1.0]]]


def test_dense_hash_table_reserved_keys_and_buckets():
    table = tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, default_value=-1, empty_key=0, deleted_key=-1,
                                                  initial_num_buckets=4)
    table.insert(tf.constant([5, 6, 7, 8], tf.int64), tf.constant([50, 60, 70, 80], tf.int64))
    assert table.lookup(tf.constant([6, 9], tf.int64)).numpy().tolist() == [60, -1]
    keys, values = table.export()
    assert keys.shape == (8,)  # 4 entries > 0.8 * 4 buckets: doubled
    assert sorted(k for k in keys.numpy().tolist() if k != 0) == [5, 6, 7, 8]
    table.erase(tf.constant([5], tf.int64))
    table.insert_or_assign(tf.constant([6], tf.int64), tf.constant([66], tf.int64))
    assert table.size().numpy() == 3 and table.lookup(tf.constant([5, 6], tf.int64)).numpy().tolist() == [-1, 66]
    with pytest.raises(tf.errors.InvalidArgumentError, match="empty_key"):
        table.insert(tf.constant([0], tf.int64), tf.constant([1], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="deleted_key"):
        table.lookup(tf.constant([-1], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError, match="different values"):
        tf.lookup.experimental.DenseHashTable(tf.int64, tf.int64, -1, empty_key=3, deleted_key=3)


def test_mutable_table_checkpoint_round_trip(tmp_path):
    table = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    table.insert(tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64))
    path = tf.train.Checkpoint(table=table).save(os.path.join(tmp_path, "ckpt"))
    names = dict(tf.train.list_variables(path))
    assert names["table/.ATTRIBUTES/table-keys"] == [2] and names["table/.ATTRIBUTES/table-values"] == [2]
    restored = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    restored.insert(tf.constant(["stale"]), tf.constant([9], tf.int64))
    tf.train.Checkpoint(table=restored).restore(path).assert_consumed()
    assert restored.lookup(tf.constant(["a", "b", "stale"])).numpy().tolist() == [1, 2, -1]


def test_dataset_initializer():
    ds = tf.data.Dataset.from_tensor_slices((tf.constant(["p", "q"]), tf.constant([1, 2], tf.int64)))
    table = tf.lookup.StaticHashTable(tf.lookup.experimental.DatasetInitializer(ds), -1)
    assert table.lookup(tf.constant(["q", "r"])).numpy().tolist() == [2, -1]


def test_errors(tmp_path):
    table = static_table()
    with pytest.raises(TypeError, match="Dtype of argument `keys` must be <dtype: 'string'>, received: <dtype: 'int32'>"):
        table.lookup(tf.constant([1]))
    with pytest.raises(ValueError, match="`num_oov_buckets` must be > 0"):
        tf.lookup.StaticVocabularyTable(None, 0)
    with pytest.raises(TypeError, match="Invalid `value_dtype`"):
        tf.lookup.StaticVocabularyTable(tf.lookup.KeyValueTensorInitializer(["a"], [1]), 1)
    with pytest.raises(tf.errors.FailedPreconditionError, match="HashTable has different value for same key"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "a"], [1, 2]), -1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Expected shape"):
        tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(["a", "b"], [1]), -1)
    path = tmp_path / "v.txt"
    path.write_text("a\nb\n")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid vocab_size"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(str(path), tf.string, -2, tf.int64, -1, vocab_size=5),
                                  -1)
    with pytest.raises(ValueError, match="`key_dtype` must be int64"):
        tf.lookup.TextFileInitializer(str(path), tf.string, tf.lookup.TextFileIndex.LINE_NUMBER, tf.string, -2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a valid int64"):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(str(path), tf.int64, -2, tf.int64, -1), -1)
    with pytest.raises(tf.errors.NotFoundError):
        tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(str(tmp_path / "none"), tf.string, -2, tf.int64, -1),
                                  -1)
    mutable = tf.lookup.experimental.MutableHashTable(tf.string, tf.int64, -1)
    with pytest.raises(TypeError, match="Invalid value dtype"):
        mutable.insert(tf.constant(["a"]), tf.constant([1.0]))


def test_tables_from_datasets():
    words = tf.data.Dataset.from_tensor_slices(["emerson", "lake", "palmer", "king"])
    table = tf.lookup.experimental.index_table_from_dataset(words, num_oov_buckets=5, vocab_size=3)
    out = table.lookup(tf.constant(["emerson", "lake", "palmer", "king", "crimson"]))
    assert out.numpy().tolist() == [0, 1, 2, 6, 7]  # "king" beyond vocab_size: TF's documented OOV buckets
    pairs = tf.data.Dataset.from_tensor_slices((tf.constant([3, 4], tf.int64), tf.constant([0.5, 1.5])))
    table = tf.lookup.experimental.table_from_dataset(pairs, default_value=-1.0)
    assert table.lookup(tf.constant([4, 9], tf.int64)).numpy().tolist() == [1.5, -1.0]
