"""Identity, UnitNormalization, ThresholdedReLU, PReLU, GroupNormalization, RandomBrightness, RandomCrop, the 3-D
global poolings, SpatialDropout3D and AlphaDropout against NumPy; and tf.keras.layers' 2.15 catalogue."""
import numpy as np
import pytest

import kiln as tf

L = tf.keras.layers
RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 3, 4, 6)).astype(np.float32)

KERAS_2_15_LAYERS = """Activation ActivityRegularization Add AdditiveAttention AlphaDropout Attention Average
AveragePooling1D AveragePooling2D AveragePooling3D AvgPool1D AvgPool2D AvgPool3D BatchNormalization Bidirectional
CategoryEncoding CenterCrop Concatenate Conv1D Conv1DTranspose Conv2D Conv2DTranspose Conv3D Conv3DTranspose
ConvLSTM1D ConvLSTM2D ConvLSTM3D Convolution1D Convolution1DTranspose Convolution2D Convolution2DTranspose
Convolution3D Convolution3DTranspose Cropping1D Cropping2D Cropping3D Dense DenseFeatures DepthwiseConv1D
DepthwiseConv2D Discretization Dot Dropout ELU EinsumDense Embedding Flatten GRU GRUCell GaussianDropout
GaussianNoise GlobalAveragePooling1D GlobalAveragePooling2D GlobalAveragePooling3D GlobalAvgPool1D GlobalAvgPool2D
GlobalAvgPool3D GlobalMaxPool1D GlobalMaxPool2D GlobalMaxPool3D GlobalMaxPooling1D GlobalMaxPooling2D
GlobalMaxPooling3D GroupNormalization HashedCrossing Hashing Identity Input InputLayer InputSpec IntegerLookup LSTM
LSTMCell Lambda Layer LayerNormalization LeakyReLU LocallyConnected1D LocallyConnected2D Masking MaxPool1D MaxPool2D
MaxPool3D MaxPooling1D MaxPooling2D MaxPooling3D Maximum Minimum MultiHeadAttention Multiply Normalization PReLU
Permute RNN RandomBrightness RandomContrast RandomCrop RandomFlip RandomHeight RandomRotation RandomTranslation
RandomWidth RandomZoom ReLU RepeatVector Rescaling Reshape Resizing SeparableConv1D SeparableConv2D
SeparableConvolution1D SeparableConvolution2D SimpleRNN SimpleRNNCell Softmax SpatialDropout1D SpatialDropout2D
SpatialDropout3D SpectralNormalization StackedRNNCells StringLookup Subtract TextVectorization ThresholdedReLU
TimeDistributed UnitNormalization UpSampling1D UpSampling2D UpSampling3D Wrapper ZeroPadding1D ZeroPadding2D
ZeroPadding3D add average concatenate deserialize dot maximum minimum multiply serialize subtract""".split()

# tf.keras.layers 2.15 names Kiln does not have yet (each is a NotImplemented-sized piece of work; listed so the
# gap is visible; the test fails when one appears, so the list stays true).
LAYERS_LEFT_OUT = ["AdditiveAttention", "Attention", "Conv3DTranspose", "Convolution3DTranspose", "ConvLSTM1D",
                   "ConvLSTM2D", "ConvLSTM3D", "DenseFeatures", "DepthwiseConv1D", "EinsumDense", "HashedCrossing",
                   "LocallyConnected1D", "LocallyConnected2D", "RandomHeight", "RandomWidth", "SpectralNormalization",
                   "StackedRNNCells"]


def test_layers_catalogue():
    missing = [n for n in KERAS_2_15_LAYERS if not hasattr(L, n) and n not in LAYERS_LEFT_OUT]
    assert missing == []
    assert [n for n in LAYERS_LEFT_OUT if hasattr(L, n)] == []


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
