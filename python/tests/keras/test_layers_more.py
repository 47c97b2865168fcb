"""Identity, UnitNormalization, ThresholdedReLU, PReLU, GroupNormalization, RandomBrightness, RandomCrop, the 3-D
global poolings, SpatialDropout3D and AlphaDropout against NumPy (tf.keras.layers' 2.15 catalogue:
test_catalogue_modules.py)."""
import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4, 6)).astype(np.float32)


def round_trip(layer):
    config = layer.get_config()
    assert type(layer).from_config(config).get_config() == config


def traced(layer, x, **kwargs):
    return tf.function(lambda t: layer(t, **kwargs))(tf.constant(x)).numpy()


def test_identity_unit_norm_thresholded_relu():
    np.testing.assert_array_equal(L.Identity()(X).numpy(), X)
    unit = L.UnitNormalization(axis=[1, 2])
    expected = X / np.sqrt((X.astype(np.float64) ** 2).sum(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(unit(X).numpy(), expected, rtol=1e-5)
    np.testing.assert_allclose(traced(unit, X), expected, rtol=1e-5)
    np.testing.assert_array_equal(L.ThresholdedReLU(theta=0.5)(X).numpy(), np.where(X > 0.5, X, 0))
    with pytest.raises(ValueError, match="should be >=0"):
        L.ThresholdedReLU(theta=-1)
    for layer in (L.Identity(), L.UnitNormalization(axis=1), L.ThresholdedReLU(0.2)):
        round_trip(layer)


def test_prelu():
    layer = L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.25), shared_axes=[1, 2])
    y = layer(X).numpy()
    assert layer.alpha.shape == (1, 1, 6)
    np.testing.assert_allclose(y, np.where(X > 0, X, 0.25 * X), rtol=1e-6)
    alpha = RNG.uniform(size=(1, 1, 6)).astype(np.float32)
    layer.alpha.assign(alpha)
    np.testing.assert_allclose(traced(layer, X), np.where(X > 0, X, alpha * X), rtol=1e-6)
    round_trip(L.PReLU(shared_axes=[1]))


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_group_normalization(groups):
    layer = L.GroupNormalization(groups=groups, epsilon=1e-3)
    y = layer(X).numpy()
    g = X.astype(np.float64).reshape(2, 3, 4, groups, 6 // groups)
    mean = g.mean(axis=(1, 2, 4), keepdims=True)
    var = g.var(axis=(1, 2, 4), keepdims=True)
    np.testing.assert_allclose(y, ((g - mean) / np.sqrt(var + 1e-3)).reshape(X.shape), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(traced(layer, X), y, rtol=1e-5, atol=1e-6)
    assert [w.name.split("/")[-1] for w in layer.weights] == ["gamma:0", "beta:0"]
    round_trip(layer)
    with pytest.raises(ValueError, match="multiple of the number of channels"):
        L.GroupNormalization(groups=4)(X)


def test_random_brightness_and_crop():
    images = RNG.uniform(0, 255, (16, 5, 6, 3)).astype(np.float32)
    out = L.RandomBrightness((0.1, 0.3))(images, training=True).numpy()
    for b in range(16):
        delta = out[b] - images[b]
        unclipped = out[b] < 255
        shift = delta[unclipped]
        assert np.allclose(shift, shift[0], atol=1e-3) and 0.1 * 255 - 1e-3 <= shift[0] <= 0.3 * 255 + 1e-3
    np.testing.assert_array_equal(L.RandomBrightness(0.5)(images, training=False).numpy(), images)
    crop = L.RandomCrop(3, 4)
    seen = set()
    for _ in range(20):
        y = crop(images, training=True).numpy()
        found = [(r, c) for r in range(3) for c in range(3) if np.array_equal(y, images[:, r:r + 3, c:c + 4])]
        assert len(found) == 1  # one window for the whole batch
        seen.add(found[0])
    assert len(seen) > 1
    np.testing.assert_allclose(crop(images, training=False).numpy(),
                               L.Resizing(3, 4, crop_to_aspect_ratio=True)(images).numpy(), rtol=1e-6)
    assert traced(crop, images, training=True).shape == (16, 3, 4, 3)
    for layer in (L.RandomBrightness(0.2, value_range=(0, 1), seed=3), L.RandomCrop(3, 4, seed=1)):
        round_trip(layer)


def test_global_pooling_3d_and_3d_dropouts():
    v = RNG.normal(size=(2, 3, 4, 5, 6)).astype(np.float32)
    np.testing.assert_allclose(L.GlobalAveragePooling3D()(v).numpy(), v.mean(axis=(1, 2, 3)), rtol=1e-5)
    np.testing.assert_allclose(L.GlobalMaxPooling3D(keepdims=True)(v).numpy(), v.max(axis=(1, 2, 3), keepdims=True))
    assert L.GlobalAvgPool3D is L.GlobalAveragePooling3D
    dropped = L.SpatialDropout3D(0.5)(np.ones((4, 2, 2, 2, 8), np.float32), training=True).numpy()
    per_map = dropped.transpose(0, 4, 1, 2, 3).reshape(4, 8, 8)
    assert all(len(set(m.tolist())) == 1 for m in per_map.reshape(32, 8))  # whole feature maps kept or dropped
    assert set(np.unique(dropped)) <= {0.0, 2.0}
    tf.random.set_seed(0)
    x = RNG.normal(size=(200, 200)).astype(np.float32)
    y = L.AlphaDropout(0.2)(x, training=True).numpy()
    assert abs(y.mean() - x.mean()) < 0.02 and abs(y.std() - x.std()) < 0.03  # mean and variance kept
    alpha_p = -1.6732632423543772 * 1.0507009873554805
    a = ((1 - 0.2) * (1 + 0.2 * alpha_p ** 2)) ** -0.5
    dropped_value = a * alpha_p - a * alpha_p * 0.2
    assert np.isclose(y, dropped_value, atol=1e-5).mean() == pytest.approx(0.2, abs=0.01)
    np.testing.assert_array_equal(L.AlphaDropout(0.2)(x, training=False).numpy(), x)
    round_trip(L.AlphaDropout(0.3, seed=2))


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention_reference(q, v, k, scores_fn, v_mask=None, q_mask=None, causal=False):
    scores = scores_fn(q.astype(np.float64), k.astype(np.float64))
    allowed = np.ones(scores.shape, bool)
    if v_mask is not None:
        allowed &= v_mask[:, None, :]
    if causal:
        allowed &= np.tril(np.ones(scores.shape[-2:], bool))[None]
    weights = _softmax(scores - 1e9 * ~allowed)
    out = weights @ v
    if q_mask is not None:
        out = out * q_mask[..., None]
    return out, weights


def test_attention_layers_match_reference():
    q = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    v = RNG.normal(size=(2, 5, 4)).astype(np.float32)
    k = RNG.normal(size=(2, 5, 4)).astype(np.float32)
    v_mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    q_mask = np.array([[1, 1, 0], [1, 1, 1]], bool)
    dot = L.Attention(use_scale=True)
    dot([q, v, k])  # builds the scale (1.0), then set to 1.5
    dot.scale.assign(1.5)
    out, weights = dot([q, v, k], mask=[q_mask, v_mask], return_attention_scores=True)
    ref_out, ref_w = attention_reference(q, v, k, lambda a, b: 1.5 * a @ b.transpose(0, 2, 1), v_mask, q_mask)
    np.testing.assert_allclose(out.numpy(), ref_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.numpy(), ref_w, rtol=1e-5, atol=1e-6)
    concat = L.Attention(score_mode="concat")
    got = concat([q, v], use_causal_mask=True).numpy()
    ref, _ = attention_reference(q, v, v, lambda a, b: np.tanh(a[:, :, None] + b[:, None]).sum(-1), causal=True)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    additive = L.AdditiveAttention()
    got = additive([q, v]).numpy()
    scale = additive.scale.numpy().astype(np.float64)
    ref, _ = attention_reference(q, v, v, lambda a, b: (scale * np.tanh(a[:, :, None] + b[:, None])).sum(-1))
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    traced = tf.function(lambda a, b: additive([a, b]))(tf.constant(q), tf.constant(v)).numpy()
    np.testing.assert_allclose(traced, got, rtol=1e-6, atol=1e-7)
    for layer in (L.Attention(use_scale=True, score_mode="concat", dropout=0.1), L.AdditiveAttention(False)):
        round_trip(layer)


def test_attention_in_a_functional_model_with_masks():
    # keras.io's example shape: query and value token embeddings, a shared Embedding with mask_zero.
    query_input = tf.keras.Input(shape=(None,), dtype="int32")
    value_input = tf.keras.Input(shape=(None,), dtype="int32")
    embedding = L.Embedding(input_dim=20, output_dim=8, mask_zero=True)
    query, value = embedding(query_input), embedding(value_input)
    attended = L.Attention()([query, value])
    pooled = L.Concatenate()([L.GlobalAveragePooling1D()(query), L.GlobalAveragePooling1D()(attended)])
    model = tf.keras.Model([query_input, value_input], L.Dense(1)(pooled))
    model.compile("adam", "mse")
    qx = np.array([[1, 2, 3, 0], [4, 5, 0, 0]], np.int32)
    vx = np.array([[6, 7, 0], [8, 9, 10]], np.int32)
    history = model.fit([qx, vx], np.array([[1.0], [0.0]]), epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2
    e = embedding.embeddings.numpy().astype(np.float64)
    ref, _ = attention_reference(e[qx], e[vx], e[vx], lambda a, b: a @ b.transpose(0, 2, 1), vx != 0, qx != 0)
    got = L.Attention()([embedding(qx), embedding(vx)]).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("equation,output_shape,bias_axes,input_shape,kernel_shape,bias_shape,out_shape", [
    ("ab,bc->ac", 64, "c", (3, 32), (32, 64), (64,), (3, 64)),          # Keras' docstring: a Dense
    ("abc,cd->abd", (None, 64), "d", (3, 5, 32), (32, 64), (64,), (3, 5, 64)),
    ("abc,cde->abde", (None, 4, 8), "de", (3, 5, 32), (32, 4, 8), (4, 8), (3, 5, 4, 8)),
    ("...b,bc->...c", 64, "c", (3, 7, 32), (32, 64), (64,), (3, 7, 64)),
    ("ab...,bc->ac...", (16,), None, (3, 32, 7), (32, 16), None, (3, 16, 7)),
])
def test_einsum_dense(equation, output_shape, bias_axes, input_shape, kernel_shape, bias_shape, out_shape):
    layer = L.EinsumDense(equation, output_shape=output_shape, bias_axes=bias_axes, activation="relu")
    x = RNG.normal(size=input_shape).astype(np.float32)
    y = layer(x).numpy()
    assert layer.kernel.shape == kernel_shape and (layer.bias is None if bias_shape is None else
                                                   layer.bias.shape == bias_shape)
    kernel = RNG.normal(size=kernel_shape).astype(np.float32)
    layer.kernel.assign(kernel)
    ref = np.einsum(equation, x.astype(np.float64), kernel)
    if bias_shape is not None:
        bias = RNG.normal(size=bias_shape).astype(np.float32)
        layer.bias.assign(bias)
        ref = ref + bias
    np.testing.assert_allclose(layer(x).numpy(), np.maximum(ref, 0), rtol=1e-4, atol=1e-5)
    assert y.shape == out_shape
    inp = tf.keras.Input(input_shape[1:])
    assert L.EinsumDense(equation, output_shape, bias_axes=bias_axes)(inp).shape.as_list() == [None, *out_shape[1:]]
    round_trip(layer)
    with pytest.raises(ValueError, match="Invalid einsum equation"):
        L.EinsumDense("ab,bc", 3)
