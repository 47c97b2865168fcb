"""kiln.keras.layers against NumPy references: values, lazy building, names, gradients, saved-model round trips,
input checks."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients
from saved_layer_check import check_layer_round_trip

K = tf.keras
rng = np.random.default_rng(42)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---- NumPy references -------------------------------------------------------------------------

def same_pads(length, window, stride, dilation=1):
    effective = (window - 1) * dilation + 1
    out = -(-length // stride)
    total = max((out - 1) * stride + effective - length, 0)
    return total // 2, total - total // 2


def np_conv2d(x, w, strides, padding, dilation=(1, 1)):
    n, h, wd, c = x.shape
    kh, kw, _, f = w.shape
    (sh, sw), (dh, dw) = strides, dilation
    if padding == "same":
        (pt, pb), (pl, pr) = same_pads(h, kh, sh, dh), same_pads(wd, kw, sw, dw)
        x = np.pad(x, ((0, 0), (pt, pb), (pl, pr), (0, 0)))
    eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    oh, ow = (x.shape[1] - eh) // sh + 1, (x.shape[2] - ew) // sw + 1
    out = np.zeros((n, oh, ow, f), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * sh:i * sh + eh:dh, j * sw:j * sw + ew:dw, :]
            out[:, i, j, :] = np.tensordot(patch, w, axes=([1, 2, 3], [0, 1, 2]))
    return out


def np_pool(x, size, strides, padding, reduce):
    n, h, w, c = x.shape
    (ph, pw), (sh, sw) = size, strides
    if padding == "same":
        (pt, pb), (pl, pr) = same_pads(h, ph, sh), same_pads(w, pw, sw)
        x = np.pad(x.astype(np.float64), ((0, 0), (pt, pb), (pl, pr), (0, 0)), constant_values=np.nan)
    oh, ow = (x.shape[1] - ph) // sh + 1, (x.shape[2] - pw) // sw + 1
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            out[:, i, j, :] = reduce(x[:, i * sh:i * sh + ph, j * sw:j * sw + pw, :], axis=(1, 2))
    return out


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- values -----------------------------------------------------------------------------------

@pytest.mark.parametrize("activation, ref", [(None, lambda v: v), ("relu", lambda v: np.maximum(v, 0)),
                                              ("sigmoid", lambda v: 1 / (1 + np.exp(-v))), ("tanh", np.tanh),
                                              ("softmax", np_softmax), (tf.nn.relu, lambda v: np.maximum(v, 0))])
def test_dense_matches_numpy(activation, ref):
    layer = K.layers.Dense(5, activation=activation)
    x = randn(3, 4)
    layer(x)  # builds
    layer.bias.assign(randn(5))
    y = layer(x)
    expected = ref(x @ layer.kernel.numpy() + layer.bias.numpy())
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert y.shape == (3, 5) and y.dtype == tf.float32


def test_dense_on_rank_3_inputs_multiplies_the_last_dim():
    layer = K.layers.Dense(2)
    x = randn(2, 3, 4)
    y = layer(x)
    np.testing.assert_allclose(y.numpy(), np.einsum("btk,ku->btu", x, layer.kernel.numpy()), rtol=1e-5, atol=1e-6)
    assert layer.compute_output_shape((None, 3, 4)) == tf.TensorShape([None, 3, 2])


@pytest.mark.parametrize("kwargs", [dict(kernel_size=3, padding="same"), dict(kernel_size=(5, 3), strides=2),
                                    dict(kernel_size=3, strides=(2, 1), padding="same"),
                                    dict(kernel_size=3, dilation_rate=2)])
def test_conv2d_matches_numpy(kwargs):
    layer = K.layers.Conv2D(4, activation="relu", **kwargs)
    x = randn(2, 9, 8, 3)
    layer(x)
    layer.bias.assign(randn(4))
    y = layer(x).numpy()
    expected = np.maximum(np_conv2d(x, layer.kernel.numpy(), layer.strides, layer.padding, layer.dilation_rate)
                          + layer.bias.numpy(), 0)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
    assert tuple(layer.compute_output_shape(x.shape)) == y.shape
    assert layer.kernel.shape == (*layer.kernel_size, 3, 4)


@pytest.mark.parametrize("cls, reduce", [(K.layers.MaxPool2D, np.nanmax), (K.layers.AveragePooling2D, np.nanmean)])
@pytest.mark.parametrize("kwargs", [dict(), dict(pool_size=3, strides=2), dict(pool_size=3, strides=2, padding="same"),
                                    dict(pool_size=(2, 3), strides=1)])
def test_pooling_matches_numpy(cls, reduce, kwargs):
    layer = cls(**kwargs)
    x = randn(2, 7, 6, 3)
    y = layer(x).numpy()
    np.testing.assert_allclose(y, np_pool(x, layer.pool_size, layer.strides, layer.padding, reduce), rtol=1e-5,
                               atol=1e-6)
    assert tuple(layer.compute_output_shape(x.shape)) == y.shape


def test_pooling_aliases_and_class_names():
    assert K.layers.MaxPool2D is K.layers.MaxPooling2D and K.layers.AvgPool2D is K.layers.AveragePooling2D
    assert K.layers.MaxPool2D().name == "max_pooling2d" and K.layers.AvgPool2D().name == "average_pooling2d"


def test_flatten_reshape_relu_softmax():
    x = randn(2, 3, 4)
    np.testing.assert_array_equal(K.layers.Flatten()(x).numpy(), x.reshape(2, 12))
    np.testing.assert_array_equal(K.layers.Flatten()(randn(5)).shape, (5, 1))
    np.testing.assert_array_equal(K.layers.Reshape((4, -1))(x).numpy(), x.reshape(2, 4, 3))
    assert K.layers.Reshape((6, 2)).compute_output_shape((None, 3, 4)) == tf.TensorShape([None, 6, 2])
    np.testing.assert_array_equal(K.layers.ReLU()(x).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(K.layers.ReLU(max_value=0.5, negative_slope=0.1)(x).numpy(),
                               np.minimum(np.where(x >= 0, x, 0.1 * x), 0.5), rtol=1e-6)
    np.testing.assert_allclose(K.layers.Softmax()(x).numpy(), np_softmax(x), rtol=1e-5)
    np.testing.assert_allclose(K.layers.Softmax(axis=1)(x).numpy(), np_softmax(x, 1), rtol=1e-5)
    np.testing.assert_allclose(K.layers.Activation("tanh")(x).numpy(), np.tanh(x), rtol=1e-5)


def test_leaky_relu_and_elu_match_their_closed_forms():
    x = np.array([[-2.0, -0.5, 0.0, 1.5], [3.0, -1.0, 0.25, -4.0]], np.float32)
    leaky = K.layers.LeakyReLU()
    assert leaky.alpha == pytest.approx(0.3) and leaky.name.startswith("leaky_re_lu")
    np.testing.assert_allclose(leaky(x).numpy(), np.where(x > 0, x, 0.3 * x), rtol=1e-6)
    np.testing.assert_allclose(K.layers.LeakyReLU(alpha=1.5)(x).numpy(), np.where(x > 0, x, 1.5 * x), rtol=1e-6)
    elu = K.layers.ELU()
    assert elu.alpha == 1.0 and elu.name.startswith("elu")
    np.testing.assert_allclose(elu(x).numpy(), np.where(x > 0, x, np.expm1(x)), rtol=1e-6)
    np.testing.assert_array_equal(elu(x).numpy(), tf.nn.elu(x).numpy())   # alpha 1 is tf.nn.elu itself
    np.testing.assert_allclose(K.layers.ELU(alpha=0.5)(x).numpy(), np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-6)
    assert K.layers.ELU(0.5).get_config()["alpha"] == 0.5 and K.layers.LeakyReLU(0.1).get_config()["alpha"] == 0.1
    assert K.layers.LeakyReLU().compute_output_shape((None, 4)).as_list() == [None, 4]
    with pytest.raises(ValueError, match="alpha value of a Leaky ReLU layer cannot be None"):
        K.layers.LeakyReLU(alpha=None)
    with pytest.raises(ValueError, match="Alpha of an ELU layer cannot be None"):
        K.layers.ELU(alpha=None)


def test_flatten_and_reshape_in_a_function_with_unknown_batch():
    flatten, reshape = K.layers.Flatten(), K.layers.Reshape((-1, 2))

    @tf.function(input_signature=[tf.TensorSpec([None, 3, 4])])
    def f(x):
        return flatten(x), reshape(x)

    a, b = f(randn(5, 3, 4))
    assert a.shape == (5, 12) and b.shape == (5, 6, 2)


def test_dropout_training_and_inference():
    tf.random.set_seed(3)
    layer = K.layers.Dropout(0.25)
    x = np.ones((100, 100), np.float32)
    np.testing.assert_array_equal(layer(x).numpy(), x)            # inference: the identity
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    y = layer(x, training=True).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y == 0).mean() - 0.25) < 0.02
    y2 = layer(x, training=True).numpy()
    assert (y != y2).any()                                         # a new mask per call


def test_dropout_in_a_traced_step_with_unknown_batch_draws_a_new_mask_per_call():
    layer = K.layers.Dropout(0.5)

    @tf.function(input_signature=[tf.TensorSpec([None, 64])])
    def f(x):
        return layer(x, training=True)

    x = np.ones((8, 64), np.float32)
    a, b = f(x).numpy(), f(x).numpy()
    assert a.shape == (8, 64) and (a != b).any()
    assert f.experimental_get_tracing_count() == 1


def test_training_flag_reaches_nested_layers():
    class Block(K.layers.Layer):
        def __init__(self):
            super().__init__()
            self.dropout = K.layers.Dropout(0.5)

        def call(self, x):            # no `training` argument: nested layers still see the outer one
            return self.dropout(x)

    block = Block()
    x = np.ones((50, 50), np.float32)
    assert (block(x).numpy() == 1).all()
    assert (block(x, training=True).numpy() == 0).any()


# ---- building, weights, names -----------------------------------------------------------------

def test_layers_build_lazily_on_first_call_with_keras_names():
    d = K.layers.Dense(3)
    assert not d.built and d.weights == []
    d(np.zeros((2, 7), np.float32))
    assert d.built
    assert [v.name for v in d.weights] == ["dense/kernel:0", "dense/bias:0"]
    assert d.kernel.shape == (7, 3) and d.bias.shape == (3,)
    np.testing.assert_array_equal(d.bias.numpy(), 0)
    assert d.count_params() == 24
    assert K.layers.Dense(1).name == "dense_1"
    assert K.layers.Conv2D(1, 1).name == "conv2d" and K.layers.ReLU().name == "re_lu"
    assert isinstance(d, tf.Module)
    assert len(d.trainable_variables) == 2 and d.non_trainable_variables == []


def test_glorot_uniform_limits_and_seeds():
    layer = K.layers.Dense(300, kernel_initializer=K.initializers.GlorotUniform(seed=5))
    layer.build((None, 200))
    k = layer.kernel.numpy()
    limit = np.sqrt(6 / 500)
    assert k.min() >= -limit and k.max() <= limit and k.std() > limit / 2
    again = K.layers.Dense(300, kernel_initializer=K.initializers.GlorotUniform(seed=5))
    again.build((None, 200))
    np.testing.assert_array_equal(again.kernel.numpy(), k)    # same seed, same values
    other = K.layers.Dense(300, kernel_initializer="ones", use_bias=False)
    other.build((None, 2))
    np.testing.assert_array_equal(other.kernel.numpy(), 1)
    assert other.bias is None and len(other.weights) == 1


def test_a_layer_first_called_inside_a_function_gets_its_weights_at_once():
    layer = K.layers.Dense(2)

    @tf.function
    def f(x):
        return layer(x)

    cf = f.get_concrete_function(tf.TensorSpec([None, 3]))   # traced, never run
    assert layer.built and not np.isnan(layer.kernel.numpy()).any()
    np.testing.assert_allclose(cf(np.ones((1, 3), np.float32)).numpy(), layer(np.ones((1, 3), np.float32)).numpy())


def test_float_inputs_are_cast_to_the_layer_dtype():
    layer = K.layers.Dense(2)
    y = layer(np.ones((1, 3)))             # float64 NumPy in: float32 out
    assert y.dtype == tf.float32
    d64 = K.layers.Dense(2, dtype="float64")
    assert d64(np.ones((1, 3), np.float32)).dtype == tf.float64 and d64.kernel.dtype == tf.float64


def test_custom_layer_with_add_weight():
    class Scale(K.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", shape=[input_shape[-1]], initializer="ones")

        def call(self, x):
            return x * self.w

    s = Scale(name="scale")
    x = randn(2, 3)
    np.testing.assert_allclose(s(x).numpy(), x)
    assert s.weights[0].name == "scale/w:0"
    assert s.compute_output_shape((None, 3)) == tf.TensorShape([None, 3])   # found by tracing call


# ---- gradients --------------------------------------------------------------------------------

def test_dense_gradients_match_the_analytic_ones():
    layer = K.layers.Dense(3, dtype="float64")
    x = randn(4, 5, dtype=np.float64)
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_sum(y * y)
    dk, db = tape.gradient(loss, [layer.kernel, layer.bias])
    g = 2 * (x @ layer.kernel.numpy() + layer.bias.numpy())
    np.testing.assert_allclose(dk.numpy(), x.T @ g, rtol=1e-10)
    np.testing.assert_allclose(db.numpy(), g.sum(0), rtol=1e-10)


def test_conv2d_gradients_match_finite_differences():
    layer = K.layers.Conv2D(2, 3, padding="same", activation="tanh", dtype="float64")
    x = randn(1, 5, 5, 2, dtype=np.float64)
    layer(x)

    def loss_value():
        return float(tf.reduce_sum(layer(x) ** 2))

    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(x) ** 2)
    dk = tape.gradient(loss, layer.kernel).numpy()
    k0 = layer.kernel.numpy()
    eps = 1e-6
    for index in [(0, 0, 0, 0), (1, 2, 1, 1), (2, 1, 0, 1)]:
        k = k0.copy()
        k[index] += eps
        layer.kernel.assign(k)
        up = loss_value()
        k[index] -= 2 * eps
        layer.kernel.assign(k)
        down = loss_value()
        layer.kernel.assign(k0)
        np.testing.assert_allclose(dk[index], (up - down) / (2 * eps), rtol=1e-5)


# The weightless layers' gradients (float64 layers) against central differences, and traced = eager.
# No input lies within the step of a kink.
@pytest.mark.parametrize("make, shape", [
    (lambda: K.layers.ReLU(dtype="float64"), (3, 4)),
    (lambda: K.layers.ReLU(max_value=0.6, negative_slope=0.2, dtype="float64"), (3, 4)),
    (lambda: K.layers.Softmax(dtype="float64"), (3, 4)),
    (lambda: K.layers.Softmax(axis=1, dtype="float64"), (2, 3, 2)),
    (lambda: K.layers.Activation("tanh", dtype="float64"), (3, 4)),
    (lambda: K.layers.Activation("gelu", dtype="float64"), (3, 4)),
    (lambda: K.layers.LeakyReLU(dtype="float64"), (3, 4)),
    (lambda: K.layers.ELU(dtype="float64"), (3, 4)),
    (lambda: K.layers.ELU(alpha=0.5, dtype="float64"), (3, 4)),
    (lambda: K.layers.GlobalAveragePooling2D(dtype="float64"), (2, 3, 2, 3)),
    (lambda: K.layers.GlobalAveragePooling2D(keepdims=True, dtype="float64"), (1, 2, 4, 2)),
])
def test_weightless_layer_gradients_match_finite_differences(make, shape):
    layer = make()
    n = int(np.prod(shape))
    x = tf.constant(1.6 * np.cos(1.3 * np.arange(n)).reshape(shape))
    out_shape = layer.compute_output_shape(shape).as_list()
    w = tf.constant(np.sin(0.9 * np.arange(int(np.prod(out_shape))) + 0.2).reshape(out_shape))

    def loss(inputs):
        return tf.reduce_sum(layer(inputs) * w)

    check_gradients(loss, [x], rtol=1e-6, atol=1e-8)

    def grad(inputs):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            value = loss(inputs)
        return tape.gradient(value, inputs)

    np.testing.assert_allclose(tf.function(grad)(x).numpy(), grad(x).numpy(), rtol=1e-12, atol=1e-14)


def test_gradient_through_pooling_and_flatten_to_the_input():
    model = K.Sequential([K.layers.MaxPool2D(2), K.layers.Flatten()])
    x = tf.constant(np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(model(x))
    g = tape.gradient(y, x).numpy().reshape(4, 4)
    expected = np.zeros((4, 4))
    expected[1, 1] = expected[1, 3] = expected[3, 1] = expected[3, 3] = 1
    np.testing.assert_array_equal(g, expected)


# ---- saved-model round trips -------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: K.layers.ReLU(), lambda: K.layers.Softmax(), lambda: K.layers.Activation("gelu"),
    lambda: K.layers.LeakyReLU(0.2), lambda: K.layers.ELU(), lambda: K.layers.ELU(alpha=0.5)])
def test_an_activation_layer_saves_and_loads(make, tmp_path):
    x = np.array([[-2.0, -0.5, 0.0, 1.5], [3.0, -1.0, 0.25, -4.0]], np.float32)
    check_layer_round_trip(make(), x, tf.TensorSpec([None, 4]), tmp_path / "m", probes=[x[:1] * 0.5])


# ---- bad input ---------------------------------------------------------------------------------

def test_wrong_input_rank_names_the_layer_and_the_shapes():
    conv = K.layers.Conv2D(2, 3)
    with pytest.raises(ValueError, match=r'Input 0 of layer "conv2d" is incompatible with the layer: expected '
                                         r"min_ndim=4, found ndim=3. Full shape received: \(2, 5, 5\)"):
        conv(np.zeros((2, 5, 5), np.float32))
    assert not conv.built
    conv(np.zeros((2, 5, 5, 1), np.float32))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=5"):
        conv(np.zeros((1, 2, 5, 5, 1), np.float32))
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 1, but received input with "
                                         r"shape \(2, 5, 5, 3\)"):
        conv(np.zeros((2, 5, 5, 3), np.float32))
    dense = K.layers.Dense(2)
    with pytest.raises(ValueError, match=r"expected min_ndim=2, found ndim=1"):
        dense(np.zeros(3, np.float32))
    dense(np.zeros((1, 3), np.float32))
    with pytest.raises(ValueError, match=r'layer "dense" .*expected axis -1 of input shape to have value 3'):
        dense(np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError, match=r"expected ndim=4, found ndim=2"):
        K.layers.MaxPool2D()(np.zeros((2, 2), np.float32))


def test_bad_arguments():
    with pytest.raises(ValueError, match="units"):
        K.layers.Dense(0)
    with pytest.raises(ValueError, match="Unknown activation function: 'relux'"):
        K.layers.Dense(2, activation="relux")
    with pytest.raises(ValueError, match="padding"):
        K.layers.Conv2D(2, 3, padding="full")
    with pytest.raises(ValueError, match="channels_first"):
        K.layers.Conv2D(2, 3, data_format="channels_first")
    with pytest.raises(ValueError, match="rate"):
        K.layers.Dropout(1.5)
    with pytest.raises(TypeError, match="Keyword argument not understood: 'unit'"):
        K.layers.Dense(2, unit=3)
    with pytest.raises(ValueError, match="Unknown initializer: 'glorot'"):
        K.layers.Dense(2, kernel_initializer="glorot")
    with pytest.raises(ValueError, match="total size of the new array must be unchanged"):
        K.layers.Reshape((5,))(np.zeros((2, 3, 4), np.float32))
