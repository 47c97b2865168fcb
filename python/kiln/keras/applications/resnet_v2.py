"""tf.keras.applications.resnet_v2: ResNet50V2, ResNet101V2 and ResNet152V2 (He et al., 2016: identity mappings,
batch normalization and ReLU before each convolution), with Keras' layer names and weight files."""
from .. import layers
from . import imagenet_utils

_EPSILON = 1.001e-5


def _block(x, filters, stride=1, conv_shortcut=False, name=None):
    """The pre-activation bottleneck: BN-ReLU, then 1x1, 3x3 (with the stride), 1x1 up (4 * filters); the
    shortcut a 1x1 convolution of the pre-activation, or the input (max-pooled 1x1 when strided)."""
    preact = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=name + "_preact_bn")(x)
    preact = layers.Activation("relu", name=name + "_preact_relu")(preact)
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(preact)
    else:
        shortcut = layers.MaxPooling2D(1, strides=stride)(x) if stride > 1 else x
    x = layers.Conv2D(filters, 1, strides=1, use_bias=False, name=name + "_1_conv")(preact)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name=name + "_2_pad")(x)
    x = layers.Conv2D(filters, 3, strides=stride, use_bias=False, name=name + "_2_conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    return layers.Add(name=name + "_out")([shortcut, x])


def _stack(x, filters, blocks, stride1=2, name=None):
    """The first block with a convolution shortcut; the last one strided."""
    x = _block(x, filters, conv_shortcut=True, name=name + "_block1")
    for i in range(2, blocks):
        x = _block(x, filters, name=f"{name}_block{i}")
    return _block(x, filters, stride=stride1, name=f"{name}_block{blocks}")


def _resnet_v2(blocks, model_name, include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation):
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 224, 32)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(inputs)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
        x = _stack(x, filters, count, stride1=1 if stage == 3 else 2, name=f"conv{stage + 2}")
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="post_bn")(x)
    x = layers.Activation("relu", name="post_relu")(x)
    return imagenet_utils.classified_model(inputs, x, model_name, include_top, weights, pooling, classes,
                                           classifier_activation, ("avg_pool", "max_pool"))


def ResNet50V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
               classes=1000, classifier_activation="softmax"):
    """ResNet50V2: 25,613,800 parameters with the top (Keras' table)."""
    return _resnet_v2((3, 4, 6, 3), "resnet50v2", include_top, weights, input_tensor, input_shape, pooling, classes,
                      classifier_activation)


def ResNet101V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    return _resnet_v2((3, 4, 23, 3), "resnet101v2", include_top, weights, input_tensor, input_shape, pooling,
                      classes, classifier_activation)


def ResNet152V2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    return _resnet_v2((3, 8, 36, 3), "resnet152v2", include_top, weights, input_tensor, input_shape, pooling,
                      classes, classifier_activation)


def preprocess_input(x, data_format=None):
    """ResNetV2's preprocessing: "tf" (scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
