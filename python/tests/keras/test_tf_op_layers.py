"""TF ops on KerasTensors (Keras 2's TFOpLambda) and model.add_loss / add_metric of symbolic tensors: the layers
keras.io's guides make with `tf.reduce_sum(x1) * 0.1`, `tf.nn.softmax(x)` or `x[:, 0]` in a functional model,
checked for names, shapes and dtypes, values against the same ops run eagerly, fit, and a .keras round trip."""
import os

import numpy as np
import pytest

import kiln as tf
from kiln import keras
from kiln.keras import layers


def _model():
    inputs = keras.Input(shape=(4,), name="x")
    h = layers.Dense(3, name="dense_1")(inputs)
    y = tf.nn.softmax(h * 2.0 + 1.0)
    z = 1.0 - y[:, :2]
    w = tf.concat([z, h], axis=1)
    c = tf.cast(inputs, tf.int32)
    return keras.Model(inputs, [w, c]), h


def test_ops_on_keras_tensors_are_layers_named_after_the_op():
    model, _ = _model()
    names = [(layer.name, type(layer).__name__) for layer in model.layers]
    assert names == [("x", "InputLayer"), ("dense_1", "Dense"), ("tf.math.multiply", "TFOpLambda"),
                     ("tf.__operators__.add", "TFOpLambda"), ("tf.nn.softmax", "TFOpLambda"),
                     ("tf.__operators__.getitem", "SlicingOpLambda"), ("tf.math.subtract", "TFOpLambda"),
                     ("tf.concat", "TFOpLambda"), ("tf.cast", "TFOpLambda")]
    w, c = model.outputs
    assert w.shape.as_list() == [None, 5] and w.dtype == tf.float32
    assert c.shape.as_list() == [None, 4] and c.dtype == tf.int32  # the op's dtype, not the layer's float32


def test_the_model_computes_what_the_ops_compute_eagerly():
    model, _ = _model()
    x = np.random.default_rng(0).normal(size=(2, 4)).astype("float32")
    w, c = model(x)
    kernel, bias = model.get_layer("dense_1").get_weights()
    h = x @ kernel + bias
    e = np.exp(h * 2 + 1)
    y = e / e.sum(-1, keepdims=True)
    np.testing.assert_allclose(w.numpy(), np.concatenate([1 - y[:, :2], h], 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(c.numpy(), x.astype("int32"))


def test_reflected_operators_keep_the_operand_order():
    inputs = keras.Input(shape=(2,))
    model = keras.Model(inputs, [2.0 - inputs, 8.0 / (inputs + 1.0), -inputs, abs(inputs)])
    x = np.array([[1.0, -3.0]], "float32")
    out = [o.numpy() for o in model(x)]
    np.testing.assert_allclose(out[0], 2 - x)
    np.testing.assert_allclose(out[1], 8 / (x + 1))
    np.testing.assert_allclose(out[2], -x)
    np.testing.assert_allclose(out[3], np.abs(x))


def test_keyword_input_and_op_layers_of_integer_inputs():
    inputs = keras.Input(shape=(3,), dtype="int32")
    total = tf.reduce_sum(input_tensor=inputs, axis=1)
    model = keras.Model(inputs, total)
    assert model.outputs[0].dtype == tf.int32
    np.testing.assert_array_equal(model(np.array([[1, 2, 3]], "int32")).numpy(), [6])


def test_symbolic_add_loss_and_add_metric_run_with_each_call_and_in_fit():
    # training_with_built_in_methods: model.add_loss(tf.reduce_sum(x1) * 0.1), add_metric(std(x1)).
    inputs = keras.Input(shape=(4,), name="digits")
    x1 = layers.Dense(8, activation="relu", name="dense_1")(inputs)
    outputs = layers.Dense(3, name="predictions")(x1)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.add_loss(tf.reduce_sum(x1) * 0.1)
    model.add_metric(keras.backend.std(x1), name="std_of_activation", aggregation="mean")
    assert [type(layer).__name__ for layer in model.layers[-5:]] == ["TFOpLambda", "TFOpLambda", "AddLoss",
                                                                     "TFOpLambda", "AddMetric"]
    x = np.random.default_rng(1).uniform(size=(16, 4)).astype("float32")
    model(x)
    kernel, bias = model.get_layer("dense_1").get_weights()
    expected = 0.1 * np.maximum(x @ kernel + bias, 0).sum()
    assert len(model.losses) == 1
    np.testing.assert_allclose(model.losses[0].numpy(), expected, rtol=1e-5)
    model.compile(optimizer=keras.optimizers.RMSprop(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, np.arange(16) % 3, batch_size=8, epochs=2, verbose=0)
    assert list(history.history) == ["loss", "std_of_activation"]
    assert history.history["loss"][1] < history.history["loss"][0]  # the activity penalty shrinks


def test_op_layers_and_symbolic_losses_survive_a_keras_file(tmp_path):
    inputs = keras.Input(shape=(4,), name="digits")
    x1 = layers.Dense(3, name="dense_1")(inputs)
    out = tf.nn.softmax(x1[:, 1:] * 3.0)
    model = keras.Model(inputs, [out, tf.cast(inputs, "int32")])
    model.add_loss(tf.reduce_mean(x1) * 0.5)
    x = np.random.default_rng(2).normal(size=(5, 4)).astype("float32")
    before = [o.numpy() for o in model(x)]
    loss_before = model.losses[0].numpy()
    path = os.path.join(tmp_path, "ops.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    after = [o.numpy() for o in loaded(x)]
    for a, b in zip(before, after):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(loaded.losses[0].numpy(), loss_before, rtol=1e-6)
    assert [type(layer).__name__ for layer in loaded.layers].count("SlicingOpLambda") == 1


def test_plain_ops_are_unchanged_and_errors_keep_their_class():
    keras.Input(shape=(2,))  # wraps the ops
    assert tf.reduce_sum(tf.constant([1.0, 2.0])).numpy() == 3.0
    assert tf.add.__name__ == "add"
    with pytest.raises(Exception) as err:
        tf.reshape(tf.constant([1.0, 2.0, 3.0]), [2])
    assert "KerasTensor" not in str(err.value)


def test_wrapped_ops_inside_traced_functions_are_not_converted():
    keras.Input(shape=(2,))  # the ops are wrapped from here on
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4)

    @tf.function
    def traced(x, y):
        if tf.reduce_sum(x) > 0:  # AutoGraph converts this function, not the ops it calls
            return tf.matmul(x, y)
        return tf.linalg.matmul(y, x, transpose_a=True, transpose_b=True)

    np.testing.assert_allclose(traced(tf.constant(a), tf.constant(b)).numpy(), a @ b)
