"""The functional API as transfer-learning code uses it: layer.input / output / output_shape, feature extractors
from model.layers[i].output, get_layer, nested models, clone_model and frozen layers."""
import io
import contextlib

import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
X = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)


def small_model():
    inp = tf.keras.Input((4,), name="x")
    h = L.Dense(8, activation="relu", name="d1")(inp)
    h = L.BatchNormalization(name="bn")(h)
    out = L.Dense(2, name="d2")(h)
    return tf.keras.Model(inp, out, name="small")


def test_layer_input_output_and_shapes():
    model = small_model()
    d1, bn = model.get_layer("d1"), model.get_layer("bn")
    assert d1.input is model.inputs[0] and bn.input is d1.output
    assert d1.output.shape.as_list() == [None, 8]
    assert d1.output_shape == (None, 8) and d1.input_shape == (None, 4)
    assert model.layers[0].output is model.inputs[0]  # an InputLayer's output is the Input
    assert model.input is model.inputs[0] and model.output is model.outputs[0]
    assert model.output_shape == (None, 2)
    assert d1.get_output_shape_at(0) == (None, 8) and d1.get_input_shape_at(0) == (None, 4)
    assert model.get_layer(index=1) is d1
    with pytest.raises(ValueError, match="No such layer: nope"):
        model.get_layer("nope")
    with pytest.raises(AttributeError, match="is not connected"):
        L.Dense(2).input
    with pytest.raises(AttributeError, match="has no inbound nodes"):
        L.Dense(2).output


def test_shared_layer_has_one_node_per_call():
    shared = L.Dense(3, name="shared")
    a, b = tf.keras.Input((4,)), tf.keras.Input((4,))
    ya, yb = shared(a), shared(b)
    with pytest.raises(AttributeError, match="multiple inbound nodes"):
        shared.output
    assert shared.get_output_at(0) is ya and shared.get_output_at(1) is yb and shared.get_input_at(1) is b


def test_feature_extractor_from_layer_outputs():
    model = small_model()
    extractor = tf.keras.Model(inputs=model.inputs, outputs=[layer.output for layer in model.layers])
    features = extractor.predict(X, verbose=0)
    assert [f.shape for f in features] == [(8, 4), (8, 8), (8, 8), (8, 2)]
    np.testing.assert_allclose(features[0], X)
    w, b = model.get_layer("d1").get_weights()
    np.testing.assert_allclose(features[1], np.maximum(X @ w + b, 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(features[3], model.predict(X, verbose=0), rtol=1e-5, atol=1e-6)
    middle = tf.keras.Model(model.input, model.get_layer("bn").output)
    np.testing.assert_allclose(middle(X).numpy(), features[2], rtol=1e-5, atol=1e-6)


def test_sequential_graph_gives_layer_outputs():
    from kiln.keras._sequential_graph import connect
    model = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(5, name="a"), L.Dense(3, name="b")])
    if not model.layers[0]._inbound_nodes:  # until Sequential.build calls connect itself (see the notes)
        connect(model)
    assert model.layers[0].input.shape.as_list() == [None, 4]
    extractor = tf.keras.Model(model.layers[0].input, [layer.output for layer in model.layers])
    first, last = extractor.predict(X, verbose=0)
    np.testing.assert_allclose(last, model.predict(X, verbose=0), rtol=1e-5, atol=1e-6)
    assert first.shape == (8, 5)


def test_nested_model_and_freezing_for_transfer_learning():
    base = small_model()
    base.compile("adam", "mse")
    base.fit(X, X[:, :2], epochs=1, verbose=0)
    base.trainable = False
    inp = tf.keras.Input((4,))
    out = L.Dense(1, name="head")(base(inp))  # a frozen BatchNormalization runs in inference mode
    model = tf.keras.Model(inp, out)
    assert [w.name for w in model.trainable_weights] == ["head/kernel:0", "head/bias:0"]
    assert len(model.non_trainable_weights) == len(base.weights) == 8
    frozen = [w.copy() for w in base.get_weights()]
    model.compile("adam", "mse")
    model.fit(X, X[:, :1], epochs=3, verbose=0)
    for before, after in zip(frozen, base.get_weights()):
        np.testing.assert_array_equal(before, after)  # BatchNormalization's statistics too (inference mode)
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        model.summary()
    text = buffer.getvalue()
    assert "Trainable params: 3" in text and "Non-trainable params: 90" in text
    base.trainable = True
    base.get_layer("d1").trainable = False
    assert [w.name for w in base.trainable_weights] == ["bn/gamma:0", "bn/beta:0", "d2/kernel:0", "d2/bias:0"]


def test_clone_model_has_new_weights_and_same_structure():
    model = small_model()
    clone = tf.keras.models.clone_model(model)
    assert [type(layer).__name__ for layer in clone.layers] == [type(layer).__name__ for layer in model.layers]
    assert all(a is not b for a, b in zip(clone.weights, model.weights))
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(X, verbose=0), model.predict(X, verbose=0), rtol=1e-6)
    seq = tf.keras.Sequential([tf.keras.Input((4,)), L.Dense(3)])
    seq_clone = tf.keras.models.clone_model(seq)
    assert seq_clone.layers[0] is not seq.layers[0] and seq_clone(X).shape == (8, 3)


def test_nested_model_called_with_training_false():
    base = small_model()
    inp = tf.keras.Input((4,))
    model = tf.keras.Model(inp, L.Dense(1)(base(inp, training=False)))
    model.compile("adam", "mse")
    model.fit(X, X[:, :1], epochs=1, verbose=0)
