"""keras.backend's functions on tensors (Keras 2.15, the `K.` of custom losses, layers and metrics written for
Keras 2): thin wrappers over kiln's ops with Keras' arguments, defaults and conventions (axis=-1 defaults,
Keras' clipping in sqrt and the cross-entropies, data_format for the convolutions, ...). backend.py re-exports
them."""
import contextlib
import collections
import warnings

import numpy as np

import kiln as _tf

from . import activations as _activations


def _floatx():
    from .backend import floatx
    return floatx()


def _epsilon():
    from .backend import epsilon
    return epsilon()


def _t(x):
    from .backend import _tensor
    return _tensor(x)


def _ndim(x):
    return _t(x).shape.rank


def _axes(axis):
    return None if axis is None else ([axis] if isinstance(axis, int) else list(axis))


# ---- elementwise ------------------------------------------------------------------------------------------------

def abs(x):  # noqa: A001 - Keras' names shadow builtins
    return _tf.abs(x)


def exp(x):
    return _tf.exp(x)


def log(x):
    return _tf.math.log(x)


def round(x):  # noqa: A001
    """Halves to even, as tf.round."""
    return _tf.round(x)


def sign(x):
    return _tf.sign(x)


def sqrt(x):
    """The square root of x clipped to [0, inf) (Keras' guard against tiny negative values)."""
    x = _t(x)
    return _tf.sqrt(_tf.clip_by_value(x, _tf.constant(0.0, x.dtype), _tf.constant(np.inf, x.dtype)))


def square(x):
    return _tf.square(x)


def pow(x, a):  # noqa: A001
    return _tf.pow(x, a)


def cos(x):
    return _tf.cos(x)


def sin(x):
    return _tf.sin(x)


def clip(x, min_value, max_value):
    """x clipped to [min_value, max_value]; None is unbounded; a max below the min is the min."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)) and max_value < min_value:
        max_value = min_value
    min_value = -np.inf if min_value is None else min_value
    max_value = np.inf if max_value is None else max_value
    x = _t(x)
    return _tf.clip_by_value(x, _tf.cast(min_value, x.dtype), _tf.cast(max_value, x.dtype))


def equal(x, y):
    return _tf.equal(x, y)


def not_equal(x, y):
    return _tf.not_equal(x, y)


def greater(x, y):
    return _tf.greater(x, y)


def greater_equal(x, y):
    return _tf.greater_equal(x, y)


def less(x, y):
    return _tf.less(x, y)


def less_equal(x, y):
    return _tf.less_equal(x, y)


def maximum(x, y):
    return _tf.maximum(x, y)


def minimum(x, y):
    return _tf.minimum(x, y)


def zeros_like(x, dtype=None, name=None):
    return _tf.zeros_like(x, dtype=dtype)


def ones_like(x, dtype=None, name=None):
    return _tf.ones_like(x, dtype=dtype)


def gradients(loss, variables):
    """K.gradients: tf.gradients of loss with respect to variables (inside a tf.function; eagerly it
    raises TF's RuntimeError, as Keras' does)."""
    return _tf.gradients(loss, variables)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [_tf.stop_gradient(v) for v in variables]
    return _tf.stop_gradient(variables)


# ---- activations ------------------------------------------------------------------------------------------------

def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    return _activations.relu(x, alpha=alpha, max_value=max_value, threshold=threshold)


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    res = _tf.nn.elu(x)
    return res if alpha == 1 else _tf.where(_tf.greater(x, 0), res, alpha * res)


def softmax(x, axis=-1):
    return _tf.nn.softmax(x, axis=axis)


def softplus(x):
    return _tf.math.softplus(x)


def softsign(x):
    return _tf.math.softsign(x)


def sigmoid(x):
    return _tf.sigmoid(x)


def hard_sigmoid(x):
    return _activations.hard_sigmoid(x)


def tanh(x):
    return _tf.tanh(x)


# ---- reductions and scans ---------------------------------------------------------------------------------------

def all(x, axis=None, keepdims=False):  # noqa: A001
    return _tf.reduce_all(_tf.cast(x, _tf.bool), axis=_axes(axis), keepdims=keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _tf.reduce_any(_tf.cast(x, _tf.bool), axis=_axes(axis), keepdims=keepdims)


def prod(x, axis=None, keepdims=False):
    return _tf.reduce_prod(x, axis=_axes(axis), keepdims=keepdims)


def argmax(x, axis=-1):
    return _tf.argmax(x, axis)


def argmin(x, axis=-1):
    return _tf.argmin(x, axis)


def cumsum(x, axis=0):
    return _tf.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    return _tf.math.cumprod(x, axis=axis)


# ---- shapes -------------------------------------------------------------------------------------------------------

def arange(start, stop=None, step=1, dtype="int32"):
    """tf.range in `dtype`; arange(n) for a negative n is empty (start 0)."""
    if stop is None and start < 0:
        start = 0
    result = _tf.range(start, stop, step) if stop is not None else _tf.range(start, delta=step)
    return _tf.cast(result, dtype)


def concatenate(tensors, axis=-1):
    if axis < 0:
        rank = _ndim(tensors[0])
        axis = axis % rank if rank else 0
    return _tf.concat([_t(t) for t in tensors], axis)


def reshape(x, shape):
    return _tf.reshape(x, shape)


def permute_dimensions(x, pattern):
    return _tf.transpose(x, perm=list(pattern))


def transpose(x):
    return _tf.transpose(x)


def expand_dims(x, axis=-1):
    return _tf.expand_dims(x, axis)


def squeeze(x, axis):
    return _tf.squeeze(x, [axis])


def flatten(x):
    return _tf.reshape(x, [-1])


def batch_flatten(x):
    """[batch, ...] -> [batch, product of the other dims]."""
    x = _t(x)
    rest = x.shape.as_list()[1:]
    if _all_known(rest):
        return _tf.reshape(x, [-1, int(np.prod(rest))])
    return _tf.reshape(x, _tf.stack([-1, _tf.reduce_prod(_tf.shape(x)[1:])]))


def _all_known(dims):
    return not [d for d in dims if d is None]


def stack(x, axis=0):
    return _tf.stack(x, axis=axis)


def tile(x, n):
    return _tf.tile(x, [n] if isinstance(n, int) else n)


def repeat(x, n):
    """[batch, dim] -> [batch, n, dim]."""
    x = _t(x)
    if x.shape.rank != 2:
        raise ValueError(f"Input tensor must be 2D. Received: x.shape={x.shape}")
    return _tf.tile(_tf.expand_dims(x, 1), [1, n, 1])


def repeat_elements(x, rep, axis):
    """Each slice along `axis` repeated `rep` times (np.repeat)."""
    return _tf.repeat(x, rep, axis=axis)


def reverse(x, axes):
    return _tf.reverse(x, [axes] if isinstance(axes, int) else list(axes))


def gather(reference, indices):
    return _tf.gather(reference, indices)


def one_hot(indices, num_classes):
    return _tf.one_hot(indices, depth=num_classes, axis=-1)


def temporal_padding(x, padding=(1, 1)):
    """Zeros before and after the steps of [batch, steps, features]."""
    return _tf.pad(x, [[0, 0], list(padding), [0, 0]])


def _check_format(data_format):
    from .backend import image_data_format
    data_format = data_format or image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    return data_format


def spatial_2d_padding(x, padding=((1, 1), (1, 1)), data_format=None):
    pads = [list(padding[0]), list(padding[1])]
    if _check_format(data_format) == "channels_first":
        return _tf.pad(x, [[0, 0], [0, 0]] + pads)
    return _tf.pad(x, [[0, 0]] + pads + [[0, 0]])


def spatial_3d_padding(x, padding=((1, 1), (1, 1), (1, 1)), data_format=None):
    pads = [list(p) for p in padding]
    if _check_format(data_format) == "channels_first":
        return _tf.pad(x, [[0, 0], [0, 0]] + pads)
    return _tf.pad(x, [[0, 0]] + pads + [[0, 0]])


def resize_images(x, height_factor, width_factor, data_format, interpolation="nearest"):
    """Images scaled by integer factors (tf.image.resize with `interpolation`)."""
    methods = ("area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic", "nearest")
    if interpolation not in methods:
        raise ValueError(f"`interpolation` argument should be one of: {list(methods)}. Received: "
                         f'"{interpolation}".')
    channels_first = _check_format(data_format) == "channels_first"
    x = _t(x)
    if channels_first:
        x = _tf.transpose(x, [0, 2, 3, 1])
    h, w = x.shape[1], x.shape[2]
    x = _tf.image.resize(x, [h * height_factor, w * width_factor], method=interpolation)
    return _tf.transpose(x, [0, 3, 1, 2]) if channels_first else x


def resize_volumes(x, depth_factor, height_factor, width_factor, data_format):
    axes = (2, 3, 4) if _check_format(data_format) == "channels_first" else (1, 2, 3)
    for axis, factor in zip(axes, (depth_factor, height_factor, width_factor)):
        x = repeat_elements(x, factor, axis)
    return x


# ---- products and normalization -----------------------------------------------------------------------------------

def dot(x, y):
    """Matrix product; for higher ranks, x's last axis against y's second-to-last (np.dot's rule)."""
    x, y = _t(x), _t(y)
    if x.shape.rank > 2 or y.shape.rank > 2:
        return _tf.tensordot(x, y, axes=[[x.shape.rank - 1], [y.shape.rank - 2]])
    return _tf.matmul(x, y)


def batch_dot(x, y, axes=None):
    """Per sample of the batch (axis 0), x's axis axes[0] contracted with y's axes[1]; the result holds x's
    other axes, then y's, and is [batch, 1] when nothing else is left."""
    x, y = _t(x), _t(y)
    x_ndim, y_ndim = x.shape.rank, y.shape.rank
    if x_ndim < 2 or y_ndim < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with tf.shapes {x.shape} "
                         f"and {y.shape}.")
    if axes is None:
        axes = [x_ndim - 1, y_ndim - 1] if y_ndim == 2 else [x_ndim - 1, y_ndim - 2]
    elif isinstance(axes, int):
        axes = [axes, axes]
    axes = [a % n if a < 0 else a for a, n in zip(axes, (x_ndim, y_ndim))]
    if 0 in axes:
        raise ValueError(f"Cannot perform batch_dot over axis 0. If your inputs are not batched, add a dummy batch "
                         f"dimension to your inputs using K.expand_dims(x, 0). Received axes={axes}")
    letters = iter("bcdefghijklmnopqrstuvwxyz")
    x_sub = ["a" if i == 0 else next(letters) for i in range(x_ndim)]
    y_sub = ["a" if i == 0 else (x_sub[axes[0]] if i == axes[1] else next(letters)) for i in range(y_ndim)]
    out = ["a"] + [s for i, s in enumerate(x_sub) if i not in (0, axes[0])] + \
        [s for i, s in enumerate(y_sub) if i not in (0, axes[1])]
    result = _tf.einsum(f"{''.join(x_sub)},{''.join(y_sub)}->{''.join(out)}", x, y)
    return _tf.expand_dims(result, 1) if len(out) == 1 else result


def l2_normalize(x, axis=None):
    return _tf.math.l2_normalize(x, axis=axis)


def bias_add(x, bias, data_format=None):
    x, bias = _t(x), _t(bias)
    if bias.shape.rank != 1 and bias.shape.rank != x.shape.rank - 1:
        raise ValueError(f"Unexpected bias dimensions {bias.shape.rank}. Expected it to be 1 or {x.shape.rank - 1} "
                         "dimensions")
    if _check_format(data_format) == "channels_first":
        shape = [1, -1] + [1] * (x.shape.rank - 2) if bias.shape.rank == 1 else \
            [1, bias.shape[-1]] + bias.shape.as_list()[:-1]
        return x + _tf.reshape(bias, shape)
    return x + bias


def batch_normalization(x, mean, var, beta, gamma, axis=-1, epsilon=1e-3):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta (gamma, beta None: 1, 0)."""
    out = (x - mean) * _tf.math.rsqrt(var + epsilon)
    if gamma is not None:
        out = out * gamma
    return out if beta is None else out + beta


def normalize_batch_in_training(x, gamma, beta, reduction_axes, epsilon=1e-3):
    """x normalized with its moments over reduction_axes; (normalized, mean, variance)."""
    x = _t(x)
    mean, var = _tf.nn.moments(x, list(reduction_axes), keepdims=True)
    kept = [d for i, d in enumerate(x.shape.as_list()) if i not in reduction_axes]

    def broadcast(v):
        return None if v is None else _tf.reshape(v, mean.shape)
    normed = batch_normalization(x, mean, var, broadcast(beta), broadcast(gamma), epsilon=epsilon)
    return normed, _tf.reshape(mean, kept), _tf.reshape(var, kept)


def moving_average_update(x, value, momentum):
    """x <- x * momentum + value * (1 - momentum) (TF 2's: no zero-debiasing)."""
    momentum = _tf.cast(momentum, x.dtype)
    value = _tf.cast(value, x.dtype)
    return x.assign_sub((x - value) * (1 - momentum))


def dropout(x, level, noise_shape=None, seed=None):
    return _tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=seed)


def in_top_k(predictions, targets, k):
    return _tf.math.in_top_k(targets, predictions, k)


# ---- cross-entropies (elementwise or per sample, as Keras' backend) ------------------------------------------------

def _clip_probabilities(output):
    eps = _epsilon()
    return _tf.clip_by_value(output, eps, 1.0 - eps)


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise (no mean over the last axis, unlike losses.binary_crossentropy)."""
    target, output = _t(target), _t(output)
    target = _tf.cast(target, output.dtype)
    if from_logits:
        return _tf.maximum(output, 0.0) - output * target + _tf.math.log1p(_tf.exp(-_tf.abs(output)))
    eps = _epsilon()
    output = _clip_probabilities(output)
    return -(target * _tf.math.log(output + eps) + (1 - target) * _tf.math.log(1 - output + eps))


def binary_focal_crossentropy(target, output, apply_class_balancing=False, alpha=0.25, gamma=2.0,
                              from_logits=False):
    target, output = _t(target), _t(output)
    target = _tf.cast(target, output.dtype)
    probabilities = _tf.sigmoid(output) if from_logits else output
    p_t = target * probabilities + (1 - target) * (1 - probabilities)
    focal = _tf.pow(1.0 - p_t, gamma) * binary_crossentropy(target, output, from_logits)
    if apply_class_balancing:
        focal = focal * (target * alpha + (1 - target) * (1 - alpha))
    return focal


def _normalized_probabilities(output, axis):
    return _clip_probabilities(output / _tf.reduce_sum(output, axis, keepdims=True))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    target, output = _t(target), _t(output)
    target = _tf.cast(target, output.dtype)
    if from_logits:
        return _tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    return -_tf.reduce_sum(target * _tf.math.log(_normalized_probabilities(output, axis)), axis)


def categorical_focal_crossentropy(target, output, alpha=0.25, gamma=2.0, from_logits=False, axis=-1):
    target, output = _t(target), _t(output)
    target = _tf.cast(target, output.dtype)
    if from_logits:
        output = _tf.nn.softmax(output, axis=axis)
    output = _normalized_probabilities(output, axis)
    focal = alpha * _tf.pow(1.0 - output, gamma) * (-target * _tf.math.log(output))
    return _tf.reduce_sum(focal, axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1, ignore_class=None):
    """Integer targets against [..., classes] outputs; targets equal to ignore_class give 0."""
    target, output = _t(target), _t(output)
    rank = output.shape.rank
    axis = axis % rank
    if axis != rank - 1:
        perm = [i for i in range(rank) if i != axis] + [axis]
        output = _tf.transpose(output, perm)
    if not from_logits:
        output = _tf.math.log(_clip_probabilities(output))
    target = _tf.cast(target, _tf.int64)
    if target.shape.rank == output.shape.rank:
        target = _tf.squeeze(target, [-1])
    if ignore_class is not None:
        ignored = _tf.equal(target, ignore_class)
        target = _tf.where(ignored, _tf.zeros_like(target), target)
    loss = _tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if ignore_class is not None:
        loss = _tf.where(ignored, _tf.zeros_like(loss), loss)
    return loss


# ---- convolutions and pooling --------------------------------------------------------------------------------------

def _padding(padding):
    if padding not in ("same", "valid"):
        raise ValueError(f"Unknown padding: {padding}")
    return padding.upper()


def _to_nhwc(x, data_format, rank):
    """(x in channels-last, a function putting a result back in data_format)."""
    if _check_format(data_format) == "channels_last":
        return _t(x), lambda y: y
    to_last = [0] + list(range(2, rank)) + [1]
    to_first = [0, rank - 1] + list(range(1, rank - 1))
    return _tf.transpose(x, to_last), lambda y: _tf.transpose(y, to_first)


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    x, back = _to_nhwc(x, data_format, 4)
    return back(_tf.nn.conv2d(x, kernel, list(strides), _padding(padding), dilations=list(dilation_rate)))


def conv1d(x, kernel, strides=1, padding="valid", data_format=None, dilation_rate=1):
    """A 2-D convolution over [batch, 1, steps, channels]; "causal" pads (kernel - 1) * dilation steps before."""
    x, back = _to_nhwc(x, data_format, 3)
    if padding == "causal":
        x = temporal_padding(x, ((_t(kernel).shape[0] - 1) * dilation_rate, 0))
        padding = "valid"
    out = _tf.nn.conv2d(_tf.expand_dims(x, 1), _tf.expand_dims(kernel, 0), [1, strides], _padding(padding),
                        dilations=[1, dilation_rate])
    return back(_tf.squeeze(out, [1]))


def conv3d(x, kernel, strides=(1, 1, 1), padding="valid", data_format=None, dilation_rate=(1, 1, 1)):
    """Conv3D's computation (depth taps of 2-D convolutions), as a function."""
    from ._conv3d import conv3d as _conv3d
    x, back = _to_nhwc(x, data_format, 5)
    return back(_conv3d(x, _t(kernel), tuple(strides), _padding(padding).lower(), tuple(dilation_rate)))


def conv2d_transpose(x, kernel, output_shape, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    x, back = _to_nhwc(x, data_format, 4)
    output_shape = list(output_shape)
    if _check_format(data_format) == "channels_first":
        output_shape = [output_shape[0]] + output_shape[2:] + [output_shape[1]]
    if output_shape[0] is None:
        output_shape[0] = x.shape[0]
    out = _tf.nn.conv2d_transpose(x, kernel, output_shape, list(strides), _padding(padding),
                                  dilations=list(dilation_rate))
    return back(out)


def depthwise_conv2d(x, depthwise_kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    x, back = _to_nhwc(x, data_format, 4)
    return back(_tf.nn.depthwise_conv2d(x, depthwise_kernel, [1] + list(strides) + [1], _padding(padding),
                                        dilations=list(dilation_rate)))


def separable_conv2d(x, depthwise_kernel, pointwise_kernel, strides=(1, 1), padding="valid", data_format=None,
                     dilation_rate=(1, 1)):
    """The depthwise convolution, then the 1x1 pointwise one."""
    x, back = _to_nhwc(x, data_format, 4)
    depthwise = _tf.nn.depthwise_conv2d(x, depthwise_kernel, [1] + list(strides) + [1], _padding(padding),
                                        dilations=list(dilation_rate))
    return back(_tf.nn.conv2d(depthwise, pointwise_kernel, [1, 1], "VALID"))


def pool2d(x, pool_size, strides=(1, 1), padding="valid", data_format=None, pool_mode="max"):
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pooling mode: {pool_mode}")
    x, back = _to_nhwc(x, data_format, 4)
    pool = _tf.nn.max_pool2d if pool_mode == "max" else _tf.nn.avg_pool2d
    return back(pool(x, list(pool_size), list(strides), _padding(padding)))


def pool3d(x, pool_size, strides=(1, 1, 1), padding="valid", data_format=None, pool_mode="max"):
    """Keras' 3-D pooling layers' computation, as a function."""
    if pool_mode not in ("max", "avg"):
        raise ValueError(f"Invalid pooling mode: {pool_mode}")
    from ._conv3d import AveragePooling3D, MaxPooling3D
    x, back = _to_nhwc(x, data_format, 5)
    layer = (MaxPooling3D if pool_mode == "max" else AveragePooling3D)(pool_size, strides, padding)
    return back(layer(x))


# ---- variables and values ------------------------------------------------------------------------------------------

def batch_get_value(tensors):
    return [t.numpy() for t in tensors]


def batch_set_value(tuples):
    for variable, value in tuples:
        variable.assign(np.asarray(value, dtype=variable.dtype.as_numpy_dtype))


def update(x, new_x):
    return x.assign(new_x)


def update_add(x, increment):
    return x.assign_add(increment)


def update_sub(x, decrement):
    return x.assign_sub(decrement)


def cast_to_floatx(x):
    """x in floatx: a NumPy array for arrays and numbers, a cast tensor for tensors."""
    if isinstance(x, (_tf.Tensor, _tf.Variable)):
        return _tf.cast(x, _floatx())
    return np.asarray(x, dtype=_floatx())


def eval(x):  # noqa: A001
    return to_dense(x).numpy()


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    from .initializers import TruncatedNormal
    return TruncatedNormal(mean, stddev, seed)(list(shape), dtype=dtype or _floatx())


def random_binomial(shape, p=0.0, dtype=None, seed=None):
    from .backend import random_bernoulli
    warnings.warn("`tf.keras.backend.random_binomial` is deprecated, and will be removed in a future version."
                  "Please use `tf.keras.backend.random_bernoulli` instead.", stacklevel=2)
    return random_bernoulli(shape, p, dtype, seed)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    from .backend import random_normal, variable
    return variable(random_normal(shape, mean, scale, dtype or _floatx(), seed), dtype, name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    from .backend import random_uniform, variable
    return variable(random_uniform(shape, low, high, dtype or _floatx(), seed), dtype, name)


# ---- sparse ----------------------------------------------------------------------------------------------------------

def is_sparse(tensor):
    from ..sparse_tensor import SparseTensor
    spec = getattr(tensor, "_type_spec", None)
    return isinstance(tensor, SparseTensor) or type(spec).__name__ == "SparseTensorSpec"


def to_dense(tensor):
    return _tf.sparse.to_dense(tensor) if is_sparse(tensor) else _t(tensor)


# ---- control flow and functions ------------------------------------------------------------------------------------

def switch(condition, then_expression, else_expression):
    """then_expression where condition holds, else_expression: one branch (tf.cond) for a scalar condition, else
    elementwise, a lower-rank condition broadcast over the trailing dims."""
    condition = _t(condition)
    if condition.dtype != _tf.bool:
        condition = _tf.cast(condition, _tf.bool)
    if condition.shape.rank == 0:
        then_fn = then_expression if callable(then_expression) else (lambda: then_expression)
        else_fn = else_expression if callable(else_expression) else (lambda: else_expression)
        return _tf.cond(condition, then_fn, else_fn)
    then_value = _t(then_expression() if callable(then_expression) else then_expression)
    else_value = _t(else_expression() if callable(else_expression) else else_expression)
    if condition.shape.rank > then_value.shape.rank:
        raise ValueError("Rank of `condition` should be less than or equal to rank of `then_expression` and "
                         f"`else_expression`. ndim(condition)={condition.shape.rank}, "
                         f"ndim(then_expression)={then_value.shape.rank}")
    while condition.shape.rank < then_value.shape.rank:
        condition = _tf.expand_dims(condition, -1)
    condition = _tf.logical_and(condition, _tf.ones_like(then_value, dtype=_tf.bool))
    return _tf.where(condition, then_value, else_value)


def in_train_phase(x, alt, training=None):
    """x when training (training, else the learning phase), alt otherwise; callables are called."""
    from .backend import learning_phase
    if training is None:
        training = learning_phase()
    if isinstance(training, (bool, int)):
        chosen = x if training else alt
        return chosen() if callable(chosen) else chosen
    return switch(training, x, alt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


def map_fn(fn, elems, name=None, dtype=None):
    return _tf.map_fn(fn, elems, dtype=dtype)


def foldl(fn, elems, initializer=None, name=None):
    """fn(accumulator, element) over elems' first axis, from the first element."""
    items = _tf.unstack(_t(elems))
    accumulator = items.pop(0) if initializer is None else initializer
    for item in items:
        accumulator = fn(accumulator, item)
    return accumulator


def foldr(fn, elems, initializer=None, name=None):
    """fn(accumulator, element) over elems' first axis, from the last element."""
    items = _tf.unstack(_t(elems))[::-1]
    accumulator = items.pop(0) if initializer is None else initializer
    for item in items:
        accumulator = fn(accumulator, item)
    return accumulator


def function(inputs, outputs, updates=None, name=None, **kwargs):
    """A callable computing `outputs` from values for the Keras tensors `inputs` (a functional Model), returning
    NumPy values, as Keras 2 under eager execution."""
    if kwargs:
        raise ValueError(f"Session keyword arguments are not supported during eager execution. You passed: {kwargs}")
    if updates:
        raise ValueError(f"`updates` argument is not supported during eager execution. You passed: {updates}")
    from ._model import Model
    model = Model(inputs=inputs, outputs=outputs)
    wrap = isinstance(outputs, list) and len(outputs) == 1

    def run(model_inputs):
        outs = model(model_inputs)
        outs = [outs] if wrap else outs
        if isinstance(outs, (list, tuple)):
            return [o.numpy() for o in outs]
        return outs.numpy()
    return run


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None, ragged=False):
    """A Keras tensor (keras.Input) of batch shape `shape` (or `ndim` unknown dims)."""
    from ._layer import Input
    if shape is None:
        shape = (None,) * (ndim or 0)
    return Input(batch_shape=tuple(shape), dtype=dtype or _floatx(), name=name, sparse=sparse or None,
                 ragged=ragged or None)


def print_tensor(x, message="", summarize=3):
    """Prints `message` and x's values (on every run of a traced function) and returns x."""
    _tf.print(message, x, summarize=summarize)
    return x


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None, constants=None, unroll=False,
        input_length=None, time_major=False, zero_output_for_mask=False, return_all_outputs=True):
    """Keras' backend.rnn: step_function(input_t, states [+ constants]) -> (output_t, new_states) over the time
    axis of [batch, time, ...] inputs (time first with time_major), a [batch, time] mask keeping the states and
    the previous output at the masked steps. Returns (last output, outputs [batch, time, ...], final states). The
    steps run as Python code over the known number of steps (unrolled in a trace)."""
    inputs = _t(inputs)
    steps_first = inputs if time_major else _tf.transpose(inputs, [1, 0] + list(range(2, inputs.shape.rank)))
    if steps_first.shape[0] is None:
        raise ValueError("kiln.keras.backend.rnn needs the number of time steps when the graph is built")
    steps = _tf.unstack(steps_first)
    keep = None
    if mask is not None:
        mask = _tf.cast(mask, _tf.bool)
        keep = _tf.unstack(mask if time_major else _tf.transpose(mask, [1, 0]))
    order = list(range(len(steps)))[::-1] if go_backwards else list(range(len(steps)))
    states = list(initial_states)
    constants = list(constants or [])
    outputs, previous = [], None
    for t in order:
        output, new_states = step_function(steps[t], tuple(states + constants))
        new_states = list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
        if keep is not None:
            def kept(new, old, k=keep[t]):
                k = _tf.reshape(k, [-1] + [1] * (new.shape.rank - 1))
                return _tf.where(_tf.logical_and(k, _tf.ones_like(new, dtype=_tf.bool)), new, old)
            fallback = _tf.zeros_like(output) if zero_output_for_mask or previous is None else previous
            output = kept(output, fallback)
            new_states = [kept(n, o) for n, o in zip(new_states, states)]
        states, previous = new_states, output
        outputs.append(output)
    stacked = _tf.stack(outputs if return_all_outputs else outputs[-1:], 0 if time_major else 1)
    return outputs[-1], stacked, states


# ---- learning phase, names, settings ------------------------------------------------------------------------------

def set_learning_phase(value):
    """Deprecated in Keras 2: the training mode layers called without `training` use (1: training, 0: inference)."""
    warnings.warn("`tf.keras.backend.set_learning_phase` is deprecated and will be removed after 2020-10-11. To "
                  "update it, simply pass a True/False value to the `training` argument of the `__call__` method of "
                  "your layer or model.", stacklevel=2)
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    from ._layer import _state
    _state.training = bool(value)


@contextlib.contextmanager
def learning_phase_scope(value):
    """Layers called without `training` inside the scope train (1) or infer (0)."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    from ._layer import _state
    saved = getattr(_state, "training", None)
    _state.training = bool(value)
    try:
        yield
    finally:
        _state.training = saved


_UIDS = collections.defaultdict(int)


def get_uid(prefix=""):
    """1, 2, 3, ... per prefix (Keras' unique layer numbering)."""
    _UIDS[prefix] += 1
    return _UIDS[prefix]


def reset_uids():
    _UIDS.clear()


_MANUAL_VARIABLE_INITIALIZATION = [False]


def manual_variable_initialization(value):
    """Kept for Keras 2 code; TF 2's variables are initialized when made, so the flag changes nothing."""
    _MANUAL_VARIABLE_INITIALIZATION[0] = bool(value)


def name_scope(name):
    return _tf.name_scope(name)


def backend():
    return "tensorflow"
