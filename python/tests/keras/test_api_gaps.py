"""The smaller pieces of Keras 2.15's catalogue filled in: RNN(list of cells) / StackedRNNCells, AbstractRNNCell,
RNN(cell) configs, layers.experimental (SyncBatchNormalization, preprocessing, PreprocessingLayer.adapt),
utils (to_ordinal, get_source_inputs, pack / unpack, interactive logging), callbacks.BaseLogger,
models.model_from_yaml, a functional model's list of one output."""
import logging

import numpy as np
import pytest

import kiln as tf

K = tf.keras
L = K.layers
rng = np.random.default_rng(8)
X = rng.standard_normal((3, 5, 4)).astype(np.float32)


def test_a_list_of_cells_is_the_cells_stacked():
    cells = [L.LSTMCell(6), L.GRUCell(3)]
    stacked = L.RNN(cells, return_sequences=True)
    y = stacked(X).numpy()
    first, second = L.RNN(cells[0], return_sequences=True), L.RNN(cells[1], return_sequences=True)
    np.testing.assert_allclose(y, second(first(X)).numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(stacked.cell, L.StackedRNNCells) and stacked.cell.state_size == ([6, 6], 3)
    assert len(stacked.weights) == 6
    traced = tf.function(lambda v: stacked(v))
    np.testing.assert_allclose(traced(X).numpy(), y, rtol=1e-5, atol=1e-6)
    last = L.RNN([L.SimpleRNNCell(2), L.SimpleRNNCell(3)])
    inputs = K.Input((5, 4))
    assert K.Model(inputs, last(inputs)).output_shape == (None, 3)
    with pytest.raises(NotImplementedError, match="return_state=True with a list of cells"):
        L.RNN(cells, return_state=True)


class MinimalRNNCell(L.AbstractRNNCell):
    """The cell of Keras' AbstractRNNCell documentation: h = x @ kernel + h_prev @ recurrent."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def build(self, input_shape):
        self.kernel = self.add_weight(shape=(input_shape[-1], self.units), initializer="uniform", name="kernel")
        self.recurrent_kernel = self.add_weight(shape=(self.units, self.units), initializer="uniform",
                                                name="recurrent_kernel")
        self.built = True

    def call(self, inputs, states):
        h = tf.matmul(inputs, self.kernel) + tf.matmul(states[0], self.recurrent_kernel)
        return h, [h]


def test_a_custom_cell_runs_from_zero_states():
    layer = L.RNN(MinimalRNNCell(3), return_sequences=True)
    y = layer(X).numpy()
    kernel, recurrent = layer.cell.kernel.numpy(), layer.cell.recurrent_kernel.numpy()
    h, want = np.zeros((3, 3)), []
    for t in range(5):
        h = X[:, t] @ kernel + h @ recurrent
        want.append(h)
    np.testing.assert_allclose(y, np.stack(want, 1), rtol=1e-5, atol=1e-6)
    zeros = MinimalRNNCell(2).get_initial_state(batch_size=4, dtype="float32")
    assert [z.shape for z in zeros] == [(4, 2)]


def test_rnn_of_a_cell_round_trips_its_config_and_file(tmp_path):
    layer = L.RNN(L.GRUCell(3, reset_after=False), go_backwards=True)
    config = layer.get_config()
    assert config["cell"]["class_name"] == "GRUCell" and config["go_backwards"] is True
    again = L.RNN.from_config(config)
    assert isinstance(again.cell, L.GRUCell) and not again.cell.reset_after
    assert "cell" not in L.LSTM(2).get_config()
    inputs = K.Input((5, 4))
    model = K.Model(inputs, L.RNN([L.LSTMCell(3), L.SimpleRNNCell(2)])(inputs))
    model.save(tmp_path / "m.keras")
    loaded = K.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(loaded(X).numpy(), model(X).numpy(), rtol=1e-6)


def test_layers_experimental():
    pre = L.experimental.preprocessing
    assert pre.Rescaling is L.Rescaling and pre.TextVectorization is L.TextVectorization
    assert L.experimental.EinsumDense is L.EinsumDense
    sync = L.experimental.SyncBatchNormalization()
    x = rng.standard_normal((6, 3)).astype(np.float32)
    plain = L.BatchNormalization()
    np.testing.assert_allclose(sync(x, training=True).numpy(), plain(x, training=True).numpy(), rtol=1e-6)
    assert L.deserialize(L.serialize(sync)).__class__.__name__ == "SyncBatchNormalization"


class RunningMax(L.experimental.preprocessing.PreprocessingLayer):
    """Scales by the largest absolute value adapt saw."""

    def build(self, input_shape):
        self.top = self.add_weight("top", (), initializer="zeros", trainable=False)
        self.built = True

    def reset_state(self):
        self.top.assign(0.0)

    def update_state(self, data):
        self.top.assign(tf.maximum(self.top, tf.reduce_max(tf.abs(tf.cast(data, tf.float32)))))

    def call(self, inputs):
        return inputs / self.top


def test_preprocessing_layer_adapts_over_batches():
    layer = RunningMax()
    assert not layer.is_adapted
    data = np.arange(-70, 5, dtype=np.float32).reshape(-1, 1)
    layer.adapt(data, batch_size=16)
    assert layer.is_adapted and layer.top.numpy() == 70.0
    layer.adapt(tf.data.Dataset.from_tensor_slices(np.array([[3.0], [-4.0]], np.float32)).batch(1))
    assert layer.top.numpy() == 4.0  # reset before adapting again
    layer.adapt(data, steps=1)
    assert layer.top.numpy() == 70.0  # the first batch of 32 only
    with pytest.raises(ValueError, match="`batch_size` is not supported for datasets"):
        layer.adapt(tf.data.Dataset.from_tensor_slices(data), batch_size=4)


def test_utils_helpers():
    np.testing.assert_array_equal(K.utils.to_ordinal([0, 2, 1], num_classes=3), [[0, 0], [1, 1], [1, 0]])
    assert K.utils.to_ordinal([[1], [3]]).shape == (2, 3)
    a, b = K.Input((2,), name="a"), K.Input((3,), name="b")
    out = L.Dense(1)(L.Concatenate()([a, L.Dense(2)(b)]))
    assert K.utils.get_source_inputs(out) == [a, b]
    assert K.utils.get_source_inputs(a) == [a]
    x = np.zeros(2)
    assert K.utils.pack_x_y_sample_weight(x) is x and K.utils.pack_x_y_sample_weight((x,)) == ((x,),)
    assert K.utils.pack_x_y_sample_weight(x, 1, 2) == (x, 1, 2)
    assert K.utils.unpack_x_y_sample_weight((x, 1)) == (x, 1, None)


def test_interactive_logging_sends_fit_progress_to_logging(capsys, caplog):
    model = K.Sequential([K.Input((2,)), L.Dense(1)])
    model.compile("sgd", "mse")
    data = np.zeros((4, 2), np.float32), np.zeros((4, 1), np.float32)
    assert K.utils.is_interactive_logging_enabled()
    K.utils.disable_interactive_logging()
    try:
        with caplog.at_level(logging.INFO):
            model.fit(*data, epochs=1, verbose=1)
    finally:
        K.utils.enable_interactive_logging()
    assert "loss:" not in capsys.readouterr().out
    assert any("loss:" in record.getMessage() for record in caplog.records)
    model.fit(*data, epochs=1, verbose=1)
    assert "loss:" in capsys.readouterr().out


def test_base_logger_averages_by_batch_size():
    logger = K.callbacks.BaseLogger(stateful_metrics=["auc"])
    logger.set_params({"metrics": ["loss", "auc"]})
    logger.on_epoch_begin(0)
    logger.on_batch_end(0, {"size": 2, "loss": 1.0, "auc": 0.5})
    logger.on_batch_end(1, {"size": 6, "loss": 3.0, "auc": 0.7})
    logs = {}
    logger.on_epoch_end(0, logs)
    assert logs == {"loss": (2 * 1.0 + 6 * 3.0) / 8, "auc": 0.7}


def test_model_from_yaml_is_removed_as_in_keras():
    with pytest.raises(RuntimeError, match="Method `model_from_yaml\\(\\)` has been removed due to security risk"):
        K.models.model_from_yaml("")


def test_a_list_of_one_output_or_input_stands_for_the_tensor():
    inputs = K.Input((3,))
    model = K.Model([inputs], [L.Dense(2)(inputs)])
    out = model(np.ones((1, 3), np.float32))
    assert isinstance(out, tf.Tensor) and out.shape == (1, 2)
    assert isinstance(model.output, type(inputs)) and len(model.outputs) == 1 and model.input is inputs


def test_split_dataset_sizes_order_and_seeded_shuffle():
    x = np.arange(10)
    y = np.arange(10) * 10
    left, right = K.utils.split_dataset((x, y), left_size=0.8)
    assert [int(a) for a, _ in left] == list(range(8)) and [int(b) for _, b in right] == [80, 90]
    left, right = K.utils.split_dataset(x, right_size=3)
    assert [int(v) for v in right] == [7, 8, 9] and len(list(left)) == 7
    shuffled = [[int(v) for v in K.utils.split_dataset(x, left_size=5, shuffle=True, seed=2)[0]] for _ in range(2)]
    assert shuffled[0] == shuffled[1] and shuffled[0] != list(range(5))
    from_ds = K.utils.split_dataset(tf.data.Dataset.range(6), left_size=2)[1]
    assert [int(v) for v in from_ds] == [2, 3, 4, 5]
    with pytest.raises(ValueError, match="At least one of the `left_size` or `right_size` must be specified"):
        K.utils.split_dataset(x)
    with pytest.raises(ValueError, match="`left_size` should be either a positive integer smaller than 10"):
        K.utils.split_dataset(x, left_size=10)
    with pytest.raises(ValueError, match="The sum of `left_size` and `right_size` is greater than 1"):
        K.utils.split_dataset(x, left_size=0.6, right_size=0.6)
    with pytest.raises(TypeError, match="must be either a `tf.data.Dataset` object or a list/tuple of arrays"):
        K.utils.split_dataset("data", left_size=1)


def test_warmstart_embedding_matrix_keeps_the_shared_tokens_rows():
    base = rng.standard_normal((3, 4)).astype(np.float32)
    matrix = K.utils.warmstart_embedding_matrix(["a", "b", "c"], ["c", "x", "a", "y"], base,
                                                new_embeddings_initializer="zeros").numpy()
    np.testing.assert_array_equal(matrix, [base[2], np.zeros(4), base[0], np.zeros(4)])
    drawn = K.utils.warmstart_embedding_matrix(["a"], ["a", "z"], base[:1]).numpy()
    np.testing.assert_array_equal(drawn[0], base[0])
    assert drawn.shape == (2, 4) and np.abs(drawn[1]).max() <= 0.05  # "uniform": U(-0.05, 0.05)


def test_random_fourier_features_approximate_the_rbf_kernel():
    tf.keras.utils.set_random_seed(3)
    layer = L.experimental.RandomFourierFeatures(20000)
    x = rng.standard_normal((4, 6)).astype(np.float32) * 0.8
    phi = layer(x).numpy().astype(np.float64)
    kernel, bias, scale = (w.numpy() for w in layer.weights)
    assert scale.tolist() == [pytest.approx(np.sqrt(3.0))] and not layer.trainable_weights
    np.testing.assert_allclose(phi, np.cos(x @ (kernel / scale) + bias), rtol=1e-4, atol=1e-4)
    # E[2/D phi(x) . phi(y)] = exp(-|x - y|^2 / (2 scale^2)) for N(0, 1) kernel entries.
    gram = 2.0 / 20000 * phi @ phi.T
    distances = ((x[:, None] - x[None]) ** 2).sum(-1)
    np.testing.assert_allclose(gram, np.exp(-distances / 6.0), atol=0.03)
    trainable = L.experimental.RandomFourierFeatures(8, "laplacian", scale=2.0, trainable=True)
    trainable(x)
    assert [w.name for w in trainable.trainable_weights] == [trainable.kernel_scale.name]
    config = trainable.get_config()
    assert config["kernel_initializer"] == "laplacian" and config["scale"] == 2.0
    assert L.deserialize(L.serialize(trainable)).output_dim == 8
    with pytest.raises(ValueError, match="Unsupported `kernel_initializer`: cosine"):
        L.experimental.RandomFourierFeatures(4, "cosine")


def test_timed_thread_runs_on_interval_until_stopped():
    import threading
    import time
    ticks = []
    done = threading.Event()

    class Ticker(K.utils.TimedThread):
        def on_interval(self):
            ticks.append(time.monotonic())
            if len(ticks) >= 3:
                done.set()

    with Ticker(interval=0.01) as ticker:
        assert done.wait(5) and ticker.is_alive()
    ticker.thread.join(5)
    assert not ticker.is_alive() and len(ticks) >= 3
    with pytest.raises(NotImplementedError, match="Needs to be implemented in subclasses"):
        K.utils.TimedThread(1).on_interval()


class Squares(K.utils.Sequence):
    def __init__(self):
        self.epochs_ended = 0

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return np.full((2,), i * i)

    def on_epoch_end(self):
        self.epochs_ended += 1


def test_enqueuers_read_ahead_in_order():
    seq = Squares()
    enqueuer = K.utils.OrderedEnqueuer(seq)
    enqueuer.start(workers=3, max_queue_size=4)
    batches = enqueuer.get()
    got = [int(next(batches)[0]) for _ in range(12)]
    enqueuer.stop()
    assert got == [0, 1, 4, 9, 16] * 2 + [0, 1] and seq.epochs_ended >= 2 and not enqueuer.is_running()
    gen = K.utils.GeneratorEnqueuer((i for i in range(7)))
    gen.start(workers=2)
    assert list(gen.get()) == list(range(7))
    gen.stop()

    def broken():
        yield 1
        raise KeyError("bad batch")
    failing = K.utils.GeneratorEnqueuer(broken())
    failing.start()
    with pytest.raises(KeyError, match="bad batch"):
        list(failing.get())
    with pytest.raises(NotImplementedError, match="use_multiprocessing=True is not supported"):
        K.utils.OrderedEnqueuer(seq, use_multiprocessing=True)


def test_utils_legacy_serialization():
    config = K.utils.legacy.serialize_keras_object(L.Dense(3, name="d"))
    assert set(config) == {"class_name", "config"} and config["class_name"] == "Dense"
    assert K.utils.legacy.serialize_keras_object(tf.nn.relu) == "relu"
    layer = K.utils.legacy.deserialize_keras_object(config, module_objects={"Dense": L.Dense})
    assert isinstance(layer, L.Dense) and layer.units == 3


def test_sharpness_aware_minimization_steps_from_the_perturbed_weights():
    """One SGD step of SAM on a linear model with MSE, against NumPy: g at w, w' = w + rho g/|g|, the step with
    the gradient at w'."""
    x = rng.standard_normal((8, 3)).astype(np.float32)
    y = rng.standard_normal((8, 1)).astype(np.float32)
    inner = K.Sequential([K.Input((3,)), L.Dense(1, use_bias=False)])
    w = inner.get_weights()[0].astype(np.float64)
    sam = K.models.experimental.SharpnessAwareMinimization(inner, rho=0.1)
    sam.compile(K.optimizers.SGD(0.5), "mse")
    sam.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)

    def grad(weights):
        return 2 * x.T.astype(np.float64) @ (x @ weights - y) / len(x)
    g = grad(w)
    perturbed = w + 0.1 * g / np.linalg.norm(g)
    np.testing.assert_allclose(inner.get_weights()[0], w - 0.5 * grad(perturbed), rtol=1e-4, atol=1e-6)
    split = K.models.experimental.SharpnessAwareMinimization(K.Sequential([K.Input((3,)), L.Dense(1)]),
                                                             num_batch_splits=2)
    split.compile("sgd", "mse")
    assert np.isfinite(split.fit(x, y, batch_size=8, verbose=0).history["loss"]).all()
    assert sam.get_config()["rho"] == 0.1 and sam(x).shape == (8, 1)


def test_dropout_noise_shape_shares_one_draw_along_its_ones():
    x = np.ones((64, 3, 4, 2), np.float32)
    y = L.Dropout(0.5, noise_shape=(None, 1, 1, 1), seed=3)(x, training=True).numpy()
    per_sample = y.reshape(64, -1)
    assert set(np.unique(per_sample)) <= {0.0, 2.0}
    assert all(len(set(row)) == 1 for row in per_sample.tolist())  # each sample kept or dropped whole
    assert 0 < (per_sample[:, 0] == 0).sum() < 64
    channels = L.Dropout(0.5, noise_shape=(1, 1, 1, 2))(x, training=True).numpy()
    assert all(len(np.unique(channels[..., c])) == 1 for c in range(2))
    assert L.Dropout(0.5, noise_shape=(None, 1, 1, 1)).get_config()["noise_shape"] == (None, 1, 1, 1)
    with pytest.raises(ValueError, match="does not broadcast"):
        L.Dropout(0.5, noise_shape=(None, 2, 1, 1))(x, training=True)
