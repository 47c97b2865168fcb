"""keras.utils.FeatureSpace: encoded values against hand-computed ones (normalization, Keras' vocabulary order,
hash bins from kiln._farmhash), concat and dict outputs, eager against tf.data map, unbatched calls, .keras
save and load, and Keras' errors. (The keras.io program: python/tests/programs/test_keras_io.py.)"""
import numpy as np
import pytest

import kiln as tf
from kiln import keras
from kiln._farmhash import fingerprint64
from kiln.keras.utils import FeatureSpace

DATA = {"f": [0.0, 1.0, 2.0, 3.0], "s": ["zero", "one", "one", "three"], "i": [0, 1, 2, 2]}


def adapted(**kwargs):
    space = FeatureSpace(features={"f": "float_normalized", "s": "string_categorical", "i": "integer_categorical"},
                         **kwargs)
    space.adapt(tf.data.Dataset.from_tensor_slices(DATA))
    return space


def one_hot(index, depth):
    return np.eye(depth, dtype=np.float32)[index]


def test_concat_layout_and_values():
    space = adapted(crosses=[("s", "i")], crossing_dim=8)
    out = space(DATA).numpy()
    assert out.shape == (4, 1 + 4 + 4 + 8)  # sorted names f, i, s, then the cross
    np.testing.assert_allclose(out[:, 0], (np.array(DATA["f"]) - 1.5) / np.sqrt(1.25), rtol=1e-6)
    # Keras' vocabulary: by count, ties by the token, both descending, after the OOV index 0.
    assert space.preprocessors["i"].get_vocabulary() == [-1, 2, 1, 0]
    assert space.preprocessors["s"].get_vocabulary() == ["[UNK]", "one", "zero", "three"]
    np.testing.assert_array_equal(out[:, 1:5], one_hot([3, 2, 1, 1], 4))
    np.testing.assert_array_equal(out[:, 5:9], one_hot([2, 1, 1, 3], 4))
    # The cross hashes the lookups' indices (HashedCrossing), one-hot in crossing_dim bins.
    bins = keras.layers.HashedCrossing(8)([tf.constant([2, 1, 1, 3], tf.int64), tf.constant([3, 2, 1, 1], tf.int64)])
    np.testing.assert_array_equal(out[:, 9:], one_hot(bins.numpy(), 8))


def test_dict_output_int_modes_and_hashed_features():
    space = FeatureSpace(
        features={"s": FeatureSpace.string_hashed(num_bins=5, output_mode="int"),
                  "i": FeatureSpace.integer_categorical(output_mode="int"),
                  "b": FeatureSpace.float_discretized(num_bins=2)},
        output_mode="dict")
    data = {"s": DATA["s"], "i": DATA["i"], "b": DATA["f"]}
    space.adapt(tf.data.Dataset.from_tensor_slices(data))
    out = space(data)
    assert sorted(out) == ["b", "i", "s"]
    assert out["s"].numpy().reshape(-1).tolist() == [fingerprint64(w.encode()) % 5 for w in DATA["s"]]
    assert out["i"].numpy().reshape(-1).tolist() == [3, 2, 1, 1]
    bounds = space.preprocessors["b"].bin_boundaries  # adapted: one boundary inside the data
    assert len(bounds) == 1 and 0.0 < bounds[0] <= 3.0
    np.testing.assert_array_equal(out["b"].numpy(), one_hot(np.digitize(DATA["f"], bounds), 2))


def test_eager_equals_dataset_map_and_unbatched_calls():
    space = adapted(crosses=[("s", "i")], crossing_dim=4)
    eager = space(DATA).numpy()
    mapped = next(iter(tf.data.Dataset.from_tensor_slices(DATA).batch(4).map(space))).numpy()
    np.testing.assert_allclose(mapped, eager, rtol=1e-6)
    single = space({"f": 1.0, "s": "one", "i": 1}).numpy()
    assert single.shape == (eager.shape[1],)
    np.testing.assert_allclose(single, eager[1], rtol=1e-6)


def test_functional_inputs_and_encoded_features():
    space = adapted()
    inputs, encoded = space.get_inputs(), space.get_encoded_features()
    assert sorted(inputs) == ["f", "i", "s"] and inputs["s"].dtype == tf.string and inputs["i"].dtype == tf.int64
    assert encoded.shape.as_list() == [None, 9]
    model = keras.Model(inputs, encoded)
    np.testing.assert_allclose(model.predict({k: tf.constant(v) for k, v in DATA.items()}, verbose=0),
                               space(DATA).numpy(), rtol=1e-6)


def test_save_and_load_keras_file(tmp_path):
    space = adapted(crosses=[FeatureSpace.cross(("s", "i"), crossing_dim=16)])
    path = str(tmp_path / "space.keras")
    space.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, FeatureSpace) and list(loaded.crossers) == ["s_X_i"]
    with pytest.warns(UserWarning, match="not yet been built"):  # as Keras: a loaded FeatureSpace builds on use
        loaded.save(str(tmp_path / "again.keras"))
    reference = space(DATA).numpy()
    np.testing.assert_array_equal(loaded(DATA).numpy(), reference)
    # A model over the loaded space's inputs and encoded features, saved and loaded in turn.
    model = keras.Model(inputs=loaded.get_inputs(), outputs=loaded.get_encoded_features())
    model.save(str(tmp_path / "model.keras"))
    rows = tf.data.Dataset.from_tensor_slices(DATA).batch(4)
    np.testing.assert_allclose(keras.models.load_model(str(tmp_path / "model.keras")).predict(rows, verbose=0),
                               reference, rtol=1e-6)
    np.testing.assert_array_equal(keras.models.load_model(str(tmp_path / "again.keras"))(DATA).numpy(), reference)


def test_errors():
    with pytest.raises(ValueError, match="Invalid feature type: floaty"):
        FeatureSpace(features={"f": "floaty"})
    with pytest.raises(ValueError, match="cannot be None or empty"):
        FeatureSpace(features={})
    with pytest.raises(ValueError, match="Received unknown features"):
        FeatureSpace(features={"f": "float"}, crosses=[("f", "g")])
    with pytest.raises(ValueError, match="Expected one of {'dict', 'concat'}"):
        FeatureSpace(features={"f": "float"}, output_mode="list")
    space = FeatureSpace(features={"s": "string_categorical"})
    with pytest.raises(ValueError, match=r"You need to call `.adapt\(dataset\)`"):
        space({"s": ["a"]})
    with pytest.raises(ValueError, match="can only be called on a tf.data.Dataset"):
        space.adapt({"s": ["a"]})
    space = FeatureSpace(features={"f": "float"})  # nothing to adapt
    with pytest.raises(ValueError, match="can only be called with a dict"):
        space([1.0])
    space = FeatureSpace(features={"s": FeatureSpace.string_categorical(output_mode="int")}, output_mode="concat")
    with pytest.raises(ValueError, match="Cannot concatenate features because feature 's' has not been encoded"):
        space.adapt(tf.data.Dataset.from_tensor_slices({"s": ["a"]}))  # adapt builds, as Keras'



TEN = {"float_1": [i / 10 for i in range(10)], "float_2": [i / 10 for i in range(10)],
       "float_3": [i / 10 for i in range(10)], "string_1": [str(i) for i in range(10)],
       "string_2": [str(i) for i in range(10)], "int_1": list(range(10)), "int_2": list(range(10)),
       "int_3": list(range(10))}


def test_keras_widths_for_every_kind():
    """The widths Keras 2.15's own tests of FeatureSpace expect for these features."""
    space = FeatureSpace(
        features={"float_1": "float", "float_2": "float_normalized", "float_3": "float_discretized",
                  "string_1": "string_categorical", "string_2": "string_hashed", "int_1": "integer_categorical",
                  "int_2": "integer_hashed", "int_3": "integer_categorical"},
        crosses=[("float_3", "string_1"), ("string_2", "int_2")], output_mode="concat")
    space.adapt(tf.data.Dataset.from_tensor_slices(TEN))
    space.adapt(tf.data.Dataset.from_tensor_slices(TEN).batch(4))  # batched adapt too
    assert space({k: v[0] for k, v in TEN.items()}).shape.as_list() == [195]
    assert space({k: tf.constant(v) for k, v in TEN.items()}).shape.as_list() == [10, 195]
    advanced = FeatureSpace(
        features={"float_1": FeatureSpace.float(), "float_2": FeatureSpace.float_normalized(),
                  "float_3": FeatureSpace.float_discretized(num_bins=3),
                  "string_1": FeatureSpace.string_categorical(max_tokens=5),
                  "string_2": FeatureSpace.string_hashed(num_bins=32),
                  "int_1": FeatureSpace.integer_categorical(max_tokens=5, num_oov_indices=2),
                  "int_2": FeatureSpace.integer_hashed(num_bins=32),
                  "int_3": FeatureSpace.integer_categorical(max_tokens=5)},
        crosses=[FeatureSpace.cross(("float_3", "string_1"), crossing_dim=32),
                 FeatureSpace.cross(("string_2", "int_2"), crossing_dim=32)], output_mode="concat")
    advanced.adapt(tf.data.Dataset.from_tensor_slices(TEN))
    assert advanced({k: v[0] for k, v in TEN.items()}).shape.as_list() == [148]
    text = {"text": ["1st string", "2nd string", "3rd string"]}
    custom = FeatureSpace(features={"text": FeatureSpace.feature(
        preprocessor=keras.layers.TextVectorization(output_mode="tf_idf"), dtype="string", output_mode="float")})
    custom.adapt(tf.data.Dataset.from_tensor_slices(text))
    assert custom(text).shape.as_list() == [3, 5]
    hashed_only = FeatureSpace({"int_1": "integer_hashed"})  # nothing to adapt
    assert hashed_only({"int_1": TEN["int_1"]}).shape.as_list() == [10, 32]
