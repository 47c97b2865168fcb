"""tf.keras.applications.resnet: ResNet50, ResNet101 and ResNet152 (He et al., 2015), with Keras' layer names,
so Keras' weight files load into them by name or in order."""
from .. import backend, layers
from . import imagenet_utils

_EPSILON = 1.001e-5


def _bn_axis():
    return 3 if backend.image_data_format() == "channels_last" else 1


def _block(x, filters, stride=1, conv_shortcut=True, name=None):
    """The bottleneck block: 1x1 down, 3x3, 1x1 up (4 * filters), added to the shortcut."""
    axis = _bn_axis()
    if conv_shortcut:
        shortcut = layers.Conv2D(4 * filters, 1, strides=stride, name=name + "_0_conv")(x)
        shortcut = layers.BatchNormalization(axis=axis, epsilon=_EPSILON, name=name + "_0_bn")(shortcut)
    else:
        shortcut = x
    x = layers.Conv2D(filters, 1, strides=stride, name=name + "_1_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=_EPSILON, name=name + "_1_bn")(x)
    x = layers.Activation("relu", name=name + "_1_relu")(x)
    x = layers.Conv2D(filters, 3, padding="SAME", name=name + "_2_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=_EPSILON, name=name + "_2_bn")(x)
    x = layers.Activation("relu", name=name + "_2_relu")(x)
    x = layers.Conv2D(4 * filters, 1, name=name + "_3_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=_EPSILON, name=name + "_3_bn")(x)
    x = layers.Add(name=name + "_add")([shortcut, x])
    return layers.Activation("relu", name=name + "_out")(x)


def _stack(x, filters, blocks, stride1=2, name=None):
    x = _block(x, filters, stride=stride1, name=name + "_block1")
    for i in range(2, blocks + 1):
        x = _block(x, filters, conv_shortcut=False, name=f"{name}_block{i}")
    return x


def _resnet(blocks, model_name, include_top, weights, input_tensor, input_shape, pooling, classes,
            classifier_activation="softmax", **kwargs):
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 224, 32)
    axis = _bn_axis()
    x = layers.ZeroPadding2D(padding=((3, 3), (3, 3)), name="conv1_pad")(inputs)
    x = layers.Conv2D(64, 7, strides=2, use_bias=True, name="conv1_conv")(x)
    x = layers.BatchNormalization(axis=axis, epsilon=_EPSILON, name="conv1_bn")(x)
    x = layers.Activation("relu", name="conv1_relu")(x)
    x = layers.ZeroPadding2D(padding=((1, 1), (1, 1)), name="pool1_pad")(x)
    x = layers.MaxPooling2D(3, strides=2, name="pool1_pool")(x)
    for stage, (filters, count) in enumerate(zip((64, 128, 256, 512), blocks)):
        x = _stack(x, filters, count, stride1=1 if stage == 0 else 2, name=f"conv{stage + 2}")
    return imagenet_utils.classified_model(inputs, x, model_name, include_top, weights, pooling, classes,
                                           classifier_activation, ("avg_pool", "max_pool"))


def ResNet50(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
             **kwargs):
    """ResNet50: 25,636,712 parameters with the top (Keras' table)."""
    return _resnet((3, 4, 6, 3), "resnet50", include_top, weights, input_tensor, input_shape, pooling, classes,
                   **kwargs)


def ResNet101(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, **kwargs):
    return _resnet((3, 4, 23, 3), "resnet101", include_top, weights, input_tensor, input_shape, pooling, classes,
                   **kwargs)


def ResNet152(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, **kwargs):
    return _resnet((3, 8, 36, 3), "resnet152", include_top, weights, input_tensor, input_shape, pooling, classes,
                   **kwargs)


def preprocess_input(x, data_format=None):
    """ResNet's preprocessing: "caffe" (RGB to BGR, less the ImageNet means)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
