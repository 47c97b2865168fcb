"""tf.keras.applications.xception: Xception (Chollet, 2017): depthwise separable convolutions in residual blocks,
with Keras' layer names and weight files (default input 299 x 299)."""
from .. import layers
from . import imagenet_utils


def _bn(x, name=None):
    return layers.BatchNormalization(axis=-1, name=name)(x)


def _sep(x, filters, name, relu_before=True, relu_after=False):
    if relu_before:
        x = layers.Activation("relu", name=name + "_act")(x)
    x = layers.SeparableConv2D(filters, (3, 3), padding="same", use_bias=False, name=name)(x)
    x = _bn(x, name + "_bn")
    if relu_after:
        x = layers.Activation("relu", name=name + "_act")(x)
    return x


def _shortcut(x, filters):
    """The strided 1x1 convolution (and its batch normalization) of a downsampling block's shortcut."""
    return _bn(layers.Conv2D(filters, (1, 1), strides=(2, 2), padding="same", use_bias=False)(x))


def _down_block(x, filters_1, filters_2, block, first_relu=True):
    residual = _shortcut(x, filters_2)
    x = _sep(x, filters_1, f"block{block}_sepconv1", relu_before=first_relu)
    x = _sep(x, filters_2, f"block{block}_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name=f"block{block}_pool")(x)
    return layers.add([x, residual])


def Xception(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             classifier_activation="softmax"):
    """Xception: 22,910,480 parameters with the top (Keras' table)."""
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 299, 71)
    x = layers.Conv2D(32, (3, 3), strides=(2, 2), use_bias=False, name="block1_conv1")(inputs)
    x = layers.Activation("relu", name="block1_conv1_act")(_bn(x, "block1_conv1_bn"))
    x = layers.Conv2D(64, (3, 3), use_bias=False, name="block1_conv2")(x)
    x = layers.Activation("relu", name="block1_conv2_act")(_bn(x, "block1_conv2_bn"))
    # Block 2's first separable convolution follows block 1's ReLU directly; its second has the ReLU named
    # "block2_sepconv2_act", as in Keras.
    residual = _shortcut(x, 128)
    x = _sep(x, 128, "block2_sepconv1", relu_before=False)
    x = _sep(x, 128, "block2_sepconv2")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2), padding="same", name="block2_pool")(x)
    x = layers.add([x, residual])
    x = _down_block(x, 256, 256, 3)
    x = _down_block(x, 728, 728, 4)
    for block in range(5, 13):
        residual = x
        for i in (1, 2, 3):
            x = _sep(x, 728, f"block{block}_sepconv{i}")
        x = layers.add([x, residual])
    x = _down_block(x, 728, 1024, 13)
    x = _sep(x, 1536, "block14_sepconv1", relu_before=False, relu_after=True)
    x = _sep(x, 2048, "block14_sepconv2", relu_before=False, relu_after=True)
    return imagenet_utils.classified_model(inputs, x, "xception", include_top, weights, pooling, classes,
                                           classifier_activation)


def preprocess_input(x, data_format=None):
    """Xception's preprocessing: "tf" (scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
