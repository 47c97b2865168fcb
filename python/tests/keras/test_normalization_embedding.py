"""kiln.keras.layers BatchNormalization, LayerNormalization, Embedding and global pooling against NumPy:
values, moving statistics traced vs eager, gradients, fit, saved-model round trips."""
import numpy as np
import pytest

import kiln as tf
from saved_layer_check import check_layer_round_trip

K = tf.keras
rng = np.random.default_rng(7)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def np_normalize(x, axes, eps, gamma=1.0, beta=0.0):
    x = x.astype(np.float64)
    mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta, mean, var


def test_batch_normalization_training_and_moving_statistics_match_numpy():
    bn = K.layers.BatchNormalization(momentum=0.9)
    x = randn(8, 3) * 2 + 1
    want, mean, var = np_normalize(x, 0, 1e-3)
    np.testing.assert_allclose(bn(x, training=True).numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bn.moving_mean.numpy(), 0.1 * mean.ravel(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.moving_variance.numpy(), 0.9 + 0.1 * var.ravel(), rtol=1e-5)
    assert [w.name for w in bn.trainable_weights] == [f"{bn.name}/gamma:0", f"{bn.name}/beta:0"]
    assert len(bn.non_trainable_weights) == 2
    # Inference: the moving statistics, gamma and beta.
    bn.gamma.assign([2.0, 1.0, 0.5])
    bn.beta.assign([0.0, 1.0, -1.0])
    mm, mv = bn.moving_mean.numpy(), bn.moving_variance.numpy()
    np.testing.assert_allclose(bn(x).numpy(), (x - mm) / np.sqrt(mv + 1e-3) * [2.0, 1.0, 0.5] + [0.0, 1.0, -1.0],
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(bn.moving_mean.numpy(), mm)   # inference leaves them


def test_batch_normalization_on_images_and_an_inner_axis():
    x = randn(2, 4, 4, 3)
    bn = K.layers.BatchNormalization(momentum=0.0, center=False, scale=False)
    np.testing.assert_allclose(bn(x, training=True).numpy(), np_normalize(x, (0, 1, 2), 1e-3)[0], rtol=1e-4,
                               atol=1e-5)
    assert bn.gamma is None and len(bn.weights) == 2
    inner = K.layers.BatchNormalization(axis=1, momentum=0.0)
    y = randn(2, 3, 5)
    np.testing.assert_allclose(inner(y, training=True).numpy(), np_normalize(y, (0, 2), 1e-3)[0], rtol=1e-4,
                               atol=1e-5)
    np.testing.assert_allclose(inner.moving_mean.numpy(), y.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)


def assert_same_bits(a, b):
    np.testing.assert_array_equal(np.asarray(a).view(np.uint32), np.asarray(b).view(np.uint32))


@pytest.mark.parametrize("shape", [(16, 4), (6, 5, 7, 3)])
def test_batch_normalization_moving_statistics_traced_equal_eager(shape):
    """Bit for bit: a traced step computes what the eager ops do (its update and normalization fused)."""
    eager = K.layers.BatchNormalization(momentum=0.8)
    traced = K.layers.BatchNormalization(momentum=0.8)
    step = tf.function(lambda x: traced(x, training=True))
    for i in range(5):
        x = randn(*shape) + i
        assert_same_bits(step(x).numpy(), eager(x, training=True).numpy())
    assert_same_bits(traced.moving_mean.numpy(), eager.moving_mean.numpy())
    assert_same_bits(traced.moving_variance.numpy(), eager.moving_variance.numpy())


def test_normalization_gradients_match_finite_differences():
    for layer, training in ((K.layers.BatchNormalization(dtype="float64"), True),
                            (K.layers.LayerNormalization(dtype="float64"), False)):
        x = randn(5, 4, dtype=np.float64)
        w = randn(5, 4, dtype=np.float64)
        layer(x)
        layer.gamma.assign(randn(4, dtype=np.float64))

        def loss_at(inputs):
            return float(tf.reduce_sum(layer(inputs, training=training) * w))

        xt = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(xt)
            loss = tf.reduce_sum(layer(xt, training=training) * w)
        dx, dgamma = (g.numpy() for g in tape.gradient(loss, [xt, layer.gamma]))
        eps = 1e-6
        for index in [(0, 0), (2, 1), (4, 3)]:
            up, down = x.copy(), x.copy()
            up[index] += eps
            down[index] -= eps
            np.testing.assert_allclose(dx[index], (loss_at(up) - loss_at(down)) / (2 * eps), rtol=1e-5, atol=1e-8)
        g0 = layer.gamma.numpy()
        for k in range(4):
            g = g0.copy()
            g[k] += eps
            layer.gamma.assign(g)
            up = loss_at(x)
            g[k] -= 2 * eps
            layer.gamma.assign(g)
            down = loss_at(x)
            layer.gamma.assign(g0)
            np.testing.assert_allclose(dgamma[k], (up - down) / (2 * eps), rtol=1e-5, atol=1e-8)


def test_layer_normalization_matches_numpy():
    ln = K.layers.LayerNormalization(epsilon=1e-5)
    x = randn(3, 2, 6)
    np.testing.assert_allclose(ln(x).numpy(), np_normalize(x, -1, 1e-5)[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ln(x, training=True).numpy(), ln(x).numpy())
    inner = K.layers.LayerNormalization(axis=1)
    np.testing.assert_allclose(inner(x).numpy(), np_normalize(x, 1, 1e-3)[0], rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="only one axis"):
        K.layers.LayerNormalization(axis=[1, 2])


def test_a_model_with_batch_normalization_fits_saves_and_loads(tmp_path):
    tf.random.set_seed(3)
    model = K.Sequential([K.layers.Dense(8, input_shape=(4,)), K.layers.BatchNormalization(),
                          K.layers.ReLU(), K.layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = randn(64, 4)
    y = x.sum(axis=1, keepdims=True)
    bn = model.layers[1]
    model.fit(x, y, epochs=2, batch_size=16, verbose=0)
    assert not np.allclose(bn.moving_mean.numpy(), 0)      # moved by the traced train step
    serve = tf.function(lambda inputs: model(inputs), input_signature=[tf.TensorSpec([None, 4])])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_allclose(loaded.signatures["serving_default"](inputs=x)["output_0"].numpy(),
                               model(x).numpy(), rtol=1e-6)
    assert len(loaded.variables) == 8


def test_embedding_picks_rows_and_its_gradient_reaches_the_table():
    emb = K.layers.Embedding(50, 3)
    ids = np.array([[4, 0], [4, 49]])
    out = emb(ids).numpy()
    table = emb.embeddings.numpy()
    assert table.shape == (50, 3) and np.all(np.abs(table) <= 0.05)
    np.testing.assert_array_equal(out, table[ids])
    np.testing.assert_array_equal(emb(ids.astype(np.float32)).numpy(), out)
    assert emb.compute_output_shape((None, 7)).as_list() == [None, 7, 3]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(emb(ids) * np.arange(12, dtype=np.float32).reshape(2, 2, 3))
    grad = tf.convert_to_tensor(tape.gradient(loss, emb.embeddings)).numpy()
    want = np.zeros((50, 3), np.float32)
    want[4] = [0 + 6, 1 + 7, 2 + 8]
    want[0] = [3, 4, 5]
    want[49] = [9, 10, 11]
    np.testing.assert_array_equal(grad, want)
    with pytest.raises(ValueError, match="should be positive"):
        K.layers.Embedding(0, 3)


def test_global_pooling_matches_numpy():
    x = randn(2, 3, 4, 5)
    np.testing.assert_allclose(K.layers.GlobalAveragePooling2D()(x).numpy(), x.mean(axis=(1, 2)), rtol=1e-6)
    np.testing.assert_array_equal(K.layers.GlobalMaxPooling2D()(x).numpy(), x.max(axis=(1, 2)))
    kept = K.layers.GlobalAvgPool2D(keepdims=True)
    np.testing.assert_allclose(kept(x).numpy(), x.mean(axis=(1, 2), keepdims=True), rtol=1e-6)
    assert kept.compute_output_shape((None, 7, 7, 16)).as_list() == [None, 1, 1, 16]
    assert K.layers.GlobalMaxPool2D is K.layers.GlobalMaxPooling2D


@pytest.mark.parametrize("make", [lambda: K.layers.GlobalAveragePooling2D(),
                                  lambda: K.layers.GlobalAveragePooling2D(keepdims=True),
                                  lambda: K.layers.GlobalMaxPooling2D()])
def test_global_pooling_saves_and_loads_for_any_image_size(make, tmp_path):
    check_layer_round_trip(make(), randn(2, 3, 4, 2), tf.TensorSpec([None, None, None, 2]), tmp_path / "m",
                           probes=[randn(1, 5, 2, 2)])
