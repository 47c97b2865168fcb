"""Stateful SimpleRNN / LSTM / GRU (`stateful=True`) as Keras 2.15 runs them: consecutive batches continue one
recurrence (checked against NumPy's recurrence over the joined sequence), eagerly, traced, unrolled and inside
fit / predict; reset_states (zeros or given values), model.reset_states, return_state, initial_state's rule
(used while the stored states are zero), Bidirectional, configs and files, and the errors Keras raises."""
import numpy as np
import pytest

import kiln as tf
from test_recurrent import gru_step, keras_layout_weights, lstm_step, randn, run_reference, simple_rnn_step

K = tf.keras
BATCH, STEPS, FEATURES, UNITS = 3, 4, 5, 2

KINDS = {
    "SimpleRNN": (K.layers.SimpleRNN, 1, simple_rnn_step, 1),
    "LSTM": (K.layers.LSTM, 4, lstm_step, 2),
    "GRU": (K.layers.GRU, 3, gru_step, 1),
}


def stateful_layer(kind, **kwargs):
    """A built stateful layer of Keras-layout random weights, and those weights."""
    cls, gates, _, _ = KINDS[kind]
    layer = cls(UNITS, stateful=True, **kwargs)
    layer.build((BATCH, STEPS, FEATURES))
    weights = keras_layout_weights(FEATURES, UNITS, gates, gru_reset_after=kind == "GRU")
    layer.set_weights(weights)
    return layer, weights


def reference(kind, x, weights, initial=None):
    _, _, step, num_states = KINDS[kind]
    return run_reference(step, x, weights, UNITS, num_states, initial=initial)


def chunks(x, count):
    return np.split(x, count, axis=1)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("mode", ["eager", "traced", "unrolled"])
def test_consecutive_batches_continue_one_recurrence(kind, mode):
    layer, weights = stateful_layer(kind, return_sequences=True, unroll=mode == "unrolled")
    x = randn(BATCH, 3 * STEPS, FEATURES)
    call = layer if mode == "eager" else tf.function(lambda v: layer(v))
    got = np.concatenate([call(part).numpy() for part in chunks(x, 3)], axis=1)
    want, final = reference(kind, x, weights)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    for variable, value in zip(layer.states, final):
        np.testing.assert_allclose(variable.numpy(), value, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_reset_states_zeros_them_or_sets_the_values_given(kind):
    layer, weights = stateful_layer(kind)
    x = randn(BATCH, STEPS, FEATURES)
    first = layer(x).numpy()
    assert not np.allclose(layer(x).numpy(), first)
    layer.reset_states()
    assert all(not v.numpy().any() for v in layer.states)
    np.testing.assert_allclose(layer(x).numpy(), first, rtol=1e-6)
    initial = [randn(BATCH, UNITS) for _ in layer.states]
    layer.reset_states(initial)
    want, _ = reference(kind, x, weights, initial=initial)
    np.testing.assert_allclose(layer(x).numpy(), want[:, -1], rtol=1e-5, atol=1e-5)


def test_the_states_are_no_weights_and_a_stateless_layer_has_none():
    layer, _ = stateful_layer("LSTM")
    assert len(layer.weights) == 3 and len(layer.states) == 2
    assert all(v.shape == (BATCH, UNITS) for v in layer.states)
    assert K.layers.LSTM(2).states == [None, None]
    assert K.layers.GRU(2).states == [None]
    assert layer.stateful and not K.layers.GRU(2).stateful


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_return_state_gives_the_states_the_layer_keeps(kind):
    layer, weights = stateful_layer(kind, return_state=True)
    x = randn(BATCH, 2 * STEPS, FEATURES)
    for part in chunks(x, 2):
        output, *states = layer(part)
    _, final = reference(kind, x, weights)
    for returned, kept, value in zip(states, layer.states, final):
        np.testing.assert_allclose(returned.numpy(), kept.numpy())
        np.testing.assert_allclose(returned.numpy(), value, rtol=1e-5, atol=1e-5)


def test_initial_state_counts_while_the_stored_states_are_zero():
    """Keras 2.15: with initial_state given, a stateful layer starts from it while its stored states are all
    zero (fresh or reset), and from the stored states once a call has set them."""
    layer, weights = stateful_layer("LSTM")
    x = randn(BATCH, 2 * STEPS, FEATURES)
    initial = [randn(BATCH, UNITS), randn(BATCH, UNITS)]
    first, second = chunks(x, 2)
    got = [layer(first, initial_state=initial).numpy(), layer(second, initial_state=initial).numpy()]
    want, _ = reference("LSTM", x, weights, initial=initial)
    np.testing.assert_allclose(got[0], want[:, STEPS - 1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], want[:, -1], rtol=1e-5, atol=1e-5)
    layer.reset_states()
    traced = tf.function(lambda v, h, c: layer(v, initial_state=[h, c]))
    np.testing.assert_allclose(traced(first, *initial).numpy(), got[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(traced(second, *initial).numpy(), got[1], rtol=1e-5, atol=1e-5)


def test_fit_and_predict_carry_the_states_from_batch_to_batch():
    """fit (shuffle=False, learning rate 0 so the weights stay) and predict run the batches in order, each
    starting from the states the previous one left: row i of batch b continues row i of batch b - 1."""
    layer, weights = stateful_layer("GRU")
    model = K.Sequential([K.Input(batch_shape=(BATCH, STEPS, FEATURES)), layer, K.layers.Dense(1)])
    model.compile(optimizer=K.optimizers.SGD(0.0), loss="mse")
    x = randn(4 * BATCH, STEPS, FEATURES)
    joined = np.concatenate(np.split(x, 4, axis=0), axis=1)  # batch b's steps after batch b - 1's
    want, final = reference("GRU", joined, weights)
    model.fit(x, randn(4 * BATCH, 1), batch_size=BATCH, shuffle=False, epochs=1, verbose=0)
    np.testing.assert_allclose(layer.states[0].numpy(), final[0], rtol=1e-5, atol=1e-5)
    model.reset_states()
    assert not layer.states[0].numpy().any()
    features = K.Model(model.inputs, layer.output)
    got = features.predict(x, batch_size=BATCH, verbose=0)
    last_of_each_batch = np.concatenate([want[:, (b + 1) * STEPS - 1] for b in range(4)], axis=0)
    np.testing.assert_allclose(got, last_of_each_batch, rtol=1e-5, atol=1e-5)


def test_a_sequential_keeps_its_declared_batch_size_and_resets_its_layers():
    model = K.Sequential([K.layers.SimpleRNN(UNITS, stateful=True, batch_input_shape=(BATCH, STEPS, FEATURES)),
                          K.layers.Dense(1)])
    assert model.input_shape == (BATCH, STEPS, FEATURES)
    assert model.output_shape == (BATCH, 1)
    x = randn(BATCH, STEPS, FEATURES)
    first = model(x).numpy()
    assert not np.allclose(model(x).numpy(), first)
    model.reset_states()
    np.testing.assert_allclose(model(x).numpy(), first, rtol=1e-6)


def test_a_functional_model_with_a_fixed_batch():
    inputs = K.Input(shape=(STEPS, FEATURES), batch_size=BATCH)
    outputs = K.layers.LSTM(UNITS, stateful=True, return_sequences=True)(inputs)
    model = K.Model(inputs, outputs)
    x = randn(BATCH, STEPS, FEATURES)
    first = model.predict(x, verbose=0)
    model.reset_states()
    np.testing.assert_allclose(model.predict(x, verbose=0), first, rtol=1e-6)
    assert model.stateful


def test_bidirectional_resets_both_directions():
    layer = K.layers.Bidirectional(K.layers.LSTM(UNITS, stateful=True))
    x = randn(BATCH, STEPS, FEATURES)
    first = layer(x).numpy()
    assert layer.stateful
    assert not np.allclose(layer(x).numpy(), first)
    layer.reset_states()
    np.testing.assert_allclose(layer(x).numpy(), first, rtol=1e-6)
    states = [randn(BATCH, UNITS) for _ in range(4)]
    layer.reset_states(states)
    np.testing.assert_allclose(layer.backward_layer.states[1].numpy(), states[3])


def test_config_and_keras_file_keep_stateful(tmp_path):
    model = K.Sequential([K.layers.LSTM(UNITS, stateful=True, batch_input_shape=(BATCH, STEPS, FEATURES))])
    config = model.layers[0].get_config()
    assert config["stateful"] is True
    assert K.layers.LSTM(UNITS).get_config()["stateful"] is False
    x = randn(BATCH, STEPS, FEATURES)
    model.save(tmp_path / "m.keras")
    loaded = K.models.load_model(tmp_path / "m.keras")
    assert loaded.layers[0].stateful and loaded.input_shape == (BATCH, STEPS, FEATURES)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_errors_are_keras():
    inputs = K.Input(shape=(STEPS, FEATURES))
    with pytest.raises(ValueError, match="If a RNN is stateful, it needs to know its batch size"):
        K.layers.LSTM(UNITS, stateful=True)(inputs)
    layer, _ = stateful_layer("LSTM")
    with pytest.raises(ValueError, match=r"expected shape=\(3, None, 5\), found shape=\(4, 4, 5\)"):
        layer(randn(4, STEPS, FEATURES))
    with pytest.raises(ValueError, match="expects 2 states, but it received 1 state values"):
        layer.reset_states([np.zeros((BATCH, UNITS))])
    with pytest.raises(ValueError, match="State 1 is incompatible with layer"):
        layer.reset_states([np.zeros((BATCH, UNITS)), np.zeros((BATCH + 1, UNITS))])
    with pytest.raises(ValueError, match="Layer has 2 states but was passed 1 initial states"):
        layer(randn(BATCH, STEPS, FEATURES), initial_state=[randn(BATCH, UNITS)])
    with pytest.raises(AttributeError, match="Layer must be stateful."):
        K.layers.GRU(UNITS).reset_states()


def test_a_stateful_layers_states_start_another_layer():
    """The RNN guide's state reuse: `layer.states` (variables) as another layer's initial_state continue the
    recurrence as the stateful layer itself would."""
    layer, weights = stateful_layer("LSTM")
    x = randn(BATCH, 3 * STEPS, FEATURES)
    first, second, third = chunks(x, 3)
    layer(first)
    layer(second)
    other = K.layers.LSTM(UNITS)
    other.build((BATCH, STEPS, FEATURES))
    other.set_weights(weights)
    continued = other(third, initial_state=layer.states).numpy()
    want, _ = reference("LSTM", x, weights)
    np.testing.assert_allclose(continued, want[:, -1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(layer(third).numpy(), continued, rtol=1e-6)


def test_stacked_cells_keep_every_cells_states():
    layer = K.layers.RNN([K.layers.LSTMCell(3), K.layers.GRUCell(2)], stateful=True)
    layer.build((BATCH, STEPS, FEATURES))
    assert [v.shape for v in layer.states] == [(BATCH, 3), (BATCH, 3), (BATCH, 2)]
    x = randn(BATCH, 2 * STEPS, FEATURES)
    first, second = chunks(x, 2)
    layer(first)
    whole = K.layers.RNN(list(layer.cell.cells))(x).numpy()  # the same cells over the joined steps
    np.testing.assert_allclose(layer(second).numpy(), whole, rtol=1e-5, atol=1e-6)
