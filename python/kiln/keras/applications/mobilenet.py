"""tf.keras.applications.mobilenet: MobileNet (Howard et al., 2017): depthwise separable convolutions, width
multiplier alpha and depth_multiplier, with Keras' layer names and weight files."""
import logging

from .. import backend, layers
from .._model import Model
from . import imagenet_utils

_SIZES = (128, 160, 192, 224)
_ALPHAS = (0.25, 0.50, 0.75, 1.0)
# (pointwise filters, stride) of the 13 depthwise separable blocks
_BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1), (512, 1), (512, 1),
           (512, 1), (1024, 2), (1024, 1))


def _separable_block(x, filters, alpha, depth_multiplier, stride, block_id, axis):
    """3x3 depthwise (padded on the bottom and right when strided), BN, ReLU6, then 1x1 pointwise, BN, ReLU6."""
    if stride != 1:
        x = layers.ZeroPadding2D(((0, 1), (0, 1)), name=f"conv_pad_{block_id}")(x)
    x = layers.DepthwiseConv2D((3, 3), padding="same" if stride == 1 else "valid", depth_multiplier=depth_multiplier,
                               strides=(stride, stride), use_bias=False, name=f"conv_dw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_dw_{block_id}_bn")(x)
    x = layers.ReLU(6.0, name=f"conv_dw_{block_id}_relu")(x)
    x = layers.Conv2D(int(filters * alpha), (1, 1), padding="same", use_bias=False, strides=(1, 1),
                      name=f"conv_pw_{block_id}")(x)
    x = layers.BatchNormalization(axis=axis, name=f"conv_pw_{block_id}_bn")(x)
    return layers.ReLU(6.0, name=f"conv_pw_{block_id}_relu")(x)


def MobileNet(input_shape=None, alpha=1.0, depth_multiplier=1, dropout=1e-3, include_top=True, weights="imagenet",
              input_tensor=None, pooling=None, classes=1000, classifier_activation="softmax", **kwargs):
    """MobileNet: 4,253,864 parameters at alpha 1.0 with the top (Keras' table)."""
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    default_size = 224
    if input_shape is not None and len(input_shape) == 3 and input_shape[0] == input_shape[1] and \
            input_shape[0] in _SIZES:
        default_size = input_shape[0]
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    rows = input_shape[0]
    if weights == "imagenet":
        if depth_multiplier != 1:
            raise ValueError(f"If imagenet weights are being loaded, depth multiplier must be 1.  Received "
                             f"depth_multiplier={depth_multiplier}")
        if alpha not in _ALPHAS:
            raise ValueError(f"If imagenet weights are being loaded, alpha can be one of`0.25`, `0.50`, `0.75` or "
                             f"`1.0` only. Received: alpha={alpha}")
        if rows != input_shape[1] or rows not in _SIZES:
            rows = 224
            logging.getLogger("kiln.keras").warning(
                "`input_shape` is undefined or non-square, or `rows` is not in [128, 160, 192, 224]. Weights for "
                "input shape (224, 224) will be loaded as the default.")
    inputs = imagenet_utils.input_of(input_tensor, input_shape)
    axis = -1
    x = layers.Conv2D(int(32 * alpha), (3, 3), padding="same", use_bias=False, strides=(2, 2), name="conv1")(inputs)
    x = layers.BatchNormalization(axis=axis, name="conv1_bn")(x)
    x = layers.ReLU(6.0, name="conv1_relu")(x)
    for block_id, (filters, stride) in enumerate(_BLOCKS, start=1):
        x = _separable_block(x, filters, alpha, depth_multiplier, stride, block_id, axis)
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = layers.Dropout(dropout, name="dropout")(x)
        x = layers.Conv2D(classes, (1, 1), padding="same", name="conv_preds")(x)
        x = layers.Reshape((classes,), name="reshape_2")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(inputs, x, name=f"mobilenet_{alpha:0.2f}_{rows}")
    if weights == "imagenet":
        alpha_text = {1.0: "1_0", 0.75: "7_5", 0.50: "5_0", 0.25: "2_5"}[alpha]
        suffix = "_tf.h5" if include_top else "_tf_no_top.h5"
        imagenet_utils.load_weights(model, weights, f"mobilenet_{alpha_text}_{rows}{suffix}")
    else:
        imagenet_utils.load_weights(model, weights, None)
    return model


def preprocess_input(x, data_format=None):
    """MobileNet's preprocessing: "tf" (pixels scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
