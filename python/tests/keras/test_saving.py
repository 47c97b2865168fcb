"""Configs and files: get_config / from_config of every layer, models to JSON and back, custom objects, and the
files of Keras' formats checked key by key (Keras v3's `.keras` zip and `.weights.h5`, Keras 2's `.h5`): the
layout tf.keras 2.15's saving_lib writes ("layers/<snake_case class>[_n]/vars/<i>", "optimizer/vars/<i>",
"vars"), and that what is loaded predicts and trains on as the saved model would."""
import json
import os
import zipfile

import h5py
import numpy as np
import pytest

import kiln as tf
from kiln import keras as K

L = K.layers
RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.normal(size=shape).astype(np.float32)


def _h5_keys(f):
    keys = []
    f.visit(keys.append)
    return sorted(keys)


LAYERS = [
    lambda: L.Dense(3, activation="relu", kernel_regularizer="l2"), lambda: L.Conv2D(2, 3, strides=2, padding="same"),
    lambda: L.Conv1D(2, 3, padding="causal"), lambda: L.MaxPooling2D(), lambda: L.MaxPooling1D(3),
    lambda: L.AveragePooling1D(), lambda: L.GlobalMaxPooling1D(), lambda: L.GlobalAveragePooling2D(),
    lambda: L.Flatten(), lambda: L.Reshape((2, 3)), lambda: L.Dropout(0.3), lambda: L.Embedding(10, 4),
    lambda: L.BatchNormalization(), lambda: L.LayerNormalization(), lambda: L.LSTM(3, return_sequences=True),
    lambda: L.GRU(2), lambda: L.SimpleRNN(2), lambda: L.Add(), lambda: L.Concatenate(axis=1), lambda: L.Dot(axes=1),
    lambda: L.RepeatVector(3), lambda: L.Permute((2, 1)), lambda: L.UpSampling1D(2), lambda: L.UpSampling2D(),
    lambda: L.ZeroPadding1D(2), lambda: L.ZeroPadding2D(((1, 2), (3, 4))), lambda: L.Cropping1D((1, 2)),
    lambda: L.Cropping2D(1), lambda: L.GaussianNoise(0.2), lambda: L.GaussianDropout(0.1),
    lambda: L.SpatialDropout1D(0.2), lambda: L.SpatialDropout2D(0.2), lambda: L.ActivityRegularization(0.1),
    lambda: L.Rescaling(0.5, 1.0), lambda: L.Normalization(mean=[1.0], variance=[2.0]), lambda: L.CenterCrop(2, 3),
    lambda: L.TimeDistributed(L.Dense(2)), lambda: L.Bidirectional(L.LSTM(2)), lambda: L.Masking(0.5),
    lambda: L.Activation("tanh"), lambda: L.LeakyReLU(0.2), lambda: L.Softmax(), lambda: L.ReLU(6.0),
    lambda: L.MultiHeadAttention(2, 4), lambda: L.DepthwiseConv2D(3, depth_multiplier=2),
    lambda: L.Conv2DTranspose(2, 3, strides=2, kernel_constraint="max_norm"), lambda: L.ELU(0.5),
    lambda: L.GlobalAveragePooling1D(keepdims=True), lambda: L.AveragePooling2D(3, padding="same"),
    lambda: L.Dense(2, use_bias=False, kernel_initializer="he_uniform"), lambda: L.InputLayer((3, 4)),
]


@pytest.mark.parametrize("make", LAYERS)
def test_every_layer_config_round_trips(make):
    layer = make()
    config = layer.get_config()
    json.dumps(config)  # plain JSON values only
    again = type(layer).from_config(config)
    assert type(again) is type(layer) and again.get_config() == config
    serialized = L.serialize(layer)
    assert serialized["class_name"] == type(layer).__name__ and serialized["module"] == "keras.layers"
    assert type(L.deserialize(json.loads(json.dumps(serialized)))) is type(layer)


def _functional():
    a, b = K.Input((4,), name="a"), K.Input((4,), name="b")
    shared = L.Dense(3, name="shared")
    merged = L.concatenate([shared(a), shared(b)], name="joined")
    out1 = L.Dense(1, name="score")(merged)
    out2 = L.Dense(2, activation="softmax", name="kind")(L.add([shared(a), shared(b)], name="summed"))
    return K.Model([a, b], [out1, out2], name="two_heads")


def test_functional_config_uses_keras_node_format_and_rebuilds_shared_layers():
    model = _functional()
    config = model.get_config()
    assert config["input_layers"] == [["a", 0, 0], ["b", 0, 0]]
    assert config["output_layers"] == [["score", 0, 0], ["kind", 0, 0]]
    by_name = {entry["name"]: entry for entry in config["layers"]}
    assert by_name["a"]["class_name"] == "InputLayer" and by_name["a"]["inbound_nodes"] == []
    assert by_name["shared"]["inbound_nodes"] == [[["a", 0, 0, {}]], [["b", 0, 0, {}]], [["a", 0, 0, {}]],
                                                  [["b", 0, 0, {}]]]
    assert by_name["joined"]["inbound_nodes"] == [[["shared", 0, 0, {}], ["shared", 1, 0, {}]]]
    assert by_name["summed"]["inbound_nodes"] == [[["shared", 2, 0, {}], ["shared", 3, 0, {}]]]
    text = model.to_json()
    assert json.loads(text)["class_name"] == "Functional" and json.loads(text)["keras_version"] == "2.15.0"
    again = K.models.model_from_json(text)
    assert again.name == "two_heads" and [layer.name for layer in again.layers] == [la.name for la in model.layers]
    again.set_weights(model.get_weights())
    x = [_x(3, 4), _x(3, 4)]
    for got, want in zip(again(x), model(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_sequential_json_has_the_input_layer_first():
    model = K.Sequential([L.Dense(4, input_shape=(3,)), L.Dropout(0.5), L.Dense(1)], name="seq")
    config = json.loads(model.to_json())
    assert config["class_name"] == "Sequential" and config["backend"] == "tensorflow"
    layers = config["config"]["layers"]
    assert [entry["class_name"] for entry in layers] == ["InputLayer", "Dense", "Dropout", "Dense"]
    assert layers[0]["config"] == {"batch_input_shape": [None, 3], "dtype": "float32", "sparse": False,
                                   "ragged": False, "name": "dense_input"}
    again = K.models.model_from_json(model.to_json())
    assert again.built and len(again.weights) == 4


@K.saving.register_keras_serializable(package="Tests")
class Scale(L.Layer):
    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor
        self.w = None

    def build(self, input_shape):
        self.w = self.add_weight("w", [input_shape[-1]], initializer="ones")

    def call(self, inputs):
        return inputs * self.w * self.factor

    def get_config(self):
        return dict(super().get_config(), factor=self.factor)


class Unregistered(Scale):
    pass


def test_custom_objects_registry_and_scope():
    assert K.saving.get_registered_name(Scale) == "Tests>Scale"
    config = L.serialize(Scale(3.0))
    assert config["registered_name"] == "Tests>Scale"
    assert L.deserialize(config).factor == 3.0
    config = L.serialize(Unregistered(4.0))
    with pytest.raises(ValueError, match="Unknown layer: 'Unregistered'"):
        L.deserialize(config)
    assert L.deserialize(config, custom_objects={"Unregistered": Unregistered}).factor == 4.0
    with K.utils.custom_object_scope({"Unregistered": Unregistered}):
        assert isinstance(L.deserialize(config), Unregistered)


def _trained(model, loss="mse", optimizer=None):
    model.compile(optimizer or K.optimizers.Adam(0.01), loss=loss, metrics=["mae"])
    x = _x(16, 3)
    model.fit(x, x[:, :1] * 2, epochs=2, batch_size=8, verbose=0)
    return model, x


def test_weights_h5_layout_key_by_key(tmp_path):
    model, x = _trained(K.Sequential([K.Input((3,)), L.Dense(4), L.BatchNormalization(), L.Dense(4), L.Dense(1)]))
    path = os.path.join(tmp_path, "m.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        assert _h5_keys(f) == [
            "layers", "layers/batch_normalization", "layers/batch_normalization/vars",
            "layers/batch_normalization/vars/0", "layers/batch_normalization/vars/1",
            "layers/batch_normalization/vars/2", "layers/batch_normalization/vars/3",
            "layers/dense", "layers/dense/vars", "layers/dense/vars/0", "layers/dense/vars/1",
            "layers/dense_1", "layers/dense_1/vars", "layers/dense_1/vars/0", "layers/dense_1/vars/1",
            "layers/dense_2", "layers/dense_2/vars", "layers/dense_2/vars/0", "layers/dense_2/vars/1",
            "optimizer", "optimizer/vars"] + [f"optimizer/vars/{i}" for i in sorted(map(str, range(17)))] + ["vars"]
        np.testing.assert_array_equal(f["layers/dense_1/vars/0"][()], model.layers[2].kernel.numpy())
        np.testing.assert_array_equal(f["layers/batch_normalization/vars/2"][()],
                                      model.layers[1].moving_mean.numpy())
        assert int(f["optimizer/vars/0"][()]) == 4  # the iterations, then Adam's m and v per weight
    fresh = K.Sequential([K.Input((3,)), L.Dense(4), L.BatchNormalization(), L.Dense(4), L.Dense(1)])
    fresh.load_weights(path)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    # Objects are found by their path, so a layer the file lacks fails.
    with pytest.raises(ValueError, match="expected 2 variables, but received 0"):
        K.Sequential([K.Input((3,)), L.Dense(4), L.LayerNormalization(), L.Dense(4), L.Dense(1)]).load_weights(path)
    # A functional model lists its InputLayer too (an empty group), as Keras does.
    functional = _functional()
    path = os.path.join(tmp_path, "f.weights.h5")
    functional.save_weights(path)
    with h5py.File(path, "r") as f:
        keys = _h5_keys(f)
    assert "layers/input_layer/vars" in keys and "layers/input_layer_1/vars" in keys
    assert "layers/dense/vars/0" in keys and "layers/concatenate" in keys and "layers/add/vars" in keys


def test_keras_zip_layout_and_load_model(tmp_path):
    model, x = _trained(K.Sequential([K.Input((3,)), L.Dense(4, activation="relu"), L.Dense(1)], name="small"))
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        metadata = json.loads(zf.read("metadata.json"))
        config = json.loads(zf.read("config.json"))
    assert sorted(metadata) == ["date_saved", "keras_version"] and metadata["keras_version"] == "2.15.0"
    assert sorted(config) == ["build_config", "class_name", "compile_config", "config", "module", "registered_name"]
    assert config["class_name"] == "Sequential" and config["build_config"] == {"input_shape": [None, 3]}
    compile_config = config["compile_config"]
    assert compile_config["loss"] == "mse" and compile_config["metrics"] == ["mae"]
    assert compile_config["optimizer"]["class_name"] == "Adam"
    assert compile_config["optimizer"]["config"]["learning_rate"] == pytest.approx(0.01)
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert isinstance(loaded.optimizer, K.optimizers.Adam)
    assert int(loaded.optimizer.iterations.numpy()) == int(model.optimizer.iterations.numpy())
    # Training goes on from the same optimizer state: one more step gives the same weights.
    y = x[:, :1] * 2
    model.train_on_batch(x, y)
    loaded.train_on_batch(x, y)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    uncompiled = K.models.load_model(path, compile=False)
    assert uncompiled.optimizer is None
    # The weights of a .keras file load into a model of the same architecture.
    other = K.Sequential([K.Input((3,)), L.Dense(4, activation="relu"), L.Dense(1)])
    other.load_weights(path)
    np.testing.assert_allclose(other.predict(x, verbose=0), uncompiled.predict(x, verbose=0), rtol=1e-6)


def test_keras_file_of_functional_custom_and_lambda_models(tmp_path):
    inputs = K.Input((3,))
    hidden = Scale(0.5)(L.Dense(3)(inputs))
    outputs = L.Lambda(lambda v: v * 3.0)(hidden)
    model = K.Model(inputs, outputs)
    x = _x(4, 3)
    path = os.path.join(tmp_path, "f.keras")
    model.save(path)
    with pytest.raises(ValueError, match="safe_mode=False"):
        K.models.load_model(path)
    loaded = K.models.load_model(path, safe_mode=False)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert isinstance(loaded.layers[2], Scale)


def test_legacy_h5_weights_and_model(tmp_path):
    model, x = _trained(K.Sequential([K.Input((3,)), L.Dense(4), L.Dense(1)]))
    path = os.path.join(tmp_path, "w.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:
        assert [n.decode() for n in f.attrs["layer_names"]] == ["dense", "dense_1"]
        text = (lambda v: v.decode() if isinstance(v, bytes) else v)
        assert text(f.attrs["keras_version"]) == "2.15.0" and text(f.attrs["backend"]) == "tensorflow"
        assert [n.decode() for n in f["dense"].attrs["weight_names"]] == ["dense/kernel:0", "dense/bias:0"]
        np.testing.assert_array_equal(f["dense/dense/kernel:0"][()], model.layers[0].kernel.numpy())
    fresh = K.Sequential([K.Input((3,)), L.Dense(4), L.Dense(1)])
    fresh.load_weights(path)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    path = os.path.join(tmp_path, "m.h5")
    model.save(path)
    with h5py.File(path, "r") as f:
        assert json.loads(f.attrs["model_config"])["class_name"] == "Sequential"
        assert "model_weights" in f
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert loaded.loss == "mse"


def test_optimizer_and_compile_configs_round_trip():
    for opt in (K.optimizers.SGD(0.1, momentum=0.9), K.optimizers.Adam(0.002, beta_1=0.8), K.optimizers.RMSprop()):
        config = K.optimizers.serialize(opt)
        again = K.optimizers.deserialize(config)
        assert type(again) is type(opt) and again.get_config() == opt.get_config()
    model = K.Sequential([K.Input((2,)), L.Dense(1)])
    model.compile(K.optimizers.SGD(0.5), loss=K.losses.MeanSquaredError(), metrics=["mae"])
    other = K.Sequential([K.Input((2,)), L.Dense(1)])
    other.compile_from_config(json.loads(json.dumps(model.get_compile_config())))
    assert isinstance(other.loss, K.losses.MeanSquaredError) and other.optimizer.get_config()["learning_rate"] == 0.5


@K.saving.register_keras_serializable(package="Tests")
class TwoLayers(K.Model):
    def __init__(self, units=3, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.first = L.Dense(units, activation="relu")
        self.second = L.Dense(1)

    def call(self, inputs):
        return self.second(self.first(inputs))

    def get_config(self):
        return {"units": self.units, "name": self.name}


def test_subclassed_model_keras_file(tmp_path):
    model = TwoLayers(4)
    model.compile("adam", loss="mse")
    x = _x(8, 3)
    model.fit(x, x[:, :1], epochs=1, verbose=0)
    path = os.path.join(tmp_path, "sub.keras")
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        config = json.loads(zf.read("config.json"))
        with h5py.File(__import__("io").BytesIO(zf.read("model.weights.h5")), "r") as f:
            keys = _h5_keys(f)
    assert config["registered_name"] == "Tests>TwoLayers" and config["config"] == {"units": 4, "name": model.name}
    assert config["build_config"] == {"input_shape": [8, 3]}  # the first call's shape, as Keras records it
    # Attribute names in sorted order, the first path found wins (Keras' walk over dir(model)): "first", then
    # the "layers" list, where the second Dense is the list's second "dense"; "second" is then already saved.
    assert keys == ["first", "first/vars", "first/vars/0", "first/vars/1", "layers", "layers/dense_1",
                    "layers/dense_1/vars", "layers/dense_1/vars/0", "layers/dense_1/vars/1", "optimizer",
                    "optimizer/vars", "optimizer/vars/0", "optimizer/vars/1", "optimizer/vars/2", "optimizer/vars/3",
                    "optimizer/vars/4", "optimizer/vars/5", "optimizer/vars/6", "optimizer/vars/7", "optimizer/vars/8",
                    "vars"]
    loaded = K.models.load_model(path)
    assert isinstance(loaded, TwoLayers) and loaded.units == 4
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)


def test_save_to_a_directory_is_a_saved_model_that_load_model_reads(tmp_path):
    model, x = _trained(K.Sequential([K.Input((3,), name="features"), L.Dense(4, activation="relu"), L.Dense(1)]))
    path = str(tmp_path / "my_model")
    model.save(path)  # TF 2.15's default format for a path without an extension
    loaded = K.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert isinstance(loaded.optimizer, K.optimizers.Adam)
    served = tf.saved_model.load(path)
    out = served.signatures["serving_default"](features=x)
    np.testing.assert_allclose(list(out.values())[0].numpy(), model.predict(x, verbose=0), rtol=1e-6)
    # ModelCheckpoint's Keras 2 default: a directory per epoch.
    model.fit(x, x[:, :1], epochs=2, verbose=0,
              callbacks=[K.callbacks.ModelCheckpoint(str(tmp_path / "ckpt_{epoch}"), monitor="loss")])
    assert K.models.load_model(str(tmp_path / "ckpt_2")).predict(x, verbose=0).shape == (16, 1)


def test_variables_a_layer_assigns_in_build_are_saved_and_loaded(tmp_path):
    # TF's "Introduction to modules" guide: FlexibleDense makes tf.Variables in build (no add_weight);
    # Keras 2 tracks them as the layer's weights, so .keras and .weights.h5 files keep them.
    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = tf.Variable(tf.random.normal([input_shape[-1], self.out_features]), name="w")
            self.b = tf.Variable(tf.random.normal([self.out_features]), name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    @tf.keras.saving.register_keras_serializable(package="test_build_variables")
    class TwoFlexible(tf.keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d1 = FlexibleDense(3)
            self.d2 = FlexibleDense(2)

        def call(self, x):
            return self.d2(self.d1(x))

    model = TwoFlexible()
    x = tf.constant([[2.0, 2.0, 2.0]])
    expected = model(x).numpy()
    model.save(str(tmp_path / "m.keras"))
    np.testing.assert_array_equal(tf.keras.models.load_model(str(tmp_path / "m.keras"))(x).numpy(), expected)
    model.save_weights(str(tmp_path / "m.weights.h5"))
    fresh = TwoFlexible()
    fresh(x)
    fresh.load_weights(str(tmp_path / "m.weights.h5"))
    np.testing.assert_array_equal(fresh(x).numpy(), expected)
