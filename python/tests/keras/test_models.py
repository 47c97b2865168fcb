"""Sequential, functional and subclassed Models: building, calling, variables, summary (the C++ golden
text), errors."""
import numpy as np
import pytest

import kiln as tf
from keras_util import golden

K = tf.keras


def summary_text(model):
    lines = []
    model.summary(print_fn=lines.append)
    return "\n".join(lines) + "\n"


def seed_cnn_sequential():
    """tests/nn_sequential_test.cpp's CnnSummaryWithThousandsSeparators model."""
    model = K.Sequential()
    model.add(K.layers.Conv2D(32, 5, padding="same", activation="relu", input_shape=(28, 28, 1)))
    model.add(K.layers.MaxPool2D(2, strides=2))
    model.add(K.layers.Conv2D(64, 5, padding="same", activation="relu"))
    model.add(K.layers.MaxPool2D(2, strides=2))
    model.add(K.layers.Reshape((7 * 7 * 64,)))
    model.add(K.layers.Dense(1024, activation="relu"))
    model.add(K.layers.Dense(10))
    return model


def test_summary_is_the_cpp_summary_text():
    assert summary_text(seed_cnn_sequential()) == golden("nn_summary_cnn.txt")


def test_seed_dense_summary_is_the_cpp_summary_text(capsys):
    model = K.Sequential()
    model.add(K.layers.Dense(4, input_shape=(10,)))
    model.add(K.layers.Dense(2))
    model.add(K.layers.Dense(1))
    model.summary()   # to stdout by default
    assert capsys.readouterr().out == golden("nn_summary_dense.txt")


def test_sequential_builds_each_layer_as_it_is_added_when_the_input_shape_is_known():
    model = K.Sequential([K.Input(shape=(4,)), K.layers.Dense(3)])
    assert model.built and model.layers[0].built
    model.add(K.layers.Dense(2))
    assert model.layers[1].kernel.shape == (3, 2)
    assert [layer.name for layer in model.layers] == ["dense", "dense_1"]
    assert [v.name for v in model.weights] == ["dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "dense_1/bias:0"]
    lazy = K.Sequential([K.layers.Dense(3), K.layers.Dense(1)])
    assert not lazy.built
    with pytest.raises(ValueError, match="This model has not yet been built"):
        lazy.summary()
    lazy(np.zeros((7, 5), np.float32))
    assert lazy.built and lazy.layers[0].kernel.shape == (5, 3)
    assert "(None, 3)" in summary_text(lazy)


def test_sequential_call_equals_the_layers_in_turn():
    model = K.Sequential([K.layers.Dense(4, activation="relu", input_shape=(3,)), K.layers.Dense(2),
                          K.layers.Softmax()])
    x = np.random.rand(5, 3).astype(np.float32)
    y = x
    for layer in model.layers:
        y = layer(y)
    np.testing.assert_allclose(model(x).numpy(), y.numpy(), rtol=1e-6)
    np.testing.assert_allclose(model.predict(x, verbose=0), y.numpy(), rtol=1e-6)


def test_sequential_checks_its_input_shape():
    model = seed_cnn_sequential()
    with pytest.raises(ValueError, match=r'Input 0 of layer "sequential" is incompatible with the layer: expected '
                                         r"shape=\(None, 28, 28, 1\), found shape=\(50, 28, 27\)"):
        model(np.zeros((50, 28, 27), np.float32))
    # Keras' allow_last_axis_squeeze: a missing last axis of 1 is added, an extra one dropped.
    assert model(np.zeros((50, 28, 28), np.float32)).shape == (50, 10)
    assert model.predict(np.zeros((3, 28, 28, 1, 1), np.float32), verbose=0).shape == (3, 10)
    with pytest.raises(TypeError, match="The added layer must be an instance of class Layer"):
        model.add("dense")
    with pytest.raises(ValueError, match="You must provide an `input_shape` argument"):
        K.Sequential([K.layers.Dense(2)]).build()


def test_functional_model():
    inputs = K.Input(shape=(4,))
    hidden = K.layers.Dense(8, activation="relu")(inputs)
    outputs = K.layers.Dense(3)(hidden)
    assert isinstance(outputs, K.layers.KerasTensor) and outputs.shape == tf.TensorShape([None, 3])
    model = K.Model(inputs=inputs, outputs=outputs, name="mlp")
    assert model.built and [type(l).__name__ for l in model.layers] == ["InputLayer", "Dense", "Dense"]
    x = np.random.rand(6, 4).astype(np.float32)
    d1, d2 = model.layers[1], model.layers[2]
    np.testing.assert_allclose(model(x).numpy(), d2(d1(x)).numpy(), rtol=1e-6)
    assert summary_text(model) == golden("functional_summary.txt")
    with pytest.raises(ValueError, match=r"expected shape=\(None, 4\), found shape=\(6, 5\)"):
        model(np.zeros((6, 5), np.float32))


def test_functional_model_with_two_inputs_and_a_shared_layer():
    a, b = K.Input(shape=(3,), name="a"), K.Input(shape=(3,), name="b")
    shared = K.layers.Dense(2)
    model = K.Model([a, b], [shared(a), shared(b)])
    xa, xb = np.ones((1, 3), np.float32), np.zeros((1, 3), np.float32)
    ya, yb = model([xa, xb])
    np.testing.assert_allclose(ya.numpy(), shared(xa).numpy())
    np.testing.assert_allclose(yb.numpy(), shared(xb).numpy())
    assert len(model.weights) == 2


def test_functional_graph_must_connect_to_the_inputs():
    a, b = K.Input(shape=(3,)), K.Input(shape=(3,))
    y = K.layers.Dense(2)(b)
    with pytest.raises(ValueError, match="Graph disconnected"):
        K.Model(a, y)


class SeedCNN(K.Model):
    """The seeds' `class CNN(tf.keras.Model)` (seed 004), as written there."""

    def __init__(self):
        super().__init__()
        self.conv1 = K.layers.Conv2D(filters=32, kernel_size=[5, 5], padding="same", activation=tf.nn.relu)
        self.pool1 = K.layers.MaxPool2D(pool_size=[2, 2], strides=2)
        self.conv2 = K.layers.Conv2D(filters=64, kernel_size=[5, 5], padding="same", activation=tf.nn.relu)
        self.pool2 = K.layers.MaxPool2D(pool_size=[2, 2], strides=2)
        self.flatten = K.layers.Reshape(target_shape=(7 * 7 * 64,))
        self.dense1 = K.layers.Dense(units=1024, activation=tf.nn.relu)
        self.dense2 = K.layers.Dense(units=10)

    def call(self, inputs):
        x = self.conv1(inputs)
        x = self.pool1(x)
        x = self.conv2(x)
        x = self.pool2(x)
        x = self.flatten(x)
        x = self.dense1(x)
        x = self.dense2(x)
        output = tf.nn.softmax(x)
        return output


def test_subclassed_model_seed_cnn_and_the_seed_training_step(capfd):
    model = SeedCNN()
    assert model.name == "seed_cnn" and not model.built
    optimizer = K.optimizers.Adam(lr=0.001)   # the TF 2.0-era argument name the seed uses

    @tf.function
    def train_one_step(X, y):
        with tf.GradientTape() as tape:
            y_pred = model(X)
            loss = K.losses.sparse_categorical_crossentropy(y_true=y, y_pred=y_pred)
            loss = tf.reduce_mean(loss)
            tf.print("loss: ", loss)
        grads = tape.gradient(loss, model.variables)
        optimizer.apply_gradients(grads_and_vars=zip(grads, model.variables))

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (20, 28, 28, 1)).astype(np.float32)
    y = (np.arange(20) % 10).astype(np.int32)
    for _ in range(3):
        train_one_step(X, y)
    assert train_one_step.experimental_get_tracing_count() == 1
    losses = [float(line.split()[-1]) for line in capfd.readouterr().err.splitlines() if line.startswith("loss:")]
    assert len(losses) == 3 and losses[-1] < losses[0]
    assert [l.name for l in model.layers] == ["conv2d", "max_pooling2d", "conv2d_1", "max_pooling2d_1", "reshape",
                                              "dense", "dense_1"]
    assert len(model.trainable_variables) == 8
    assert sum(v.shape.num_elements() for v in model.variables) == 3274634
    assert optimizer.iterations.numpy() == 3
    text = summary_text(model)
    assert 'Model: "seed_cnn"' in text and " conv2d (Conv2D)             multiple                  832" in text
    assert "Total params: 3274634 (12.49 MB)" in text


def test_subclassed_model_with_python_control_flow_on_tensors_in_call():
    class Gate(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(1, kernel_initializer="ones", use_bias=False)

        def call(self, x, training=None):
            y = self.dense(x)
            if tf.reduce_sum(y) > 0:      # AutoGraph converts the user's call inside functions
                y = y * 2.0
            else:
                y = -y
            return y

    m = Gate()

    @tf.function
    def f(x):
        return m(x)

    np.testing.assert_allclose(f(np.ones((1, 2), np.float32)).numpy(), [[4.0]])
    np.testing.assert_allclose(f(-np.ones((1, 2), np.float32)).numpy(), [[2.0]])
    assert f.experimental_get_tracing_count() == 1


def test_subclassed_model_build_and_call_errors():
    class Mlp(K.Model):
        def __init__(self):
            super().__init__(name="mlp")
            self.blocks = [K.layers.Dense(4), K.layers.Dense(2)]

        def call(self, x):
            for block in self.blocks:
                x = block(x)
            return x

    m = Mlp()
    m.build((None, 3))
    assert m.built and m.blocks[0].kernel.shape == (3, 4) and len(m.layers) == 2
    with pytest.raises(NotImplementedError, match="override `call"):
        K.Model()(np.zeros((1, 2), np.float32))


def test_frozen_layers_are_not_trainable():
    model = K.Sequential([K.layers.Dense(3, input_shape=(2,)), K.layers.Dense(1)])
    model.layers[0].trainable = False
    assert [v.name for v in model.trainable_variables] == ["dense_1/kernel:0", "dense_1/bias:0"]
    assert [v.name for v in model.non_trainable_variables] == ["dense/kernel:0", "dense/bias:0"]
    assert "Trainable params: 4 (16.00 Byte)\nNon-trainable params: 9 (36.00 Byte)" in summary_text(model)
    model.compile(optimizer="sgd", loss="mse")
    before = model.layers[0].kernel.numpy()
    model.fit(np.random.rand(8, 2).astype(np.float32), np.random.rand(8, 1).astype(np.float32), verbose=0)
    np.testing.assert_array_equal(model.layers[0].kernel.numpy(), before)


def test_get_and_set_weights():
    model = K.Sequential([K.layers.Dense(2, input_shape=(3,))])
    weights = [np.ones((3, 2), np.float32), np.full(2, 0.5, np.float32)]
    model.set_weights(weights)
    np.testing.assert_array_equal(model.get_weights()[1], weights[1])
    np.testing.assert_allclose(model(np.ones((1, 3), np.float32)).numpy(), [[3.5, 3.5]])
    with pytest.raises(ValueError, match="expected 2 weights"):
        model.set_weights(weights[:1])
    assert model.get_layer("dense") is model.layers[0] and model.get_layer(index=0) is model.layers[0]


def test_a_trained_model_saves_with_a_serving_signature_and_without_its_training_step(tmp_path):
    model = K.Sequential([K.layers.Dense(4, activation="relu", input_shape=(3,)), K.layers.Dense(2)])
    model.compile(optimizer="adam", loss="mse")
    x = np.random.rand(10, 3).astype(np.float32)
    model.fit(x, np.random.rand(10, 2).astype(np.float32), verbose=0)
    serve = tf.function(lambda images: model(images), input_signature=[tf.TensorSpec([None, 3])])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert list(loaded.signatures) == ["serving_default"]
    assert not hasattr(loaded, "train_function")
    np.testing.assert_allclose(loaded.signatures["serving_default"](images=x)["output_0"].numpy(), model(x).numpy(),
                               rtol=1e-6)
    assert len(loaded.variables) == 4     # the model's weights, not the optimizer's slots


def test_pandas_frames_and_series_feed_fit_and_predict():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.normal(size=40), "b": rng.normal(size=40)})
    target = frame["a"] * 2 - frame["b"]
    model = K.Sequential([K.layers.Dense(1, input_shape=(2,))])
    model.compile(optimizer="sgd", loss="mse")
    history = model.fit(frame, target, epochs=2, batch_size=8, validation_split=0.25, verbose=0)
    assert set(history.history) == {"loss", "val_loss"}  # Keras splits frames as arrays
    assert model.predict(frame, verbose=0).shape == (40, 1)
    # A Series is one feature column (Keras' _process_tensorlike): (N,) -> (N, 1), in floatx.
    single = K.Sequential([K.layers.Dense(1, input_shape=(1,))])
    np.testing.assert_allclose(single.predict(frame["a"], verbose=0),
                               single(frame["a"].to_numpy(np.float32)[:, None]).numpy(), rtol=1e-6)
