"""tf.keras.applications.mobilenet_v2: MobileNetV2 (Sandler et al., 2018) with Keras' layer names, so Keras'
weight files load into it."""
import logging

from .. import backend, layers
from .._model import Model
from . import imagenet_utils

_SIZES = (96, 128, 160, 192, 224)
_ALPHAS = (0.35, 0.50, 0.75, 1.0, 1.3, 1.4)
# (filters, first stride, expansion, repeats) of the 17 inverted residual blocks.
_BLOCKS = ((16, 1, 1, 1), (24, 2, 6, 2), (32, 2, 6, 3), (64, 2, 6, 4), (96, 1, 6, 3), (160, 2, 6, 3),
           (320, 1, 6, 1))


def _make_divisible(v, divisor, min_value=None):
    """v rounded to a multiple of divisor, never below 90% of v."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * v else rounded


def _bn(name):
    axis = 1 if backend.image_data_format() == "channels_first" else -1
    return layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name=name)


def _inverted_res_block(inputs, expansion, stride, alpha, filters, block_id):
    """Expand (1x1), depthwise 3x3, project (1x1, linear); a residual add when the shapes allow."""
    axis = 1 if backend.image_data_format() == "channels_first" else -1
    in_channels = inputs.shape[axis]
    pointwise_filters = _make_divisible(int(filters * alpha), 8)
    x = inputs
    prefix = f"block_{block_id}_"
    if block_id:
        x = layers.Conv2D(expansion * in_channels, kernel_size=1, padding="same", use_bias=False, activation=None,
                          name=prefix + "expand")(x)
        x = _bn(prefix + "expand_BN")(x)
        x = layers.ReLU(6.0, name=prefix + "expand_relu")(x)
    else:
        prefix = "expanded_conv_"
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name=prefix + "pad")(x)
    x = layers.DepthwiseConv2D(kernel_size=3, strides=stride, activation=None, use_bias=False,
                               padding="same" if stride == 1 else "valid", name=prefix + "depthwise")(x)
    x = _bn(prefix + "depthwise_BN")(x)
    x = layers.ReLU(6.0, name=prefix + "depthwise_relu")(x)
    x = layers.Conv2D(pointwise_filters, kernel_size=1, padding="same", use_bias=False, activation=None,
                      name=prefix + "project")(x)
    x = _bn(prefix + "project_BN")(x)
    if in_channels == pointwise_filters and stride == 1:
        return layers.Add(name=prefix + "add")([inputs, x])
    return x


def _default_size(input_shape, input_tensor):
    """The square input size the weights were trained at that fits the given shape, else 224."""
    first = backend.image_data_format() == "channels_first"
    if input_shape is None and input_tensor is not None and hasattr(input_tensor, "shape"):
        dims = tuple(input_tensor.shape)
        rows, cols = (dims[2], dims[3]) if first else (dims[1], dims[2])
    elif input_shape is not None:
        rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0], input_shape[1])
    else:
        return 224
    return rows if rows == cols and rows in _SIZES else 224


def MobileNetV2(input_shape=None, alpha=1.0, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                classes=1000, classifier_activation="softmax", **kwargs):
    """MobileNetV2: 3,538,984 parameters at alpha 1.0 with the top (Keras' table)."""
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=_default_size(input_shape, input_tensor),
                                                    min_size=32, data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    first = backend.image_data_format() == "channels_first"
    rows, cols = (input_shape[1], input_shape[2]) if first else (input_shape[0], input_shape[1])
    if weights == "imagenet":
        if alpha not in _ALPHAS:
            raise ValueError("If imagenet weights are being loaded, alpha must be one of `0.35`, `0.50`, `0.75`, "
                             f"`1.0`, `1.3` or `1.4` only; Received `alpha={alpha}`")
        if rows != cols or rows not in _SIZES:
            rows = 224
            logging.getLogger("kiln.keras").warning(
                "`input_shape` is undefined or non-square, or `rows` is not in [96, 128, 160, 192, 224]. Weights for "
                "input shape (224, 224) will be loaded as the default.")
    inputs = imagenet_utils.input_of(input_tensor, input_shape)
    axis = 1 if first else -1
    x = layers.Conv2D(_make_divisible(32 * alpha, 8), kernel_size=3, strides=(2, 2), padding="same", use_bias=False,
                      name="Conv1")(inputs)
    x = layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name="bn_Conv1")(x)
    x = layers.ReLU(6.0, name="Conv1_relu")(x)
    block_id = 0
    for filters, stride, expansion, repeats in _BLOCKS:
        for i in range(repeats):
            x = _inverted_res_block(x, filters=filters, alpha=alpha, stride=stride if i == 0 else 1,
                                    expansion=expansion, block_id=block_id)
            block_id += 1
    last_filters = _make_divisible(1280 * alpha, 8) if alpha > 1.0 else 1280
    x = layers.Conv2D(last_filters, kernel_size=1, use_bias=False, name="Conv_1")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=1e-3, momentum=0.999, name="Conv_1_bn")(x)
    x = layers.ReLU(6.0, name="out_relu")(x)
    x = imagenet_utils.head(x, include_top, weights, pooling, classes, classifier_activation, top_pool_name=None)
    model = Model(inputs, x, name=f"mobilenetv2_{alpha:0.2f}_{rows}")
    if weights == "imagenet":
        size = "_no_top" if not include_top else ""
        imagenet_utils.load_weights(model, weights, f"mobilenet_v2_weights_tf_dim_ordering_tf_kernels_{float(alpha)}_"
                                                    f"{rows}{size}.h5")
    else:
        imagenet_utils.load_weights(model, weights, None)
    return model


def preprocess_input(x, data_format=None):
    """MobileNetV2's preprocessing: "tf" (pixels scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
