"""kiln.keras.layers.MultiHeadAttention against a NumPy reference of TF's equations (written here, with weights
in TF's EinsumDense layout): masks, causal masks, attention scores, output_shape, dropout, traced = eager with
unknown dims, gradients against finite differences, a Transformer block that trains, saved-model round trips,
errors."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_sampled_input_gradient, check_sampled_variable_gradients

K = tf.keras
rng = np.random.default_rng(23)


def randn(*shape, scale=1.0):
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def reference(weights, query, value, key=None, mask=None, causal=False, key_dim=None):
    """TF's MultiHeadAttention in float64: einsum projections, scaled scores, (1 - mask) * -1e9, softmax."""
    wq, bq, wk, bk, wv, bv, wo, bo = [w.astype(np.float64) for w in weights]
    query, value = query.astype(np.float64), value.astype(np.float64)
    key = value if key is None else key.astype(np.float64)
    q = np.einsum("abc,cde->abde", query, wq) + bq
    k = np.einsum("abc,cde->abde", key, wk) + bk
    v = np.einsum("abc,cde->abde", value, wv) + bv
    q = q / np.sqrt(key_dim or wq.shape[-1])
    scores = np.einsum("aecd,abcd->acbe", k, q)               # [batch, heads, T, S]
    keep = np.ones((query.shape[0], query.shape[1], value.shape[1]), bool)
    if mask is not None:
        keep &= mask.astype(bool)
    if causal:
        keep &= np.tril(np.ones((query.shape[1], value.shape[1]), bool))[None]
    scores = scores + (1.0 - keep[:, None].astype(np.float64)) * -1e9
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    scores /= scores.sum(-1, keepdims=True)
    attended = np.einsum("acbe,aecd->abcd", scores, v)
    return np.einsum("abcd,cde->abe", attended, wo) + bo, scores


def random_weights(layer):
    for w in layer.weights:
        w.assign(randn(*w.shape.as_list(), scale=0.5))
    return [w.numpy() for w in layer.weights]


def test_weights_have_tf_names_and_einsum_dense_shapes():
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4, output_shape=6, name="mha")
    layer(randn(2, 5, 7), randn(2, 4, 8), key=randn(2, 4, 9))
    assert [w.name for w in layer.weights] == [
        "mha/query/kernel:0", "mha/query/bias:0", "mha/key/kernel:0", "mha/key/bias:0", "mha/value/kernel:0",
        "mha/value/bias:0", "mha/attention_output/kernel:0", "mha/attention_output/bias:0"]
    assert [tuple(w.shape.as_list()) for w in layer.weights] == [
        (7, 2, 3), (2, 3), (9, 2, 3), (2, 3), (8, 2, 4), (2, 4), (2, 4, 6), (6,)]
    assert layer.count_params() == 7 * 6 + 6 + 9 * 6 + 6 + 8 * 8 + 8 + 8 * 6 + 6
    assert layer.compute_output_shape((None, 11, 7)).as_list() == [None, 11, 6]
    config = layer.get_config()
    assert {k: config[k] for k in ("name", "num_heads", "key_dim", "value_dim", "dropout", "output_shape")} == {
        "name": "mha", "num_heads": 2, "key_dim": 3, "value_dim": 4, "dropout": 0.0, "output_shape": 6}
    no_bias = K.layers.MultiHeadAttention(1, 2, use_bias=False)
    no_bias(randn(1, 2, 3), randn(1, 2, 3))
    assert len(no_bias.weights) == 4


@pytest.mark.parametrize("masked", [False, True])
def test_values_and_scores_match_the_reference(masked):
    layer = K.layers.MultiHeadAttention(num_heads=3, key_dim=4, value_dim=2, output_shape=5)
    q, v, k = randn(2, 3, 6), randn(2, 4, 7), randn(2, 4, 8)
    layer(q, v, key=k)
    weights = random_weights(layer)
    mask = rng.uniform(size=(2, 3, 4)) > 0.3 if masked else None
    out, scores = layer(q, v, key=k, attention_mask=mask, return_attention_scores=True)
    want_out, want_scores = reference(weights, q, v, k, mask=mask)
    assert scores.shape == (2, 3, 3, 4) and out.shape == (2, 3, 5)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(scores.numpy().sum(-1), 1.0, rtol=1e-6)
    if masked:
        hidden = np.broadcast_to(~mask[:, None], scores.shape)
        assert np.all(scores.numpy()[hidden] == 0)


def test_causal_mask_and_its_combination_with_the_mask():
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3)
    x = randn(2, 5, 4)
    layer(x, x)
    weights = random_weights(layer)
    mask = np.ones((2, 5, 5), bool)
    mask[0, 4, 1] = mask[1, 2, 0] = False
    for given in (None, mask):
        out, scores = layer(x, x, attention_mask=given, use_causal_mask=True, return_attention_scores=True)
        want_out, want_scores = reference(weights, x, x, mask=given, causal=True)
        np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-5, atol=1e-6)
        assert np.all(np.triu(scores.numpy(), 1) == 0)
    # A later position's input does not reach earlier outputs.
    moved = x.copy()
    moved[:, -1] += 3
    np.testing.assert_allclose(layer(moved, moved, use_causal_mask=True).numpy()[:, :-1],
                               layer(x, x, use_causal_mask=True).numpy()[:, :-1], rtol=1e-6, atol=1e-6)


def test_dropout_applies_to_the_weights_while_training_only():
    tf.random.set_seed(1)
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, dropout=0.5)
    x = randn(2, 4, 5)
    out, scores = layer(x, x, return_attention_scores=True)
    np.testing.assert_array_equal(layer(x, x).numpy(), out.numpy())
    trained, trained_scores = layer(x, x, training=True, return_attention_scores=True)
    np.testing.assert_array_equal(trained_scores.numpy(), scores.numpy())   # scores are before dropout
    assert np.abs(trained.numpy() - out.numpy()).max() > 1e-3


def test_traced_equals_eager_with_unknown_batch_and_sequence_dims():
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    f = tf.function(lambda q, v: layer(q, v, use_causal_mask=True),
                    input_signature=[tf.TensorSpec([None, None, 6]), tf.TensorSpec([None, None, 3])])
    for t, s in ((1, 2), (4, 4), (7, 3)):
        q, v = randn(3, t, 6), randn(3, s, 3)
        np.testing.assert_allclose(f(q, v).numpy(), layer(q, v, use_causal_mask=True).numpy(), rtol=1e-6, atol=1e-6)
    assert f.experimental_get_tracing_count() == 1


def check_gradients(layer, q, v, mask, w):
    """Gradients of sum(layer(q, v, attention_mask=mask) * w) for the query, value and weights: traced = eager,
    and against central differences (float64)."""
    def loss(qi, vi):
        return tf.reduce_sum(layer(qi, vi, attention_mask=mask) * w)

    def grads(qi, vi):
        with tf.GradientTape() as tape:
            tape.watch(qi)
            tape.watch(vi)
            y = loss(qi, vi)
        return tape.gradient(y, [qi, vi] + layer.trainable_variables)

    eager = grads(tf.constant(q), tf.constant(v))
    traced = tf.function(grads, autograph=False)(tf.constant(q), tf.constant(v))
    for e, t in zip(eager, traced):
        np.testing.assert_allclose(t.numpy(), e.numpy(), rtol=1e-10, atol=1e-12)
    check_sampled_variable_gradients(layer.trainable_variables, eager[2:], lambda: float(loss(q, v).numpy()), 3)
    check_sampled_input_gradient(eager[0], lambda qi: float(loss(qi, v).numpy()), q, 3)
    check_sampled_input_gradient(eager[1], lambda vi: float(loss(q, vi).numpy()), v, 3)


def test_gradients_match_finite_differences():
    K.backend.set_floatx("float64")
    try:
        layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3)
        q, v = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
        mask = rng.uniform(size=(2, 3, 4)) > 0.25
        w = rng.standard_normal((2, 3, 4))
        layer(q, v)

        check_gradients(layer, q, v, mask, w)
    finally:
        K.backend.set_floatx("float32")


class TransformerBlock(K.Model):
    """A post-norm Transformer encoder block and a classifier on its mean over time."""

    def __init__(self):
        super().__init__()
        self.attention = K.layers.MultiHeadAttention(num_heads=2, key_dim=4)
        self.norm1 = K.layers.LayerNormalization()
        self.hidden = K.layers.Dense(16, activation="relu")
        self.back = K.layers.Dense(4)
        self.norm2 = K.layers.LayerNormalization()
        self.classify = K.layers.Dense(2)

    def call(self, x, training=None):
        h = self.norm1(x + self.attention(x, x, training=training))
        h = self.norm2(h + self.back(self.hidden(h)))
        return self.classify(tf.reduce_mean(h, axis=1))


def test_a_transformer_block_trains_in_a_traced_step_saves_and_loads(tmp_path):
    tf.random.set_seed(5)
    x = randn(64, 6, 4)
    y = (x[:, :, 0].sum(1) > x[:, :, 1].sum(1)).astype(np.int32)
    model = TransformerBlock()
    optimizer = K.optimizers.Adam(0.01)
    loss_fn = K.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(inputs, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(inputs, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    losses = [float(train_step(x, y).numpy()) for _ in range(40)]
    assert train_step.experimental_get_tracing_count() == 1
    assert losses[-1] < 0.5 * losses[0], losses
    serve = tf.function(lambda inputs: model(inputs), input_signature=[tf.TensorSpec([None, None, 4])])
    tf.saved_model.save(model, str(tmp_path / "m"), signatures=serve)
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    longer = randn(3, 9, 4)
    np.testing.assert_allclose(loaded.signatures["serving_default"](inputs=longer)["output_0"].numpy(),
                               model(longer).numpy(), rtol=1e-6, atol=1e-6)
    assert len(loaded.variables) == 8 + 5 * 2   # attention, then two LayerNormalization and three Dense


def test_bad_arguments_and_inputs_are_named():
    with pytest.raises(ValueError, match="`num_heads` must be a positive integer"):
        K.layers.MultiHeadAttention(0, 4)
    with pytest.raises(ValueError, match="Expected a float value in \\[0, 1\\)"):
        K.layers.MultiHeadAttention(2, 4, dropout=1.0)
    with pytest.raises(ValueError, match=r"attention_axes=\(2, 3\) must be distinct axes of the rank-3 inputs"):
        K.layers.MultiHeadAttention(2, 4, attention_axes=(2, 3))(randn(1, 2, 3), randn(1, 2, 3))
    with pytest.raises(ValueError, match="`attention_axes` must be an int or a non-empty tuple of ints"):
        K.layers.MultiHeadAttention(2, 4, attention_axes="1")
    with pytest.raises(ValueError, match="`output_shape` must be a positive integer or a tuple of them"):
        K.layers.MultiHeadAttention(2, 4, output_shape=(2, 0))
    with pytest.raises(ValueError, match="the value must have the query's rank 4"):
        K.layers.MultiHeadAttention(2, 4)(randn(1, 2, 3, 4), randn(1, 2, 4))
    with pytest.raises(NotImplementedError, match="kernel_regularizer"):
        K.layers.MultiHeadAttention(2, 4, kernel_regularizer="l2")
    layer = K.layers.MultiHeadAttention(2, 4, name="mha")
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'value'"):
        layer(randn(2, 3, 5))
    with pytest.raises(ValueError, match="the query must have rank 3 or more"):
        layer(randn(2, 3), randn(2, 3, 5))
    layer(randn(2, 3, 5), randn(2, 4, 6))
    with pytest.raises(ValueError, match="the value's last dim is 7 but the layer was built for 6"):
        layer(randn(2, 3, 5), randn(2, 4, 7))


def test_a_functional_model_takes_the_layer_with_its_scores():
    query, value = K.Input((None, 5)), K.Input((None, 3))
    mha = K.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    out, scores = mha(query, value, use_causal_mask=True, return_attention_scores=True)
    assert out.shape.as_list() == [None, None, 5] and scores.shape.as_list() == [None, 2, None, None]
    model = K.Model(inputs=[query, value], outputs=[K.layers.Dense(2)(out), scores])
    assert len(model.trainable_variables) == 8 + 2
    q, v = randn(3, 4, 5), randn(3, 4, 3)
    got_out, got_scores = model([q, v])
    want_out, want_scores = mha(q, v, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_allclose(got_scores.numpy(), want_scores.numpy(), rtol=1e-6)
    np.testing.assert_allclose(got_out.numpy(), model.layers[-1](want_out).numpy(), rtol=1e-6, atol=1e-6)


def test_a_transformer_block_fits_with_a_learning_rate_schedule():
    tf.random.set_seed(3)
    x = randn(64, 6, 4)
    y = (x[:, :, 0].sum(1) > x[:, :, 1].sum(1)).astype(np.int32)
    model = TransformerBlock()
    model.compile(optimizer=K.optimizers.Adam(K.optimizers.schedules.CosineDecay(0.01, 40)),
                  loss=K.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
    history = model.fit(x, y, epochs=10, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.7 * history.history["loss"][0]
    assert history.history["accuracy"][-1] > 0.8
    assert float(model.optimizer.iterations.numpy()) == 40


# ---- attention_axes and output_shape tuples: TF's einsum formulation ---------------------------------------------

def einsum_reference(weights, query, value, scores_equation, combine_equation, attended, mask=None,
                     mask_expansion=None):
    """TF's MultiHeadAttention written with its einsum equations (given here for each case) in float64; the
    softmax runs over the key's `attended` last axes together."""
    wq, bq, wk, bk, wv, bv, wo, bo = [w.astype(np.float64) for w in weights]
    query, value = query.astype(np.float64), value.astype(np.float64)
    q = np.einsum("...c,cnh->...nh", query, wq) + bq
    k = np.einsum("...c,cnh->...nh", value, wk) + bk
    v = np.einsum("...c,cnh->...nh", value, wv) + bv
    scores = np.einsum(scores_equation, k, q / np.sqrt(wq.shape[-1]))
    if mask is not None:
        keep = mask.astype(np.float64)
        while keep.ndim < scores.ndim:
            keep = np.expand_dims(keep, mask_expansion)
        scores = scores + (1.0 - keep) * -1e9
    axes = tuple(range(scores.ndim - attended, scores.ndim))
    scores = np.exp(scores - scores.max(axis=axes, keepdims=True))
    scores /= scores.sum(axis=axes, keepdims=True)
    out = np.einsum(combine_equation, scores, v)
    out = np.tensordot(out, wo, axes=([out.ndim - 2, out.ndim - 1], [0, 1])) + bo
    return out, scores


# (attention_axes, inputs' shape, TF's equations for the projected [B, ..., heads, dim] inputs, scores' shape)
AXES_CASES = [
    ((1,), (2, 4, 5), "aecd,abcd->acbe", "acbe,aecd->abcd", (2, 2, 4, 4)),
    ((1, 2), (2, 3, 4, 5), "afgde,abcde->adbcfg", "adbcfg,afgde->abcde", (2, 2, 3, 4, 3, 4)),
    ((2,), (2, 3, 4, 5), "abfde,abcde->abdcf", "abdcf,abfde->abcde", (2, 3, 2, 4, 4)),
    ((-3,), (2, 3, 4, 5), "afcde,abcde->acdbf", "acdbf,afcde->abcde", (2, 4, 2, 3, 3)),
    (None, (2, 2, 3, 2, 4), "aghief,abcdef->aebcdghi", "aebcdghi,aghief->abcdef", (2, 2, 2, 3, 2, 2, 3, 2)),
]


@pytest.mark.parametrize("axes, shape, scores_equation, combine_equation, scores_shape", AXES_CASES)
def test_attention_axes_of_rank_n_inputs_match_tf_einsum_formulation(axes, shape, scores_equation, combine_equation,
                                                                      scores_shape):
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=2, attention_axes=axes, output_shape=(2, 3))
    x = randn(*shape)
    layer(x, x)
    weights = random_weights(layer)
    assert [tuple(w.shape.as_list()) for w in layer.weights][-2:] == [(2, 2, 2, 3), (2, 3)]
    attended = len(shape) - 2 if axes is None else len(axes)
    out, scores = layer(x, x, return_attention_scores=True)
    want_out, want_scores = einsum_reference(weights, x, x, scores_equation, combine_equation, attended)
    assert scores.shape == scores_shape and out.shape == shape[:-1] + (2, 3)
    assert layer.compute_output_shape((None,) + shape[1:]).as_list() == [None, *shape[1:-1], 2, 3]
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-5, atol=1e-6)
    # Traced for any batch size (the einsums merge the batch, unknown, with known dims).
    traced = tf.function(lambda v: layer(v, v), input_signature=[tf.TensorSpec((None,) + shape[1:])])
    np.testing.assert_array_equal(traced(x).numpy(), out.numpy())


def test_a_mask_over_two_attention_axes_and_gradients():
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, attention_axes=(1, 2))
    x = randn(2, 3, 2, 4)
    layer(x, x)
    weights = random_weights(layer)
    mask = rng.uniform(size=(2, 3, 2, 3, 2)) > 0.3  # [batch, query H, W, key H, W]
    out, scores = layer(x, x, attention_mask=mask, return_attention_scores=True)
    want_out, want_scores = einsum_reference(weights, x, x, "afgde,abcde->adbcfg", "adbcfg,afgde->abcde", 2,
                                             mask=mask, mask_expansion=-5)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores.numpy(), want_scores, rtol=1e-5, atol=1e-6)
    assert np.all(scores.numpy()[np.broadcast_to(~mask[:, None], scores.shape)] == 0)


def test_the_einsum_form_over_a_sequence_takes_causal_and_sequence_masks():
    layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, output_shape=(2, 3))
    x = randn(2, 4, 5)
    layer(x, x)
    weights = random_weights(layer)
    query_mask = np.array([[True, True, True, False], [True, True, True, True]])
    out, scores = layer(x, x, use_causal_mask=True, query_mask=query_mask, return_attention_scores=True)
    keep = np.tril(np.ones((4, 4), bool))[None] & query_mask[:, :, None]
    want_out, want_scores = einsum_reference(weights, x, x, "aecd,abcd->acbe", "acbe,aecd->abcd", 1, mask=keep,
                                             mask_expansion=-3)
    # The masked query (batch 0, position 3) has every key masked: in float32 its scores are all -1e9, uniform.
    np.testing.assert_array_equal(scores.numpy()[0, :, 3], 0.25)
    np.testing.assert_allclose(out.numpy()[1], want_out[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out.numpy()[0, :3], want_out[0, :3], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(scores.numpy()[:, :, :3], want_scores[:, :, :3], rtol=1e-5, atol=1e-6)


def test_gradients_over_two_attention_axes_match_finite_differences_eager_and_traced():
    K.backend.set_floatx("float64")
    try:
        layer = K.layers.MultiHeadAttention(num_heads=2, key_dim=3, attention_axes=(1, 2), output_shape=(2, 2))
        q, v = rng.standard_normal((2, 3, 2, 4)), rng.standard_normal((2, 3, 2, 5))
        mask = rng.uniform(size=(2, 3, 2, 3, 2)) > 0.25
        w = rng.standard_normal((2, 3, 2, 2, 2))
        layer(q, v)

        check_gradients(layer, q, v, mask, w)
    finally:
        K.backend.set_floatx("float32")


def test_rank_n_attention_refuses_sequence_masks_and_causal_masks():
    layer = K.layers.MultiHeadAttention(num_heads=1, key_dim=2, attention_axes=(1, 2))
    x = randn(1, 2, 2, 3)
    layer(x, x)
    with pytest.raises(NotImplementedError, match="use_causal_mask need \\[batch, sequence, features\\] inputs"):
        layer(x, x, use_causal_mask=True)
    with pytest.raises(ValueError, match="attention_mask must be of rank 2 to 6"):
        layer(x, x, attention_mask=np.ones((1, 1, 2, 2, 2, 2, 1), bool))
