"""kiln.keras.layers SimpleRNN, LSTM, GRU and RNN(cell) against a NumPy reference of Keras' equations (written
here): values with weights in Keras' layout, return_sequences / return_state / go_backwards, traced (While loop
and unrolled) = eager, gradients against finite differences, fit, saved-model round trips, errors."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_sampled_input_gradient, check_sampled_variable_gradients
from saved_layer_check import check_layer_round_trip

K = tf.keras
rng = np.random.default_rng(11)


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


# ---- Keras' equations in NumPy (float64) ------------------------------------------------------

def simple_rnn_step(x, states, kernel, recurrent, bias):
    h = np.tanh(x @ kernel + bias + states[0] @ recurrent)
    return [h]


def lstm_step(x, states, kernel, recurrent, bias):
    h, c = states
    z = x @ kernel + h @ recurrent + bias
    i, f, g, o = np.split(z, 4, axis=-1)             # Keras' gate order i, f, c, o
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return [sigmoid(o) * np.tanh(c), c]


def gru_step(x, states, kernel, recurrent, bias, reset_after=True):
    h = states[0]
    u = h.shape[-1]
    if reset_after:                                    # bias [2, 3u]: input, recurrent
        xz, xr, xh = np.split(x @ kernel + bias[0], 3, axis=-1)
        rz, rr, rh = np.split(h @ recurrent + bias[1], 3, axis=-1)
        z, r = sigmoid(xz + rz), sigmoid(xr + rr)
        hh = np.tanh(xh + r * rh)
    else:
        xz, xr, xh = np.split(x @ kernel + bias, 3, axis=-1)
        z = sigmoid(xz + h @ recurrent[:, :u])
        r = sigmoid(xr + h @ recurrent[:, u:2 * u])
        hh = np.tanh(xh + (r * h) @ recurrent[:, 2 * u:])
    return [z * h + (1 - z) * hh]


def run_reference(step, x, weights, units, num_states, go_backwards=False, initial=None):
    x = x.astype(np.float64)
    w = [v.astype(np.float64) for v in weights]
    states = [s.astype(np.float64) for s in initial] if initial else \
        [np.zeros((x.shape[0], units)) for _ in range(num_states)]
    order = range(x.shape[1] - 1, -1, -1) if go_backwards else range(x.shape[1])
    outputs = []
    for t in order:
        states = step(x[:, t], states, *w)
        outputs.append(states[0])
    return np.stack(outputs, 1), states


def keras_layout_weights(features, units, gates, gru_reset_after=None):
    """Weights as Keras stores them: kernel [features, gates*units], recurrent [units, gates*units], bias."""
    bias_shape = (2, gates * units) if gru_reset_after else (gates * units,)
    return [randn(features, gates * units, scale=0.5), randn(units, gates * units, scale=0.5),
            randn(*bias_shape, scale=0.3)]


CASES = [
    ("SimpleRNN", K.layers.SimpleRNN, {}, 1, simple_rnn_step, 1),
    ("LSTM", K.layers.LSTM, {}, 4, lstm_step, 2),
    ("GRU", K.layers.GRU, {}, 3, gru_step, 1),
    ("GRU_v1", K.layers.GRU, {"reset_after": False}, 3,
     lambda x, s, k, r, b: gru_step(x, s, k, r, b, reset_after=False), 1),
]


@pytest.mark.parametrize("name,cls,kwargs,gates,step,num_states", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("go_backwards", [False, True])
def test_keras_weights_give_keras_formulas(name, cls, kwargs, gates, step, num_states, go_backwards):
    x = randn(3, 7, 5)
    layer = cls(4, return_sequences=True, return_state=True, go_backwards=go_backwards, **kwargs)
    layer.build((None, 7, 5))
    weights = keras_layout_weights(5, 4, gates, gru_reset_after=(name == "GRU"))
    layer.set_weights(weights)
    want_seq, want_states = run_reference(step, x, weights, 4, num_states, go_backwards)
    out = layer(x)
    assert len(out) == 1 + num_states
    np.testing.assert_allclose(out[0].numpy(), want_seq, rtol=1e-5, atol=1e-5)
    for got, want in zip(out[1:], want_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    # Traced: one While op, the same values.
    f = tf.function(lambda inputs: layer(inputs), autograph=False)
    for got, want in zip(f(x), out):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)


def test_shapes_of_return_sequences_and_return_state():
    x = randn(2, 6, 3)
    assert K.layers.LSTM(5)(x).shape == (2, 5)
    assert K.layers.GRU(5, return_sequences=True)(x).shape == (2, 6, 5)
    out, h, c = K.layers.LSTM(5, return_state=True)(x)
    assert out.shape == h.shape == c.shape == (2, 5)
    np.testing.assert_array_equal(out.numpy(), h.numpy())
    seq, h = K.layers.SimpleRNN(5, return_sequences=True, return_state=True)(x)
    assert seq.shape == (2, 6, 5)
    np.testing.assert_array_equal(seq.numpy()[:, -1], h.numpy())
    layer = K.layers.LSTM(5, return_sequences=True, return_state=True)
    shapes = layer.compute_output_shape((None, 6, 3))
    assert [tuple(s) for s in shapes] == [(None, 6, 5), (None, 5), (None, 5)]


def test_initial_state_is_used():
    x = randn(2, 4, 3)
    layer = K.layers.LSTM(5)
    layer.build((None, 4, 3))
    h0, c0 = randn(2, 5), randn(2, 5)
    _, want = run_reference(lstm_step, x, layer.get_weights(), 5, 2, initial=[h0, c0])
    np.testing.assert_allclose(layer(x, initial_state=[h0, c0]).numpy(), want[0], rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="expects 2 initial state"):
        layer(x, initial_state=[h0])


def test_default_weights_follow_keras():
    layer = K.layers.LSTM(3)
    layer(randn(2, 4, 7))
    assert [w.name for w in layer.weights] == ["lstm/kernel:0", "lstm/recurrent_kernel:0", "lstm/bias:0"]
    kernel, recurrent, bias = layer.get_weights()
    assert kernel.shape == (7, 12) and np.all(np.abs(kernel) <= np.sqrt(6 / 19))
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(3), atol=1e-6)      # orthogonal rows
    np.testing.assert_array_equal(bias, [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])       # unit_forget_bias
    gru = K.layers.GRU(3)
    gru(randn(2, 4, 7))
    assert gru.bias.shape == (2, 9)
    assert K.layers.SimpleRNN(2, use_bias=False)(randn(1, 2, 3)).shape == (1, 2)
    tall = K.initializers.Orthogonal(gain=2.0, seed=3)((6, 4))
    np.testing.assert_allclose(tall.numpy().T @ tall.numpy(), 4 * np.eye(4), atol=1e-5)
    np.testing.assert_array_equal(K.initializers.get("orthogonal")((2, 3)).shape, (2, 3))


def test_a_cell_called_alone_is_one_step():
    cell = K.layers.LSTMCell(4)
    x, h, c = randn(2, 3), randn(2, 4), randn(2, 4)
    out, (h1, c1) = cell(x, [h, c])
    want = lstm_step(x.astype(np.float64), [h, c], *cell.get_weights())
    np.testing.assert_allclose(out.numpy(), want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c1.numpy(), want[1], rtol=1e-5, atol=1e-6)
    assert cell.state_size == [4, 4]


def test_a_cell_in_the_rnn_layer_equals_the_layer():
    x = randn(2, 5, 3)
    layer = K.layers.GRU(4, return_sequences=True)
    wrapped = K.layers.RNN(K.layers.GRUCell(4), return_sequences=True)
    layer(x)
    wrapped(x)
    wrapped.set_weights(layer.get_weights())
    np.testing.assert_allclose(wrapped(x).numpy(), layer(x).numpy(), rtol=1e-6)


def test_traced_while_loop_and_unrolled_equal_eager_and_the_loop_does_not_grow():
    x = randn(4, 6, 3)
    loop = K.layers.LSTM(5, return_sequences=True)
    unrolled = K.layers.LSTM(5, return_sequences=True, unroll=True)
    loop(x)
    unrolled(x)
    unrolled.set_weights(loop.get_weights())
    eager = loop(x).numpy()
    f = tf.function(lambda inputs: loop(inputs), autograph=False)
    g = tf.function(lambda inputs: unrolled(inputs), autograph=False)
    np.testing.assert_allclose(f(x).numpy(), eager, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g(x).numpy(), eager, rtol=1e-6, atol=1e-6)
    # Any length, one trace: the While loop does not depend on the number of steps.
    h = tf.function(lambda inputs: loop(inputs), input_signature=[tf.TensorSpec([None, None, 3])],
                    autograph=False)
    for steps in (1, 3, 9):
        xs = randn(2, steps, 3)
        np.testing.assert_allclose(h(xs).numpy(), loop(xs).numpy(), rtol=1e-6, atol=1e-6)
    assert h.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="Cannot unroll a RNN if the time dimension is undefined"):
        tf.function(lambda inputs: unrolled(inputs), input_signature=[tf.TensorSpec([None, None, 3])],
                    autograph=False)(x)


@pytest.mark.parametrize("cls", [K.layers.SimpleRNN, K.layers.LSTM, K.layers.GRU])
def test_gradients_match_finite_differences(cls):
    K.backend.set_floatx("float64")
    try:
        layer = cls(3, return_sequences=True)
        x = rng.standard_normal((2, 4, 3))
        layer(x)
        w = rng.standard_normal((2, 4, 3))

        def loss():
            return float(tf.reduce_sum(layer(x) * w).numpy())

        def grads(inputs):
            with tf.GradientTape() as tape:
                tape.watch(inputs)
                y = tf.reduce_sum(layer(inputs) * w)
            return tape.gradient(y, [inputs] + layer.trainable_variables)

        eager = grads(tf.constant(x))
        traced = tf.function(grads, autograph=False)(tf.constant(x))
        for e, t in zip(eager, traced):
            np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
        # Central differences for the weights and the input.
        check_sampled_variable_gradients(layer.trainable_variables, eager[1:], loss, 5)
        check_sampled_input_gradient(eager[0], lambda xi: float(tf.reduce_sum(layer(xi) * w).numpy()), x, 4)
    finally:
        K.backend.set_floatx("float32")


def test_an_lstm_model_fits_saves_and_loads(tmp_path):
    tf.random.set_seed(4)
    # Is the sum of a sequence positive?
    x = randn(96, 6, 2)
    y = (x.sum(axis=(1, 2)) > 0).astype(np.int32)
    model = K.Sequential([K.layers.LSTM(8, input_shape=(None, 2)), K.layers.Dense(2)])
    model.compile(optimizer=K.optimizers.Adam(0.02),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, epochs=8, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    serve = tf.function(lambda inputs: model(inputs), input_signature=[tf.TensorSpec([None, None, 2])])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    longer = randn(5, 9, 2)
    np.testing.assert_allclose(loaded.signatures["serving_default"](inputs=longer)["output_0"].numpy(),
                               model(longer).numpy(), rtol=1e-6, atol=1e-6)
    assert len(loaded.variables) == 5


@pytest.mark.parametrize("make", [lambda: K.layers.SimpleRNN(5, return_sequences=True),
                                  lambda: K.layers.GRU(5),
                                  lambda: K.layers.GRU(5, return_sequences=True, go_backwards=True, reset_after=False),
                                  lambda: K.layers.LSTM(5, return_sequences=True)])
def test_a_recurrent_layer_saves_and_loads_for_any_batch_and_length(make, tmp_path):
    layer = make()
    check_layer_round_trip(layer, randn(3, 4, 2), tf.TensorSpec([None, None, 2]), tmp_path / "m",
                           probes=[randn(2, 7, 2)])
    assert len(layer.variables) == 3   # kernel, recurrent_kernel, bias


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="expected a positive integer"):
        K.layers.LSTM(0)
    with pytest.raises(ValueError, match="recurrent_dropout must be in \\[0, 1\\), got -0.1"):
        K.layers.GRU(3, recurrent_dropout=-0.1)
    with pytest.raises(ValueError, match="dropout must be in \\[0, 1\\), got 1.5"):
        K.layers.GRU(3, dropout=1.5)
    layer = K.layers.LSTM(3)
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        layer(randn(2, 3))
    layer(randn(2, 3, 4))
    with pytest.raises(ValueError, match="incompatible"):
        layer(randn(2, 3, 5))


@pytest.mark.parametrize("layer_class", [K.layers.SimpleRNN, K.layers.LSTM, K.layers.GRU])
def test_input_dropout_is_one_mask_for_every_step_while_training(layer_class):
    """Keras' input dropout (implementation 2): each sample's features are kept (scaled by 2) or zeroed for the
    whole sequence, so the output is the plain layer's on the inputs times one of the 0 / 2 masks."""
    tf.random.set_seed(4)
    layer = layer_class(3, dropout=0.5, return_sequences=True)
    plain = layer_class(3, return_sequences=True)
    x = randn(1, 4, 2)
    plain(x)
    layer(x)
    plain.set_weights(layer.get_weights())
    np.testing.assert_array_equal(layer(x).numpy(), plain(x).numpy())  # inference: no dropout
    assert layer.dropout == 0.5 and layer.get_config()["dropout"] == 0.5
    masks = [np.array([a, b], np.float32) for a in (0, 2) for b in (0, 2)]
    def training_call(v):
        return layer(v, training=True)

    for run in (training_call, tf.function(training_call)):
        got = run(x).numpy()
        assert any(np.allclose(got, plain(x * m).numpy(), rtol=1e-6, atol=1e-7) for m in masks)


@pytest.mark.parametrize("kind", ["SimpleRNN", "LSTM", "GRU", "GRU reset_before"])
def test_recurrent_dropout_gives_each_gate_its_own_input_and_state_masks(kind, monkeypatch):
    """With recurrent_dropout Keras runs its implementation 1: gate g's pre-activation is
    (x * m_g) @ kernel_g + bias_g + (h * r_g) @ recurrent_kernel_g, masks drawn once per call. The draws are
    replaced by known constants (input masks first, then the state's) to check which mask goes where."""
    from kiln.keras import _recurrent
    draws = []

    def numbered_mask(x, rate, *args, **kwargs):
        draws.append(1.0 + 0.1 * (len(draws) + 1))
        return x * draws[-1]

    reset_after = kind != "GRU reset_before"
    options = {"reset_after": reset_after} if kind.startswith("GRU") else {}
    layer = getattr(K.layers, kind.split()[0])(3, dropout=0.3, recurrent_dropout=0.4, **options)
    x = randn(2, 4, 2)
    layer(x)
    assert layer.get_config()["recurrent_dropout"] == 0.4
    monkeypatch.setattr(_recurrent._nn, "dropout", numbered_mask)
    got = layer(x, training=True).numpy()
    gates = {"SimpleRNN": 1, "LSTM": 4}.get(kind, 3)
    assert len(draws) == 2 * gates  # once per call, not per step
    m, r = draws[:gates], draws[gates:]
    kernel, recurrent, bias = [w.numpy().astype(np.float64) for w in layer.weights]
    u = 3

    def block(w, g):
        return w[:, g * u:(g + 1) * u]

    h = np.zeros((2, u))
    c = np.zeros((2, u))
    for t in range(4):
        xt = x[:, t].astype(np.float64)
        if kind.startswith("GRU"):
            b_in, b_rec = bias if reset_after else (bias, np.zeros_like(bias))
            pre_x = [(xt * m[g]) @ block(kernel, g) + b_in[g * u:(g + 1) * u] for g in range(3)]
            pre_h = [(h * r[g]) @ block(recurrent, g) + b_rec[g * u:(g + 1) * u] for g in range(3)]
            z, reset = sigmoid(pre_x[0] + pre_h[0]), sigmoid(pre_x[1] + pre_h[1])
            candidate = reset * pre_h[2] if reset_after else (reset * h * r[2]) @ block(recurrent, 2)
            h = z * h + (1 - z) * np.tanh(pre_x[2] + candidate)
            continue
        pre = [(xt * m[g]) @ block(kernel, g) + bias[g * u:(g + 1) * u] + (h * r[g]) @ block(recurrent, g)
               for g in range(gates)]
        if kind == "SimpleRNN":
            h = np.tanh(pre[0])
        else:
            c = sigmoid(pre[1]) * c + sigmoid(pre[0]) * np.tanh(pre[2])
            h = sigmoid(pre[3]) * np.tanh(c)
    np.testing.assert_allclose(got, h, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("return_sequences", [False, True])
def test_time_major_is_the_transposed_layer(unroll, return_sequences):
    x = randn(4, 3, 2)  # [batch, time, features]
    mask = np.array([[True, True, False], [True, False, False], [True, True, True], [False, True, True]])
    batch_major = K.layers.GRU(3, return_sequences=return_sequences, return_state=True)
    time_major = K.layers.GRU(3, return_sequences=return_sequences, return_state=True, time_major=True,
                              unroll=unroll)
    batch_major(x)
    time_major(np.transpose(x, (1, 0, 2)))
    time_major.set_weights(batch_major.get_weights())
    shape = time_major.compute_output_shape((None, 4, 2))
    assert shape[0].as_list() == ([None, 4, 3] if return_sequences else [4, 3]) and shape[1].as_list() == [4, 3]
    assert time_major.get_config()["time_major"] is True
    for m in (None, mask):
        want_out, want_h = batch_major(x, mask=m)
        call = tf.function(lambda v, vm: time_major(v, mask=vm)) if m is not None else \
            tf.function(lambda v: time_major(v))
        got_out, got_h = call(np.transpose(x, (1, 0, 2)), m.T) if m is not None else call(np.transpose(x, (1, 0, 2)))
        want_out = np.transpose(want_out.numpy(), (1, 0, 2)) if return_sequences else want_out.numpy()
        np.testing.assert_allclose(got_out.numpy(), want_out, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got_h.numpy(), want_h.numpy(), rtol=1e-6, atol=1e-7)
