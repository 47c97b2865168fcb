"""tf.keras.applications.densenet: DenseNet121, DenseNet169 and DenseNet201 (Huang et al., 2017): dense blocks
(each layer's 32 new channels concatenated to all before) between transition blocks that halve the channels and
the size, with Keras' layer names ("conv1/conv", "conv2_block1_0_bn", "pool2_conv", ...) and weight files."""
from .. import layers
from . import imagenet_utils

_EPSILON = 1.001e-5
_GROWTH = 32


def _conv_block(x, name):
    """BN-ReLU-1x1 (4 * growth) BN-ReLU-3x3 (growth), concatenated to the input."""
    y = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=name + "_0_bn")(x)
    y = layers.Activation("relu", name=name + "_0_relu")(y)
    y = layers.Conv2D(4 * _GROWTH, 1, use_bias=False, name=name + "_1_conv")(y)
    y = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=name + "_1_bn")(y)
    y = layers.Activation("relu", name=name + "_1_relu")(y)
    y = layers.Conv2D(_GROWTH, 3, padding="same", use_bias=False, name=name + "_2_conv")(y)
    return layers.Concatenate(axis=3, name=name + "_concat")([x, y])


def _transition_block(x, reduction, name):
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name=name + "_bn")(x)
    x = layers.Activation("relu", name=name + "_relu")(x)
    x = layers.Conv2D(int(x.shape[3] * reduction), 1, use_bias=False, name=name + "_conv")(x)
    return layers.AveragePooling2D(2, strides=2, name=name + "_pool")(x)


def _densenet(blocks, model_name, include_top, weights, input_tensor, input_shape, pooling, classes,
              classifier_activation):
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 224, 32)
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)))(inputs)
    x = layers.Conv2D(64, 7, strides=2, use_bias=False, name="conv1/conv")(x)
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="conv1/bn")(x)
    x = layers.Activation("relu", name="conv1/relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)))(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1")(x)
    for stage, count in enumerate(blocks):
        for i in range(1, count + 1):
            x = _conv_block(x, name=f"conv{stage + 2}_block{i}")
        if stage < len(blocks) - 1:
            x = _transition_block(x, 0.5, name=f"pool{stage + 2}")
    x = layers.BatchNormalization(axis=3, epsilon=_EPSILON, name="bn")(x)
    x = layers.Activation("relu", name="relu")(x)
    return imagenet_utils.classified_model(inputs, x, model_name, include_top, weights, pooling, classes,
                                           classifier_activation, ("avg_pool", "max_pool"))


def DenseNet121(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    """DenseNet121: 8,062,504 parameters with the top (Keras' table)."""
    return _densenet((6, 12, 24, 16), "densenet121", include_top, weights, input_tensor, input_shape, pooling,
                     classes, classifier_activation)


def DenseNet169(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    return _densenet((6, 12, 32, 32), "densenet169", include_top, weights, input_tensor, input_shape, pooling,
                     classes, classifier_activation)


def DenseNet201(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    return _densenet((6, 12, 48, 32), "densenet201", include_top, weights, input_tensor, input_shape, pooling,
                     classes, classifier_activation)


def preprocess_input(x, data_format=None):
    """DenseNet's preprocessing: "torch" (scaled to [0, 1], then the ImageNet means and deviations)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="torch")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
