"""tf.keras.applications.inception_v3: InceptionV3 (Szegedy et al., 2015) with Keras' layer names ("mixed0" ..
"mixed10"; its convolution, batch normalization and activation layers unnamed, as in Keras) and weight files
(default input 299 x 299)."""
from .. import layers
from . import imagenet_utils


def _conv_bn(x, filters, rows, cols, padding="same", strides=(1, 1)):
    """Convolution without bias, batch normalization without scale, ReLU."""
    x = layers.Conv2D(filters, (rows, cols), strides=strides, padding=padding, use_bias=False)(x)
    x = layers.BatchNormalization(axis=3, scale=False)(x)
    return layers.Activation("relu")(x)


def _avg_branch(x, filters):
    return _conv_bn(layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same")(x), filters, 1, 1)


def _block_35(x, pool_filters, name):
    b1 = _conv_bn(x, 64, 1, 1)
    b5 = _conv_bn(_conv_bn(x, 48, 1, 1), 64, 5, 5)
    b3 = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3)
    return layers.concatenate([b1, b5, b3, _avg_branch(x, pool_filters)], axis=3, name=name)


def _block_17(x, width, name):
    """The 17 x 17 block with factorized 7x7 convolutions of `width` channels inside."""
    b1 = _conv_bn(x, 192, 1, 1)
    b7 = _conv_bn(_conv_bn(_conv_bn(x, width, 1, 1), width, 1, 7), 192, 7, 1)
    d7 = _conv_bn(x, width, 1, 1)
    for rows, cols in ((7, 1), (1, 7), (7, 1)):
        d7 = _conv_bn(d7, width, rows, cols)
    d7 = _conv_bn(d7, 192, 1, 7)
    return layers.concatenate([b1, b7, d7, _avg_branch(x, 192)], axis=3, name=name)


def _block_8(x, index):
    b1 = _conv_bn(x, 320, 1, 1)
    b3 = _conv_bn(x, 384, 1, 1)
    b3 = layers.concatenate([_conv_bn(b3, 384, 1, 3), _conv_bn(b3, 384, 3, 1)], axis=3, name=f"mixed9_{index}")
    d3 = _conv_bn(_conv_bn(x, 448, 1, 1), 384, 3, 3)
    d3 = layers.concatenate([_conv_bn(d3, 384, 1, 3), _conv_bn(d3, 384, 3, 1)], axis=3)
    return layers.concatenate([b1, b3, d3, _avg_branch(x, 192)], axis=3, name=f"mixed{9 + index}")


def InceptionV3(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    """InceptionV3: 23,851,784 parameters with the top (Keras' table)."""
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 299, 75)
    x = _conv_bn(inputs, 32, 3, 3, strides=(2, 2), padding="valid")
    x = _conv_bn(x, 32, 3, 3, padding="valid")
    x = _conv_bn(x, 64, 3, 3)
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    x = _conv_bn(x, 80, 1, 1, padding="valid")
    x = _conv_bn(x, 192, 3, 3, padding="valid")
    x = layers.MaxPooling2D((3, 3), strides=(2, 2))(x)
    for i, pool_filters in enumerate((32, 64, 64)):
        x = _block_35(x, pool_filters, f"mixed{i}")
    b3 = _conv_bn(x, 384, 3, 3, strides=(2, 2), padding="valid")
    d3 = _conv_bn(_conv_bn(_conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3, strides=(2, 2), padding="valid")
    x = layers.concatenate([b3, d3, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name="mixed3")
    for i, width in enumerate((128, 160, 160, 192)):
        x = _block_17(x, width, f"mixed{4 + i}")
    b3 = _conv_bn(_conv_bn(x, 192, 1, 1), 320, 3, 3, strides=(2, 2), padding="valid")
    b7 = _conv_bn(_conv_bn(_conv_bn(x, 192, 1, 1), 192, 1, 7), 192, 7, 1)
    b7 = _conv_bn(b7, 192, 3, 3, strides=(2, 2), padding="valid")
    x = layers.concatenate([b3, b7, layers.MaxPooling2D((3, 3), strides=(2, 2))(x)], axis=3, name="mixed8")
    for i in range(2):
        x = _block_8(x, i)
    return imagenet_utils.classified_model(inputs, x, "inception_v3", include_top, weights, pooling, classes,
                                           classifier_activation)


def preprocess_input(x, data_format=None):
    """InceptionV3's preprocessing: "tf" (scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
