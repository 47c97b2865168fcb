"""tf.keras.applications.inception_resnet_v2: InceptionResNetV2 (Szegedy et al., 2016): Inception blocks whose
output, scaled, is added to their input; Keras' layer names ("mixed_5b", "block35_1_mixed", "conv_7b", ...) and
weight files (default input 299 x 299)."""
from .. import layers
from .._layer import Layer
from . import imagenet_utils


class CustomScaleLayer(Layer):
    """inputs[0] + inputs[1] * scale: a residual block's output added to its input."""

    def __init__(self, scale, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale

    def call(self, inputs):
        return inputs[0] + inputs[1] * self.scale

    def compute_output_shape(self, input_shape):
        return input_shape[0]

    def get_config(self):
        return dict(super().get_config(), scale=self.scale)


def _conv_bn(x, filters, kernel_size, strides=1, padding="same", activation="relu", use_bias=False, name=None):
    x = layers.Conv2D(filters, kernel_size, strides=strides, padding=padding, use_bias=use_bias, name=name)(x)
    if not use_bias:
        x = layers.BatchNormalization(axis=3, scale=False, name=None if name is None else name + "_bn")(x)
    if activation is not None:
        x = layers.Activation(activation, name=None if name is None else name + "_ac")(x)
    return x


def _branches(x, block_type):
    if block_type == "block35":
        return [_conv_bn(x, 32, 1), _conv_bn(_conv_bn(x, 32, 1), 32, 3),
                _conv_bn(_conv_bn(_conv_bn(x, 32, 1), 48, 3), 64, 3)]
    if block_type == "block17":
        return [_conv_bn(x, 192, 1), _conv_bn(_conv_bn(_conv_bn(x, 128, 1), 160, [1, 7]), 192, [7, 1])]
    return [_conv_bn(x, 192, 1), _conv_bn(_conv_bn(_conv_bn(x, 192, 1), 224, [1, 3]), 256, [3, 1])]


def _residual_block(x, scale, block_type, index, activation="relu"):
    name = f"{block_type}_{index}"
    mixed = layers.Concatenate(axis=3, name=name + "_mixed")(_branches(x, block_type))
    up = _conv_bn(mixed, x.shape[3], 1, activation=None, use_bias=True, name=name + "_conv")
    x = CustomScaleLayer(scale)([x, up])
    return x if activation is None else layers.Activation(activation, name=name + "_ac")(x)


def InceptionResNetV2(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                      classes=1000, classifier_activation="softmax", **kwargs):
    """InceptionResNetV2: 55,873,736 parameters with the top (Keras' table)."""
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 299, 75)
    x = _conv_bn(inputs, 32, 3, strides=2, padding="valid")
    x = _conv_bn(x, 32, 3, padding="valid")
    x = _conv_bn(x, 64, 3)
    x = layers.MaxPooling2D(3, strides=2)(x)
    x = _conv_bn(x, 80, 1, padding="valid")
    x = _conv_bn(x, 192, 3, padding="valid")
    x = layers.MaxPooling2D(3, strides=2)(x)
    pool = _conv_bn(layers.AveragePooling2D(3, strides=1, padding="same")(x), 64, 1)
    x = layers.Concatenate(axis=3, name="mixed_5b")([
        _conv_bn(x, 96, 1), _conv_bn(_conv_bn(x, 48, 1), 64, 5),
        _conv_bn(_conv_bn(_conv_bn(x, 64, 1), 96, 3), 96, 3), pool])
    for i in range(1, 11):
        x = _residual_block(x, 0.17, "block35", i)
    x = layers.Concatenate(axis=3, name="mixed_6a")([
        _conv_bn(x, 384, 3, strides=2, padding="valid"),
        _conv_bn(_conv_bn(_conv_bn(x, 256, 1), 256, 3), 384, 3, strides=2, padding="valid"),
        layers.MaxPooling2D(3, strides=2, padding="valid")(x)])
    for i in range(1, 21):
        x = _residual_block(x, 0.1, "block17", i)
    x = layers.Concatenate(axis=3, name="mixed_7a")([
        _conv_bn(_conv_bn(x, 256, 1), 384, 3, strides=2, padding="valid"),
        _conv_bn(_conv_bn(x, 256, 1), 288, 3, strides=2, padding="valid"),
        _conv_bn(_conv_bn(_conv_bn(x, 256, 1), 288, 3), 320, 3, strides=2, padding="valid"),
        layers.MaxPooling2D(3, strides=2, padding="valid")(x)])
    for i in range(1, 10):
        x = _residual_block(x, 0.2, "block8", i)
    x = _residual_block(x, 1.0, "block8", 10, activation=None)
    x = _conv_bn(x, 1536, 1, name="conv_7b")
    return imagenet_utils.classified_model(inputs, x, "inception_resnet_v2", include_top, weights, pooling, classes,
                                           classifier_activation)


def preprocess_input(x, data_format=None):
    """InceptionResNetV2's preprocessing: "tf" (scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
