"""Files written by real Keras (tests/data/keras, see PROVENANCE.md there) load into Kiln with their weights,
and predict what TF printed, or what a NumPy LSTM computes from the file's own arrays."""
import os

import numpy as np
import pytest

import kiln as tf
from keras_util import REPO

K = tf.keras
DATA = os.path.join(REPO, "tests", "data", "keras", "frugally-deep")
h5py = pytest.importorskip("h5py")


def _file_weights(path, layer_name):
    with h5py.File(path, "r") as f:
        group = f["model_weights"][layer_name]
        names = [n.decode() if isinstance(n, bytes) else n for n in group.attrs["weight_names"]]
        return [np.asarray(group[n]) for n in names]


def test_tf_keras_gru_with_initial_state_predicts_what_tf_printed():
    path = os.path.join(DATA, "temp_stateless.h5")
    model = K.models.load_model(path, compile=False)
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "InputLayer", "GRU"]
    gru = model.get_layer("gru")
    assert gru.cell.reset_after and not gru.cell.use_bias and gru.return_sequences
    for mine, theirs in zip(gru.get_weights(), _file_weights(path, "gru")):
        np.testing.assert_array_equal(mine, theirs)
    np.testing.assert_array_equal(gru.get_weights()[0], [[1.0, -2.0, 3.0]])
    x = np.zeros((1, 3, 1), "float32")
    x[0, 0, 0] = 1
    out = model.predict([x, np.array([[10.0]], "float32")], verbose=0)
    # temp_rnn_results.txt: TF's output for this input and initial state
    np.testing.assert_allclose(out.reshape(-1), [-7.676248, -7.5144324, -7.3429837], rtol=1e-6)


def _lstm(x, kernel, recurrent, bias, activation, recurrent_activation, h=None, c=None, backwards=False):
    """Keras' LSTM in float64: gates i, f, c, o in the kernels' column order."""
    units = recurrent.shape[0]
    h = np.zeros((x.shape[0], units)) if h is None else h
    c = np.zeros((x.shape[0], units)) if c is None else c
    steps = range(x.shape[1] - 1, -1, -1) if backwards else range(x.shape[1])
    outputs = []
    for t in steps:
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = (z[:, k * units:(k + 1) * units] for k in range(4))
        c = recurrent_activation(f) * c + recurrent_activation(i) * activation(g)
        h = recurrent_activation(o) * activation(c)
        outputs.append(h)
    return np.stack(outputs, axis=1), h, c


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def _hard_sigmoid(z):
    return np.clip(0.2 * z + 0.5, 0, 1)


def test_keras_2_lstm_model_loads_its_weights_and_predicts_as_numpy():
    path = os.path.join(DATA, "lstm.h5")
    model = K.models.load_model(path, compile=False)
    assert len(model.inputs) == 5 and len(model.outputs) == 17
    for layer in model.layers:
        theirs = _file_weights(path, layer.name)
        mine = layer.get_weights()
        assert len(mine) == len(theirs), layer.name
        for a, b in zip(mine, theirs):
            np.testing.assert_array_equal(a, b, err_msg=layer.name)
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(2,) + tuple(t.shape[1:] if None not in t.shape[1:] else (5, 4))) for t in model.inputs]
    outs = model.predict([x.astype("float32") for x in xs], verbose=0)
    x1 = xs[0].astype("float32").astype(np.float64)
    # lstm_3: input_1 -> (output, state_h, state_c)
    _, h, c = _lstm(x1, *_file_weights(path, "lstm_3"), np.tanh, _sigmoid)
    for got, want in zip(outs[1:4], (h, h, c)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # lstm_1 (relu gates, sequences) then lstm_2
    seq, _, _ = _lstm(x1, *_file_weights(path, "lstm_1"), np.tanh, lambda z: np.maximum(z, 0))
    _, h2, _ = _lstm(seq, *_file_weights(path, "lstm_2"), np.tanh, _sigmoid)
    np.testing.assert_allclose(outs[0], h2, rtol=1e-4, atol=1e-5)
    # bidirectional_3: forward and backward LSTMs over input_1, concatenated
    w = _file_weights(path, "bidirectional_3")
    forward = _lstm(x1, *w[:3], np.tanh, _sigmoid)[1]
    backward = _lstm(x1, *w[3:], np.tanh, _sigmoid, backwards=True)[1]
    np.testing.assert_allclose(outs[6], np.concatenate([forward, backward], axis=1), rtol=1e-5, atol=1e-6)
    # lstm_15: input_3 with initial states input_4, input_5 (hard_sigmoid gates); sequences, h, c
    seq, h, c = _lstm(xs[2], *_file_weights(path, "lstm_15"), np.tanh, _hard_sigmoid, h=xs[3], c=xs[4])
    for got, want in zip(outs[14:17], (seq, h, c)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


IDAES = os.path.join(REPO, "tests", "data", "keras", "idaes")


def _keras3_arrays(path):
    """The layers' and optimizer's arrays of a Keras 3 .keras file, read with h5py from its zip."""
    import io
    import zipfile
    with zipfile.ZipFile(path) as z, h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
        layers = [np.asarray(f[f"layers/{name}/vars/{i}"]) for name in ("dense", "dense_1", "dense_2")
                  for i in (0, 1)]
        optimizer = [np.asarray(f["optimizer/vars"][str(i)]) for i in range(len(f["optimizer/vars"]))]
    return layers, optimizer


@pytest.mark.parametrize("activation", ["relu", "sigmoid"])
def test_keras_3_files_load_with_weights_optimizer_and_predictions(activation):
    path = os.path.join(IDAES, f"PT_data_2_10_10_2_{activation}.keras")
    model = K.models.load_model(path)
    assert type(model).__name__ == "Sequential" and model.name == f"PT_data_2_10_10_2_{activation}"
    weights, optimizer = _keras3_arrays(path)
    for mine, theirs in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(mine, theirs)
    # Keras 3's optimizer variables: iterations, the learning rate, then each weight's m and v.
    assert type(model.optimizer).__name__ == "Adam" and model.optimizer.iterations.numpy() == optimizer[0] >= 20000
    assert float(model.optimizer.learning_rate.numpy()) == pytest.approx(float(optimizer[1]))
    slots = [v.numpy() for v in model.optimizer.variables if v.shape.rank]
    assert len(slots) == 12
    for mine, theirs in zip(slots, optimizer[2:]):
        np.testing.assert_array_equal(mine, theirs)
    act = (lambda z: np.maximum(z, 0)) if activation == "relu" else (lambda z: 1 / (1 + np.exp(-z)))
    x = np.random.default_rng(1).normal(size=(8, 2))
    h = act(x @ weights[0] + weights[1])
    expected = act(h @ weights[2] + weights[3]) @ weights[4] + weights[5]
    np.testing.assert_allclose(model.predict(x.astype("float32"), verbose=0), expected, rtol=1e-5, atol=1e-5)
    assert model.evaluate(x.astype("float32"), expected.astype("float32"), verbose=0) < 1e-10  # compiled: mse


def test_keras_3_json_and_weights_file():
    with open(os.path.join(IDAES, "PT_data_2_10_10_2_relu.json")) as f:
        model = K.models.model_from_json(f.read())
    model.load_weights(os.path.join(IDAES, "PT_data_2_10_10_2_relu.weights.h5"))
    weights, _ = _keras3_arrays(os.path.join(IDAES, "PT_data_2_10_10_2_relu.keras"))
    for mine, theirs in zip(model.get_weights(), weights):
        np.testing.assert_array_equal(mine, theirs)
    assert [layer.name for layer in model.layers] == ["dense_9", "dense_10", "dense_11"]
