"""keras.layers.RNN with custom cells of nested inputs, outputs and multi-dimensional states (keras.io's
"Working with RNNs"): values against a NumPy loop, eager = traced, Keras' output names, and a cell whose
output is not its state."""
import numpy as np
import pytest

import kiln as tf
from kiln import keras


class NestedCell(keras.layers.Layer):
    """keras.io's NestedCell: inputs ((batch, i1), (batch, i2, i3)), states ((batch, u1), (batch, u2, u3))."""

    def __init__(self, unit_1, unit_2, unit_3, **kwargs):
        self.unit_1, self.unit_2, self.unit_3 = unit_1, unit_2, unit_3
        self.state_size = [tf.TensorShape([unit_1]), tf.TensorShape([unit_2, unit_3])]
        self.output_size = [tf.TensorShape([unit_1]), tf.TensorShape([unit_2, unit_3])]
        super().__init__(**kwargs)

    def build(self, input_shapes):
        self.kernel_1 = self.add_weight(shape=(input_shapes[0][1], self.unit_1), initializer="uniform",
                                        name="kernel_1")
        self.kernel_2_3 = self.add_weight(shape=(input_shapes[1][1], input_shapes[1][2], self.unit_2, self.unit_3),
                                          initializer="uniform", name="kernel_2_3")

    def call(self, inputs, states):
        input_1, input_2 = tf.nest.flatten(inputs)
        s1, s2 = states
        output_1 = tf.matmul(input_1, self.kernel_1)
        output_2_3 = tf.einsum("bij,ijkl->bkl", input_2, self.kernel_2_3)
        return (output_1, output_2_3), (s1 + output_1, s2 + output_2_3)


def reference(x1, x2, k1, k23, go_backwards=False):
    order = range(x1.shape[1] - 1, -1, -1) if go_backwards else range(x1.shape[1])
    s1 = np.zeros((x1.shape[0], k1.shape[1]))
    s2 = np.zeros((x1.shape[0],) + k23.shape[2:])
    outs = []
    for t in order:
        o1, o23 = x1[:, t] @ k1, np.einsum("bij,ijkl->bkl", x2[:, t], k23)
        s1, s2 = s1 + o1, s2 + o23
        outs.append((o1, o23))
    return outs, (s1, s2)


@pytest.mark.parametrize("go_backwards", [False, True])
def test_nested_cell_matches_a_numpy_loop(go_backwards):
    rng = np.random.default_rng(5)
    x1 = rng.standard_normal((3, 4, 2)).astype(np.float32)
    x2 = rng.standard_normal((3, 4, 2, 3)).astype(np.float32)
    rnn = keras.layers.RNN(NestedCell(5, 2, 4), return_sequences=True, return_state=True, go_backwards=go_backwards)
    (seq_1, seq_23), s1, s2 = rnn((x1, x2))
    k1, k23 = rnn.cell.kernel_1.numpy().astype(np.float64), rnn.cell.kernel_2_3.numpy().astype(np.float64)
    outs, (r1, r2) = reference(x1.astype(np.float64), x2.astype(np.float64), k1, k23, go_backwards)
    np.testing.assert_allclose(seq_1.numpy(), np.stack([o[0] for o in outs], 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seq_23.numpy(), np.stack([o[1] for o in outs], 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s1.numpy(), r1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2.numpy(), r2, rtol=1e-5, atol=1e-6)
    traced = tf.function(lambda a, b: rnn((a, b)))(x1, x2)
    np.testing.assert_array_equal(traced[0][1].numpy(), seq_23.numpy())


def test_nested_cell_in_a_functional_model_trains_with_two_named_outputs():
    input_1, input_2 = keras.Input((None, 3)), keras.Input((None, 2, 2))
    outputs = keras.layers.RNN(NestedCell(4, 2, 3), name="nested")((input_1, input_2))
    model = keras.Model([input_1, input_2], outputs)
    assert model.output_names == ["nested", "nested_1"]
    assert [tuple(o.shape) for o in model.outputs] == [(None, 4), (None, 2, 3)]
    model.compile(optimizer="adam", loss="mse", metrics=["mae"])
    rng = np.random.default_rng(0)
    x = [rng.random((8, 5, 3)), rng.random((8, 5, 2, 2))]
    y = [rng.random((8, 4)), rng.random((8, 2, 3))]
    history = model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert sorted(history.history) == ["loss", "nested_1_loss", "nested_1_mae", "nested_loss", "nested_mae"]
    last_1, last_23 = model.predict(x, verbose=0)
    outs, _ = reference(x[0], x[1], *(w.numpy().astype(np.float64) for w in model.layers[2].cell.weights))
    np.testing.assert_allclose(last_23, outs[-1][1], rtol=1e-4, atol=1e-5)


class CountingCell(keras.layers.Layer):
    """A cell whose output (the step's input sum) is not its state (a running count)."""
    state_size = 1
    output_size = 1

    def call(self, inputs, states):
        return tf.reduce_sum(inputs, axis=1, keepdims=True), [states[0] + 1.0]


def test_last_output_of_a_custom_cell_is_its_output_not_its_state():
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    out, count = keras.layers.RNN(CountingCell(), return_state=True)(x)
    assert out.numpy().tolist() == [[9.0], [21.0]] and count.numpy().tolist() == [[3.0], [3.0]]


def test_a_list_is_inputs_and_initial_states_a_tuple_nested_inputs():
    lstm = keras.layers.LSTM(2)
    x = np.ones((1, 3, 4), np.float32)
    h = c = np.zeros((1, 2), np.float32)
    np.testing.assert_array_equal(lstm([x, h, c]).numpy(), lstm(x, initial_state=[h, c]).numpy())
    with pytest.raises(ValueError, match="ndim=3"):
        keras.layers.LSTM(2)(np.ones((2, 3), np.float32))


def test_keras_tensors_show_their_masks_while_a_model_is_built():
    inputs = keras.Input(shape=(None,), dtype="int32")
    x = keras.layers.Embedding(input_dim=10, output_dim=4, mask_zero=True)(inputs)
    assert keras.layers.Dense(2)(keras.Input((3,)))._keras_mask is None
    mask = keras.layers.Activation("relu")(x)._keras_mask  # passed on: still the embedding's mask
    assert mask.dtype == tf.bool and mask.shape.as_list() == [None, None]
    assert str(mask) == ("KerasTensor(type_spec=TensorSpec(shape=(None, None), dtype=tf.bool, name=None), "
                         "description=\"created by layer '" + x._node.layer.name + "'\")")

    class TemporalSoftmax(keras.layers.Layer):  # a custom call that needs the mask while the model is built
        def call(self, inputs, mask=None):
            weights = tf.expand_dims(tf.cast(mask, "float32"), -1)
            return tf.exp(inputs) * weights / tf.reduce_sum(tf.exp(inputs) * weights, axis=1, keepdims=True)

    outputs = TemporalSoftmax()(keras.layers.Dense(1)(x))
    model = keras.Model(inputs, outputs)
    y = model(np.array([[1, 2, 0, 0]])).numpy()
    assert y[0, 2:].tolist() == [[0.0], [0.0]] and abs(y[0, :2].sum() - 1) < 1e-6
