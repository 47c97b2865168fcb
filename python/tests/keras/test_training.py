"""compile / fit / evaluate / predict, losses, metrics and optimizers against NumPy, and the traced
training step."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras


def blobs(n=300, seed=0):
    """Three well separated Gaussian blobs in 2-D: (x float32 [n, 2], y int32 [n])."""
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 3).astype(np.int32)
    centers = np.array([[2.0, 0.0], [-2.0, 2.0], [-2.0, -2.0]], np.float32)
    x = centers[y] + 0.5 * rng.standard_normal((n, 2)).astype(np.float32)
    return x, y


def classifier():
    return K.Sequential([K.layers.Dense(16, activation="relu", input_shape=(2,)), K.layers.Dense(3)])


# ---- fit ------------------------------------------------------------------------------------

def test_fit_lowers_the_loss_and_history_has_keras_keys():
    tf.random.set_seed(1)
    x, y = blobs()
    model = classifier()
    model.compile(optimizer=K.optimizers.Adam(0.05), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x, y, batch_size=30, epochs=5, validation_data=blobs(60, seed=1), verbose=0)
    assert isinstance(history, K.callbacks.History) and model.history is history
    assert sorted(history.history) == ["accuracy", "loss", "val_accuracy", "val_loss"]
    assert all(len(v) == 5 for v in history.history.values()) and history.epoch == [0, 1, 2, 3, 4]
    losses = history.history["loss"]
    assert losses[-1] < 0.5 * losses[0]
    assert history.history["val_accuracy"][-1] > 0.95
    assert model.metrics_names == ["loss", "accuracy"]
    # The logs are the epoch's means, as evaluate computes them.
    loss, acc = model.evaluate(x, y, batch_size=300, verbose=0)
    assert abs(acc - model.evaluate(x, y, verbose=0)[1]) < 1e-6 and acc > 0.95
    assert model.evaluate(x, y, verbose=0, return_dict=True).keys() == {"loss", "accuracy"}


def test_regression_with_sgd_momentum_and_mse():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((256, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    model = K.Sequential([K.layers.Dense(1, input_shape=(3,))])
    model.compile(optimizer=K.optimizers.SGD(0.05, momentum=0.9), loss="mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=32, epochs=20, verbose=0)
    assert history.history["loss"][-1] < 1e-3 < history.history["loss"][0]
    assert sorted(history.history) == ["loss", "mae"]
    np.testing.assert_allclose(model.layers[0].kernel.numpy().ravel(), [1.0, -2.0, 0.5], atol=0.02)
    assert isinstance(model.evaluate(x, y, verbose=0), list)
    model.compile(optimizer="sgd", loss="mean_squared_error")
    assert isinstance(model.evaluate(x, y, verbose=0), float)   # no metrics: a scalar


def test_the_train_step_is_traced_once_per_input_signature():
    x, y = blobs(200)
    model = classifier()
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    model.fit(x, y, batch_size=50, epochs=3, verbose=0)
    assert isinstance(model.train_function, tf.Function)
    assert model.train_function.experimental_get_tracing_count() == 1   # 12 steps, one graph
    x2, y2 = blobs(210)                                                  # 50, 50, 50, 50 and a last batch of 10
    model.fit(x2, y2, batch_size=50, epochs=2, verbose=0)
    assert model.train_function.experimental_get_tracing_count() == 2   # one more signature: the last batch
    model.fit(x2, y2, batch_size=50, epochs=2, verbose=0)
    assert model.train_function.experimental_get_tracing_count() == 2
    model.evaluate(x2, y2, batch_size=70, verbose=0)
    model.evaluate(x2, y2, batch_size=70, verbose=0)
    assert model.test_function.experimental_get_tracing_count() == 1
    model.predict(x, batch_size=100, verbose=0)
    assert model.predict_function.experimental_get_tracing_count() == 1


def test_the_train_step_is_one_graph_that_updates_weights_and_optimizer_state():
    x, y = blobs(100)
    model = classifier()
    optimizer = K.optimizers.Adam(0.01)
    model.compile(optimizer=optimizer, loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=25, epochs=2, verbose=0)
    assert optimizer.iterations.numpy() == 8
    graph = model.train_function.get_concrete_function((x[:25], y[:25])).graph.to_string()
    assert "ApplyAdam" in graph and "MatMul" in graph
    assert "Adam/dense/kernel/m:0" in [v.name for v in optimizer.variables]


def test_predict_shapes_and_values():
    x, _ = blobs(70)
    model = classifier()
    out = model.predict(x, batch_size=32, verbose=0)
    assert isinstance(out, np.ndarray) and out.shape == (70, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out, model(x).numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.predict_on_batch(x[:5]), out[:5], rtol=1e-5, atol=1e-6)
    two = K.Model(*(lambda i: (i, [K.layers.Dense(2)(i), K.layers.Dense(1)(i)]))(K.Input(shape=(2,))))
    a, b = two.predict(x, verbose=0)
    assert a.shape == (70, 2) and b.shape == (70, 1)


def test_fit_on_an_iterable_of_batches_and_on_a_kiln_dataset():
    x, y = blobs(120)
    model = classifier()
    model.compile(optimizer=K.optimizers.Adam(0.05), loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    batches = [(x[i:i + 40], y[i:i + 40]) for i in range(0, 120, 40)]
    history = model.fit(batches, epochs=3, verbose=0)
    assert len(history.history["loss"]) == 3
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(120, seed=1).batch(40)
    history = model.fit(dataset, epochs=4, validation_data=dataset, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert history.history["val_accuracy"][-1] > 0.9
    assert model.evaluate(dataset, verbose=0, return_dict=True)["accuracy"] > 0.9
    assert model.predict(dataset, verbose=0).shape == (120, 3)

    def generate():
        for i in range(0, 120, 60):
            yield x[i:i + 60], y[i:i + 60]
    model.fit(generate(), epochs=1, verbose=0)
    with pytest.warns(UserWarning, match="Your input ran out of data"):
        history = model.fit(generate(), epochs=3, verbose=0)    # a generator: one pass only
    assert len(history.history["loss"]) == 1


def test_validation_split_sample_weight_and_train_on_batch():
    x, y = blobs(100)
    model = classifier()
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[K.metrics.SparseCategoricalAccuracy()])
    history = model.fit(x, y, validation_split=0.2, epochs=2, verbose=0, sample_weight=np.ones(100, np.float32))
    assert sorted(history.history) == ["loss", "sparse_categorical_accuracy", "val_loss",
                                       "val_sparse_categorical_accuracy"]
    loss, acc = model.train_on_batch(x[:10], y[:10])
    assert np.isfinite(loss) and 0 <= acc <= 1
    assert model.test_on_batch(x[:10], y[:10], return_dict=True).keys() == {"loss", "sparse_categorical_accuracy"}


def test_callbacks_see_every_epoch_and_can_stop_training():
    x, y = blobs(60)
    model = classifier()
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    seen = []

    class Stop(K.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((epoch, sorted(logs)))
            if epoch == 1:
                self.model.stop_training = True

    history = model.fit(x, y, epochs=10, verbose=0, callbacks=[Stop()])
    assert seen == [(0, ["loss"]), (1, ["loss"])] and len(history.history["loss"]) == 2


def test_run_eagerly_trains_without_tracing():
    x, y = blobs(60)
    model = classifier()
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), run_eagerly=True)
    model.fit(x, y, epochs=1, verbose=0)
    assert not isinstance(model.train_function, tf.Function)


def test_bad_input_errors():
    x, y = blobs(30)
    model = classifier()
    with pytest.raises(RuntimeError, match="You must compile your model before training/testing"):
        model.fit(x, y, verbose=0)
    with pytest.raises(ValueError, match="Unknown loss function: 'crossentropy'"):
        model.compile(optimizer="adam", loss="crossentropy")
    with pytest.raises(ValueError, match="Unknown optimizer: 'adamx'"):
        model.compile(optimizer="adamx", loss="mse")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accurasy"])
    with pytest.raises(ValueError, match="Unknown metric function: 'accurasy'"):
        model.fit(x, y, verbose=0)
    model.compile(optimizer="adam", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ValueError, match=r"Data cardinality is ambiguous:\n  x sizes: 30\n  y sizes: 29"):
        model.fit(x, y[:29], verbose=0)
    with pytest.raises(ValueError, match=r'Input 0 of layer "sequential" is incompatible with the layer: expected '
                                         r"shape=\(None, 2\), found shape=\(32, 3\)"):
        model.fit(np.zeros((40, 3), np.float32), np.zeros(40, np.int32), verbose=0)
    with pytest.raises(ValueError, match=r"labels must be in \[0, 3\).*got a label 7"):
        K.losses.sparse_categorical_crossentropy(np.full(3, 7), np.ones((3, 3), np.float32))
    with pytest.raises(ValueError, match="Target data is missing"):
        model.fit(x, verbose=0)


# ---- losses -------------------------------------------------------------------------------------

def np_log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_losses_match_numpy():
    rng = np.random.default_rng(5)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    probs = np.exp(np_log_softmax(logits)).astype(np.float32)
    labels = rng.integers(0, 4, 6).astype(np.int32)
    onehot = np.eye(4, dtype=np.float32)[labels]
    sparse = -np_log_softmax(logits)[np.arange(6), labels]
    np.testing.assert_allclose(K.losses.sparse_categorical_crossentropy(labels, logits, from_logits=True).numpy(),
                               sparse, rtol=1e-5)
    np.testing.assert_allclose(K.losses.sparse_categorical_crossentropy(labels, probs).numpy(), sparse, rtol=1e-4)
    np.testing.assert_allclose(K.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits).numpy(),
                               sparse.mean(), rtol=1e-5)
    np.testing.assert_allclose(K.losses.SparseCategoricalCrossentropy()(labels[:, None], probs).numpy(),
                               sparse.mean(), rtol=1e-4)                          # labels [batch, 1]
    np.testing.assert_allclose(K.losses.CategoricalCrossentropy(from_logits=True)(onehot, logits).numpy(),
                               sparse.mean(), rtol=1e-5)
    np.testing.assert_allclose(K.losses.CategoricalCrossentropy()(onehot, probs).numpy(), sparse.mean(), rtol=1e-4)
    target = rng.standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(K.losses.MeanSquaredError()(target, logits).numpy(), ((target - logits) ** 2).mean(),
                               rtol=1e-5)
    np.testing.assert_allclose(K.losses.mse(target, logits).numpy(), ((target - logits) ** 2).mean(-1), rtol=1e-5)
    w = np.arange(6, dtype=np.float32)
    np.testing.assert_allclose(K.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits, w).numpy(),
                               (sparse * w).mean(), rtol=1e-5)
    np.testing.assert_allclose(
        K.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="sum")(labels, logits).numpy(),
        sparse.sum(), rtol=1e-5)
    p = 1 / (1 + np.exp(-logits))
    bce = -(onehot * np.log(p) + (1 - onehot) * np.log(1 - p)).mean(-1)
    np.testing.assert_allclose(K.losses.binary_crossentropy(onehot, logits, from_logits=True).numpy(), bce, rtol=1e-5)
    np.testing.assert_allclose(K.losses.get("binary_crossentropy")(onehot, p).numpy(), bce.mean(), rtol=1e-4)


def test_loss_shape_errors():
    with pytest.raises(ValueError, match=r"y_true has shape \(6,\) but y_pred has shape \(6, 4\)"):
        K.losses.MeanSquaredError()(np.zeros(6, np.float32), np.zeros((6, 4), np.float32))
    with pytest.raises(ValueError, match=r"needs labels of shape \(6,\)"):
        K.losses.sparse_categorical_crossentropy(np.zeros((6, 2), np.int32), np.ones((6, 4), np.float32))


# ---- metrics -----------------------------------------------------------------------------------

def test_metrics_accumulate_and_reset():
    m = K.metrics.SparseCategoricalAccuracy()
    m.update_state([0, 1], [[0.9, 0.1], [0.8, 0.2]])
    m.update_state([1, 1], [[0.1, 0.9], [0.2, 0.8]])
    assert m.result().numpy() == 0.75
    m.reset_state()
    assert m.result().numpy() == 0.0
    mean = K.metrics.Mean()
    mean.update_state([1.0, 2.0, 3.0])
    mean.update_state(10.0, sample_weight=3.0)
    assert mean.result().numpy() == pytest.approx(36 / 6)
    assert K.metrics.categorical_accuracy(np.eye(2, dtype=np.float32), [[0.6, 0.4], [0.7, 0.3]]).numpy().tolist() == \
        [1.0, 0.0]
    assert K.metrics.BinaryAccuracy()([[1.0], [0.0]], [[0.7], [0.8]]).numpy() == 0.5


def test_accuracy_picks_keras_variant_from_the_shapes():
    x = np.random.rand(40, 2).astype(np.float32)
    onehot = np.eye(3, dtype=np.float32)[np.arange(40) % 3]
    model = classifier()
    model.compile(optimizer="adam", loss=K.losses.CategoricalCrossentropy(from_logits=True), metrics=["acc"])
    model.fit(x, onehot, verbose=0)
    assert model.metrics[1]._fn is K.metrics.categorical_accuracy and model.metrics_names == ["loss", "acc"]


# ---- optimizers ---------------------------------------------------------------------------------

def test_sgd_and_momentum_updates_match_the_formulas():
    v = tf.Variable([1.0, 2.0])
    K.optimizers.SGD(0.1).apply_gradients([(tf.constant([1.0, -1.0]), v)])
    np.testing.assert_allclose(v.numpy(), [0.9, 2.1], rtol=1e-6)
    w = tf.Variable([1.0])
    opt = K.optimizers.SGD(0.1, momentum=0.5, nesterov=False)
    velocity, expected = 0.0, 1.0
    for g in (1.0, 2.0, -1.0):
        opt.apply_gradients([(tf.constant([g]), w)])
        velocity = 0.5 * velocity - 0.1 * g
        expected += velocity
    np.testing.assert_allclose(w.numpy(), [expected], rtol=1e-6)
    assert opt.get_slot(w, "momentum").numpy() == pytest.approx(velocity)


def test_adam_matches_keras_formula():
    var = tf.Variable(np.array([0.5, -1.0, 2.0], np.float32))
    opt = K.optimizers.Adam(learning_rate=0.01)
    x, m, v = var.numpy().astype(np.float64), np.zeros(3), np.zeros(3)
    for t, g in enumerate([np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -0.5]), np.array([0.0, 0.2, 0.1])], 1):
        opt.apply_gradients(zip([tf.constant(g.astype(np.float32))], [var]))
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        alpha = 0.01 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        x = x - alpha * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(var.numpy(), x, rtol=1e-5)
    assert opt.iterations.numpy() == 3 and opt.learning_rate.numpy() == pytest.approx(0.01)


def test_optimizer_skips_missing_gradients_and_checks_before_changing_state():
    a, b = tf.Variable([1.0]), tf.Variable([1.0])
    opt = K.optimizers.Adam()
    opt.apply_gradients([(None, a), (tf.constant([1.0]), b)])
    assert a.numpy()[0] == 1.0 and b.numpy()[0] != 1.0
    with pytest.raises(ValueError, match="No gradients provided for any variable"):
        opt.apply_gradients([(None, a)])
    with pytest.raises(ValueError, match=r"gradient 0 is float32 \(2,\) but variable"):
        opt.apply_gradients([(tf.constant([1.0, 2.0]), a)])
    assert opt.iterations.numpy() == 1
    opt.learning_rate = 0.5
    assert opt.learning_rate.numpy() == 0.5 and opt.lr.numpy() == 0.5


def test_minimize_with_a_callable_loss():
    w = tf.Variable(3.0)
    opt = K.optimizers.SGD(0.25)
    for _ in range(20):
        opt.minimize(lambda: (w - 1.0) ** 2, [w])
    assert w.numpy() == pytest.approx(1.0, abs=1e-4)


def test_numpy_batches_are_copies_of_the_users_arrays():
    x, y = blobs(90)
    seen = []

    class Probe(K.Model):
        def __init__(self):
            super().__init__()
            self.dense = K.layers.Dense(3)

        def call(self, inputs):
            seen.append((np.asarray(inputs).copy(), np.shares_memory(np.asarray(inputs), x)))
            return self.dense(inputs)

    model = Probe()
    model.compile(optimizer="sgd", loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), run_eagerly=True)
    model.fit(x, y, batch_size=30, shuffle=False, verbose=0)
    # Each batch is the slice of x, copied into its tensor (x stays the user's to write).
    assert [s for _, s in seen] == [False, False, False]
    for i, (batch, _) in enumerate(seen):
        np.testing.assert_array_equal(batch, x[30 * i:30 * (i + 1)])
    model.predict(x, batch_size=45, verbose=0)
    assert [s for _, s in seen[3:]] == [False, False]
