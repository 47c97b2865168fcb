"""tf.feature_column through keras.layers.DenseFeatures: values against hand-computed references (bucket
boundaries, vocabulary positions, OOV and hash buckets from kiln._farmhash's Fingerprint64, crosses by
FingerprintCat64, embedding combiners over a known matrix), eager against tf.function, and TF's errors."""
import numpy as np
import pytest

import kiln as tf
from kiln import feature_column as fc
from kiln._farmhash import fingerprint64
from kiln._farmhash import fingerprint_cat64

CROSS_KEY = 0xDECAFCAFFE  # tf.sparse.cross_hashed's default hash key


def dense(columns, features):
    return tf.keras.layers.DenseFeatures(columns)(features).numpy()


def test_numeric_column_shapes_casts_and_normalizer():
    column = fc.numeric_column("x", shape=(2,), normalizer_fn=lambda t: t * 2.0)
    out = dense(column, {"x": tf.constant([[1, 2], [3, 4]])})
    assert out.dtype == np.float32 and out.tolist() == [[2.0, 4.0], [6.0, 8.0]]
    assert dense(fc.numeric_column("y"), {"y": [0.5, 1.5]}).tolist() == [[0.5], [1.5]]  # [batch] -> [batch, 1]
    assert column.name == "x" and column.variable_shape.as_list() == [2]


def test_bucketized_column_boundaries():
    column = fc.bucketized_column(fc.numeric_column("age"), boundaries=[1, 3, 5])
    out = dense(column, {"age": [0, 1, 2, 3, 5, 6]})
    # TF's Bucketize: bucket i holds boundaries[i-1] <= x < boundaries[i].
    np.testing.assert_array_equal(out, np.eye(4)[[0, 1, 1, 2, 3, 3]])
    assert column.name == "age_bucketized" and column.num_buckets == 4


def test_vocabulary_list_indicator_oov_and_dropped_entries():
    animal = fc.categorical_column_with_vocabulary_list("Type", ["Cat", "Dog"])
    out = dense(fc.indicator_column(animal), {"Type": [["Cat", "Dog"], ["Bird", ""], ["Dog", "Dog"]]})
    assert out.tolist() == [[1, 1], [0, 0], [0, 2]]  # OOV -> default -1 (no entry); "" is missing; counts add
    with_oov = fc.categorical_column_with_vocabulary_list("Type", ["Cat", "Dog"], num_oov_buckets=3)
    out = dense(fc.indicator_column(with_oov), {"Type": ["Bird", "Cat"]})
    np.testing.assert_array_equal(out, np.eye(5)[[2 + fingerprint64(b"Bird") % 3, 0]])
    numbers = fc.categorical_column_with_vocabulary_list("n", [10, 20], num_oov_buckets=4)
    assert numbers.dtype == tf.int64
    out = dense(fc.indicator_column(numbers), {"n": tf.constant([20, 77], tf.int64)})
    np.testing.assert_array_equal(out, np.eye(6)[[1, 2 + fingerprint64(b"77") % 4]])  # an int hashed as its text


def test_vocabulary_file_identity_and_hash_bucket(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("red\ngreen\nblue\n")
    colors = fc.categorical_column_with_vocabulary_file("c", str(path), num_oov_buckets=1)
    assert colors.num_buckets == 4
    assert dense(fc.indicator_column(colors), {"c": ["blue", "pink"]}).tolist() == [[0, 0, 1, 0], [0, 0, 0, 1]]
    ident = fc.categorical_column_with_identity("i", num_buckets=3, default_value=0)
    assert dense(fc.indicator_column(ident), {"i": [2, 7]}).tolist() == [[0, 0, 1], [1, 0, 0]]
    hashed = fc.categorical_column_with_hash_bucket("h", hash_bucket_size=7)
    out = dense(fc.indicator_column(hashed), {"h": ["alpha", "beta"]})
    np.testing.assert_array_equal(out, np.eye(7)[[fingerprint64(b"alpha") % 7, fingerprint64(b"beta") % 7]])
    hashed_ints = fc.categorical_column_with_hash_bucket("k", hash_bucket_size=5, dtype=tf.int64)
    out = dense(fc.indicator_column(hashed_ints), {"k": tf.constant([42], tf.int64)})
    np.testing.assert_array_equal(out, np.eye(5)[[fingerprint64(b"42") % 5]])


def test_crossed_column_hashes_bucket_ids_and_raw_strings():
    age_buckets = fc.bucketized_column(fc.numeric_column("Age"), boundaries=[1, 3, 5])
    animal = fc.categorical_column_with_vocabulary_list("Type", ["Cat", "Dog"])
    crossed = fc.crossed_column([age_buckets, "Type"], hash_bucket_size=10)
    assert crossed.name == "Age_bucketized_X_Type"
    out = dense(fc.indicator_column(crossed), {"Age": [0, 4], "Type": ["Cat", "Dog"]})
    expected = [fingerprint_cat64(fingerprint_cat64(CROSS_KEY, bucket), fingerprint64(word)) % 10
                for bucket, word in ((0, b"Cat"), (2, b"Dog"))]
    np.testing.assert_array_equal(out, np.eye(10)[expected])
    # A categorical column crosses its ids (Type's vocabulary positions), not its strings.
    by_ids = fc.crossed_column([age_buckets, animal], hash_bucket_size=10)
    out = dense(fc.indicator_column(by_ids), {"Age": [0], "Type": ["Dog"]})
    np.testing.assert_array_equal(out, np.eye(10)[[fingerprint_cat64(fingerprint_cat64(CROSS_KEY, 0), 1) % 10]])


def test_embedding_combiners_over_a_known_matrix():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    words = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c", "d"])
    features = {"w": [["a", "c"], ["d", ""], ["", ""]], "weight": [[1.0, 3.0], [2.0, 0.0], [0.0, 0.0]]}
    init = tf.keras.initializers.Constant(table)
    mean = dense(fc.embedding_column(words, 3, initializer=init), features)
    np.testing.assert_allclose(mean, [(table[0] + table[2]) / 2, table[3], np.zeros(3)])
    total = dense(fc.embedding_column(words, 3, combiner="sum", initializer=init), features)
    np.testing.assert_allclose(total, [table[0] + table[2], table[3], np.zeros(3)])
    weighted = fc.weighted_categorical_column(words, "weight")
    sqrtn = dense(fc.embedding_column(weighted, 3, combiner="sqrtn", initializer=init), features)
    np.testing.assert_allclose(sqrtn, [(table[0] + 3 * table[2]) / np.sqrt(10), 2 * table[3] / 2, np.zeros(3)],
                               rtol=1e-6)
    clipped = dense(fc.embedding_column(words, 3, combiner="sum", initializer=init, max_norm=1.0), {"w": ["b"]})
    np.testing.assert_allclose(clipped, [table[1] / np.linalg.norm(table[1])], rtol=1e-6)


def test_dense_features_order_weights_and_traced_call():
    words = fc.categorical_column_with_vocabulary_list("w", ["a", "b"])
    layer = tf.keras.layers.DenseFeatures([fc.numeric_column("z"), fc.embedding_column(words, 2),
                                           fc.indicator_column(words)])
    features = {"z": tf.constant([5.0, 6.0]), "w": tf.constant(["b", "a"])}
    outputs = {}
    eager = layer(features, cols_to_output_tensors=outputs).numpy()
    assert eager.shape == (2, 5)
    # Sorted by name: w_embedding, w_indicator, z.
    np.testing.assert_array_equal(eager[:, 2:], [[0, 1, 5], [1, 0, 6]])
    assert sorted(c.name for c in outputs) == ["w_embedding", "w_indicator", "z"]
    assert [w.name for w in layer.weights] == [f"{layer.name}/w_embedding/embedding_weights:0"]
    np.testing.assert_allclose(eager[:, :2], layer.weights[0].numpy()[[1, 0]])
    traced = tf.function(lambda f: layer(f))(features).numpy()
    np.testing.assert_allclose(traced, eager)


def test_shared_embeddings_use_one_matrix():
    a = fc.categorical_column_with_identity("a", 3)
    b = fc.categorical_column_with_identity("b", 3)
    shared = fc.shared_embeddings([a, b], dimension=2)
    assert [c.name for c in shared] == ["a_shared_embedding", "b_shared_embedding"]
    layer = tf.keras.layers.DenseFeatures(shared)
    out = layer({"a": [0, 2], "b": [2, 1]}).numpy()
    (matrix,) = [w.numpy() for w in layer.weights]
    np.testing.assert_allclose(out, np.concatenate([matrix[[0, 2]], matrix[[2, 1]]], axis=1))


def test_embedding_gradients_reach_only_the_rows_used():
    words = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"])
    layer = tf.keras.layers.DenseFeatures(fc.embedding_column(words, 2))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer({"w": ["c", "c", "a"]}))
    grad = tf.convert_to_tensor(tape.gradient(loss, layer.weights[0])).numpy()
    np.testing.assert_allclose(grad, [[1, 1], [0, 0], [2, 2]])


def test_errors():
    words = fc.categorical_column_with_vocabulary_list("w", ["a"])
    with pytest.raises(ValueError, match="Items of feature_columns must be a DenseColumn"):
        tf.keras.layers.DenseFeatures([words])
    with pytest.raises(ValueError, match="Feature z is not in features dictionary"):
        dense(fc.numeric_column("z"), {"y": [1.0]})
    with pytest.raises(ValueError, match="We expected a dictionary here"):
        tf.keras.layers.DenseFeatures(fc.numeric_column("z"))(tf.constant([1.0]))
    with pytest.raises(ValueError, match="Column dtype and SparseTensors dtype must be compatible"):
        dense(fc.indicator_column(words), {"w": [1, 2]})
    with pytest.raises(ValueError, match="source_column must be a column generated with numeric_column"):
        fc.bucketized_column(words, [1.0])
    with pytest.raises(ValueError, match="boundaries must be a sorted list"):
        fc.bucketized_column(fc.numeric_column("x"), [3.0, 1.0])
    with pytest.raises(ValueError, match="categorical_column_with_hash_bucket is not supported for crossing"):
        fc.crossed_column([fc.categorical_column_with_hash_bucket("h", 3), "x"], 10)
    with pytest.raises(ValueError, match="keys must be a list with length > 1"):
        fc.crossed_column(["x"], 10)
    with pytest.raises(ValueError, match="Duplicate keys in vocabulary_list"):
        fc.categorical_column_with_vocabulary_list("w", ["a", "a"])
    with pytest.raises(ValueError, match="Can't specify both num_oov_buckets and default_value"):
        fc.categorical_column_with_vocabulary_list("w", ["a"], default_value=0, num_oov_buckets=1)
    with pytest.raises(ValueError, match="must have the same number of buckets"):
        fc.shared_embeddings([fc.categorical_column_with_identity("a", 3), fc.categorical_column_with_identity("b", 4)],
                             2)
    with pytest.raises(ValueError, match="Invalid dimension 0"):
        fc.embedding_column(words, 0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="exceeds number of buckets"):
        dense(fc.indicator_column(fc.categorical_column_with_identity("i", 3)), {"i": [5]})


def test_sequential_over_dense_features_fits_saves_and_loads(tmp_path):
    age = fc.bucketized_column(fc.numeric_column("Age"), [1, 3, 5])
    animal = fc.categorical_column_with_vocabulary_list("Type", ["Cat", "Dog"])
    columns = [fc.numeric_column("Fee"), age, fc.embedding_column(animal, 3),
               fc.indicator_column(fc.crossed_column([age, "Type"], 10))]
    model = tf.keras.Sequential([tf.keras.layers.DenseFeatures(columns), tf.keras.layers.Dense(1)])
    features = {"Fee": [1.0, 2.0, 0.5, 3.0], "Age": [0, 4, 2, 6], "Type": ["Cat", "Dog", "Dog", "Cat"]}
    data = tf.data.Dataset.from_tensor_slices((features, [0.0, 1.0, 1.0, 0.0])).batch(2)
    model.compile(optimizer="sgd", loss="mse")
    losses = model.fit(data, epochs=3, verbose=0).history["loss"]
    assert losses[-1] < losses[0]
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = tf.keras.models.load_model(path)
    batch = {k: tf.constant(v) for k, v in features.items()}
    np.testing.assert_allclose(loaded(batch).numpy(), model(batch).numpy(), rtol=1e-6)
    config = loaded.layers[0].get_config()["feature_columns"]
    # Sorted by name: Age_bucketized, Age_bucketized_X_Type_indicator, Fee, Type_embedding.
    assert [c["class_name"] for c in config] == ["BucketizedColumn", "IndicatorColumn", "NumericColumn",
                                                 "EmbeddingColumn"]


def test_parse_example_spec_feeds_dense_features():
    words = fc.categorical_column_with_vocabulary_list("w", ["a", "b", "c"])
    columns = [fc.numeric_column("x"), fc.indicator_column(words)]
    spec = fc.make_parse_example_spec(columns)
    assert sorted(spec) == ["w", "x"] and type(spec["w"]).__name__ == "VarLenFeature"
    assert spec["x"].shape == (1,) and spec["x"].dtype == tf.float32

    def example(x, ws):
        return tf.train.Example(features=tf.train.Features(feature={
            "x": tf.train.Feature(float_list=tf.train.FloatList(value=[x])),
            "w": tf.train.Feature(bytes_list=tf.train.BytesList(value=[w.encode() for w in ws]))})).SerializeToString()
    parsed = tf.io.parse_example([example(1.0, ["a", "c"]), example(2.0, ["b"])], spec)  # "w" is a SparseTensor
    out = tf.keras.layers.DenseFeatures(columns)(parsed).numpy()
    assert out.tolist() == [[1, 0, 1, 1], [0, 1, 0, 2]]  # w_indicator, then x


def test_ragged_features_are_padded_with_missing_entries():
    words = fc.categorical_column_with_vocabulary_list("w", ["a", "b"])
    out = dense(fc.indicator_column(words), {"w": tf.ragged.constant([["a", "b", "b"], [], ["a"]])})
    assert out.tolist() == [[1, 2], [0, 0], [1, 0]]
