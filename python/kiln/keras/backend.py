"""kiln.keras.backend: Keras' unique layer names, epsilon and floatx."""
import collections
import re
import threading

_lock = threading.Lock()
_name_counts = collections.defaultdict(int)
_EPSILON = 1e-7
_FLOATX = "float32"


def to_snake_case(name):
    """Keras' class name -> layer name: "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d",
    "ReLU" -> "re_lu"."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def unique_object_name(name, zero_based=True):
    """"dense", then "dense_1", "dense_2", ... (zero_based=False: "input_1", "input_2", ...). One counter per
    name for the whole process, as Keras' (clear_session() restarts them)."""
    with _lock:
        n = _name_counts[name]
        _name_counts[name] += 1
    if zero_based:
        return name if n == 0 else f"{name}_{n}"
    return f"{name}_{n + 1}"


def clear_session():
    """Restarts Keras' layer-name counters: the next Dense is "dense" again."""
    with _lock:
        _name_counts.clear()


def epsilon():
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = float(value)


def floatx():
    return _FLOATX


def set_floatx(value):
    global _FLOATX
    if value not in ("float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value!r} (kiln supports 'float32' and 'float64')")
    _FLOATX = value


def get_value(x):
    """The value of a variable or tensor as NumPy (a Python number stays as it is)."""
    if hasattr(x, "numpy"):
        return x.numpy()
    return x


def set_value(x, value):
    """Assigns `value` to the variable x (an optimizer's learning rate, ...)."""
    if not hasattr(x, "assign"):
        raise TypeError(f"set_value needs a variable, got {type(x).__name__} ({x!r})")
    import numpy as np
    x.assign(np.asarray(value, dtype=x.dtype.as_numpy_dtype))


# ---- Keras 2's backend functions on tensors ---------------------------------------------------------------------

_IMAGE_DATA_FORMAT = "channels_last"


def image_data_format():
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    """Only "channels_last" runs in Kiln (NHWC engine); "channels_first" is refused with the reason."""
    global _IMAGE_DATA_FORMAT
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"The `data_format` argument must be one of {{'channels_first', 'channels_last'}}. Received: "
                         f"data_format={data_format}")
    if data_format == "channels_first":
        raise ValueError("kiln.keras: data_format 'channels_first' is not supported (Kiln's image ops are NHWC)")
    _IMAGE_DATA_FORMAT = data_format


def _tensor(x):
    from .. import _C
    from ._layer import _to_tensor
    return x if isinstance(x, _C.Tensor) else _to_tensor(x)


def int_shape(x):
    """The static shape as a tuple of ints and None (None for an unknown rank)."""
    from ..tensor_shape import TensorShape
    shape = TensorShape(x.shape)
    return None if shape.rank is None else tuple(shape.as_list())


def ndim(x):
    return len(int_shape(x))


def shape(x):
    """The dynamic shape, as an int32 tensor."""
    from .. import _C
    return _C.shape(_tensor(x))


def dtype(x):
    return x.dtype.name if hasattr(x.dtype, "name") else str(x.dtype)


def is_keras_tensor(x):
    from ._layer import KerasTensor
    return isinstance(x, KerasTensor)


def cast(x, dtype):
    from .. import _C
    from .. import dtypes as _dtypes
    return _C.cast(_tensor(x), _dtypes.as_dtype(dtype)._enum)


def constant(value, dtype=None, shape=None, name=None):
    import numpy as np
    from .. import _C
    from .. import dtypes as _dtypes
    array = np.asarray(value, dtype=_dtypes.as_dtype(dtype or floatx()).as_numpy_dtype)
    if shape is not None:
        array = np.broadcast_to(array, shape)
    return _C.constant(np.ascontiguousarray(array), None)


def variable(value, dtype=None, name=None, constraint=None):
    from .. import Variable
    return Variable(cast(constant(value, dtype or floatx()), dtype or floatx()), name=name)


def zeros(shape, dtype=None, name=None):
    from .. import _C
    from .. import dtypes as _dtypes
    return _C.zeros(list(shape), _dtypes.as_dtype(dtype or floatx())._enum)


def ones(shape, dtype=None, name=None):
    from .. import _C
    from .. import dtypes as _dtypes
    return _C.ones(list(shape), _dtypes.as_dtype(dtype or floatx())._enum)


def eye(size, dtype=None, name=None):
    import numpy as np
    n, m = (size, size) if isinstance(size, int) else size
    return constant(np.eye(n, m), dtype)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """N(mean, stddev) values of `shape` (tf.random.normal with `seed` as the op seed, as Keras 2's)."""
    from .. import random
    return random.normal(shape, mean=mean, stddev=stddev, dtype=dtype or floatx(), seed=seed)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    from .. import random
    return random.uniform(shape, minval=minval, maxval=maxval, dtype=dtype or floatx(), seed=seed)


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    from .. import _C
    return cast(_C.less(random_uniform(shape, dtype="float32", seed=seed), float(p)), dtype or floatx())


def _reduce(op, x, axis, keepdims):
    from .. import _C
    x = _tensor(x)
    axes = None if axis is None else ([axis] if isinstance(axis, int) else list(axis))
    return getattr(_C, op)(x, axes, bool(keepdims))


def sum(x, axis=None, keepdims=False):  # noqa: A001 - Keras' name
    return _reduce("reduce_sum", x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    x = _tensor(x)
    if not x.dtype.is_floating:
        x = cast(x, floatx())
    return _reduce("reduce_mean", x, axis, keepdims)


def max(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce("reduce_max", x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _reduce("reduce_min", x, axis, keepdims)


def var(x, axis=None, keepdims=False):
    """The population variance (divisor n), as Keras 2's."""
    from .. import _C
    x = _tensor(x)
    if not x.dtype.is_floating:
        x = cast(x, floatx())
    centered = _C.subtract(x, _reduce("reduce_mean", x, axis, True))
    return _reduce("reduce_mean", _C.square(centered), axis, keepdims)


def std(x, axis=None, keepdims=False):
    from .. import _C
    return _C.sqrt(var(x, axis, keepdims))


def count_params(x):
    import math
    return math.prod(int_shape(x))


def learning_phase():
    """0 outside training (Keras 2's symbolic learning phase is gone in TF 2; inside fit, layers get training=)."""
    from ._layer import _training_context
    return 1 if _training_context() else 0


# Keras' functions on tensors (K.abs, K.batch_dot, K.conv2d, K.rnn, ...), in their own module.
from ._backend_ops import (abs, all, any, arange, argmax, argmin, backend, batch_dot,  # noqa: E402,F401,A001
                           batch_flatten,
                           batch_get_value, batch_normalization, batch_set_value, bias_add,
                           binary_crossentropy, binary_focal_crossentropy, cast_to_floatx,
                           categorical_crossentropy, categorical_focal_crossentropy, clip, concatenate, conv3d,
                           conv1d, conv2d, conv2d_transpose, cos, cumprod, cumsum, depthwise_conv2d, dot,
                           dropout, elu, equal, eval, exp, expand_dims, flatten, foldl, foldr, function, gradients,
                           gather, get_uid, greater, greater_equal, hard_sigmoid, in_test_phase, in_top_k,
                           in_train_phase, is_sparse, l2_normalize, learning_phase_scope, less, less_equal,
                           log, manual_variable_initialization, map_fn, maximum, minimum,
                           moving_average_update, name_scope, normalize_batch_in_training, not_equal,
                           one_hot, ones_like, permute_dimensions, placeholder, pool2d, pool3d, pow,
                           print_tensor, prod, random_binomial, random_normal_variable,
                           random_uniform_variable, relu, repeat, repeat_elements, reset_uids, reshape,
                           resize_images, resize_volumes, reverse, rnn, round, separable_conv2d,
                           set_learning_phase, sigmoid, sign, sin, softmax, softplus, softsign,
                           sparse_categorical_crossentropy, spatial_2d_padding, spatial_3d_padding, sqrt,
                           square, squeeze, stack, stop_gradient, switch, tanh, temporal_padding, tile,
                           to_dense, transpose, truncated_normal, update, update_add, update_sub, zeros_like)
from ._locally_connected import local_conv1d, local_conv2d  # noqa: E402,F401


class experimental:  # noqa: N801 - tf.keras.backend.experimental is a module in TF
    """Keras 2.15's switch of the noise layers' draws to a generator per layer (see _layer_random.py)."""

    @staticmethod
    def enable_tf_random_generator():
        from ._layer_random import _USE_GENERATOR
        _USE_GENERATOR[0] = True

    @staticmethod
    def disable_tf_random_generator():
        from ._layer_random import _USE_GENERATOR
        _USE_GENERATOR[0] = False

    @staticmethod
    def is_tf_random_generator_enabled():
        from ._layer_random import _USE_GENERATOR
        return _USE_GENERATOR[0]


from ._backend_ctc import ctc_batch_cost, ctc_decode, ctc_label_dense_to_sparse  # noqa: E402,F401
