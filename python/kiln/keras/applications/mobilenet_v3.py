"""tf.keras.applications.mobilenet_v3: MobileNetV3Small and MobileNetV3Large (Howard et al., 2019): inverted
residual blocks with squeeze-and-excitation and hard-swish, the rescaling to [-1, 1] inside the model
(include_preprocessing), Keras' layer names ("expanded_conv_3/depthwise/BatchNorm", ...) and weight files."""
from .. import layers
from .._model import Model
from . import imagenet_utils


def _depth(v, divisor=8, min_value=None):
    """v rounded to a multiple of divisor, not below 90% of v."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def _relu(x):
    return layers.ReLU()(x)


def _hard_sigmoid(x):
    return layers.ReLU(6.0)(x + 3.0) * (1.0 / 6.0)


def _hard_swish(x):
    return layers.Multiply()([x, _hard_sigmoid(x)])


def _bn(x, name):
    return layers.BatchNormalization(axis=-1, epsilon=1e-3, momentum=0.999, name=name)(x)


def _se_block(inputs, filters, se_ratio, prefix):
    x = layers.GlobalAveragePooling2D(keepdims=True, name=prefix + "squeeze_excite/AvgPool")(inputs)
    x = layers.Conv2D(_depth(filters * se_ratio), kernel_size=1, padding="same", name=prefix + "squeeze_excite/Conv")(x)
    x = layers.ReLU(name=prefix + "squeeze_excite/Relu")(x)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", name=prefix + "squeeze_excite/Conv_1")(x)
    return layers.Multiply(name=prefix + "squeeze_excite/Mul")([inputs, _hard_sigmoid(x)])


def _inverted_res_block(x, expansion, filters, kernel_size, stride, se_ratio, activation, block_id):
    shortcut = x
    infilters = x.shape[-1]
    prefix = "expanded_conv/"
    if block_id:
        prefix = f"expanded_conv_{block_id}/"
        x = layers.Conv2D(_depth(infilters * expansion), kernel_size=1, padding="same", use_bias=False,
                          name=prefix + "expand")(x)
        x = activation(_bn(x, prefix + "expand/BatchNorm"))
    if stride == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=prefix + "depthwise/pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=stride, padding="same" if stride == 1 else "valid",
                               use_bias=False, name=prefix + "depthwise")(x)
    x = activation(_bn(x, prefix + "depthwise/BatchNorm"))
    if se_ratio:
        x = _se_block(x, _depth(infilters * expansion), se_ratio, prefix)
    x = layers.Conv2D(filters, kernel_size=1, padding="same", use_bias=False, name=prefix + "project")(x)
    x = _bn(x, prefix + "project/BatchNorm")
    if stride == 1 and infilters == filters:
        x = layers.Add(name=prefix + "Add")([shortcut, x])
    return x


# (expansion, filters, kernel ("k": the model's), stride, squeeze-excite, activation ("a": the model's)) per block
_SMALL = ((1, 16, 3, 2, True, "relu"), (72 / 16, 24, 3, 2, False, "relu"), (88 / 24, 24, 3, 1, False, "relu"),
          (4, 40, "k", 2, True, "a"), (6, 40, "k", 1, True, "a"), (6, 40, "k", 1, True, "a"),
          (3, 48, "k", 1, True, "a"), (3, 48, "k", 1, True, "a"), (6, 96, "k", 2, True, "a"),
          (6, 96, "k", 1, True, "a"), (6, 96, "k", 1, True, "a"))
_LARGE = ((1, 16, 3, 1, False, "relu"), (4, 24, 3, 2, False, "relu"), (3, 24, 3, 1, False, "relu"),
          (3, 40, "k", 2, True, "relu"), (3, 40, "k", 1, True, "relu"), (3, 40, "k", 1, True, "relu"),
          (6, 80, 3, 2, False, "a"), (2.5, 80, 3, 1, False, "a"), (2.3, 80, 3, 1, False, "a"),
          (2.3, 80, 3, 1, False, "a"), (6, 112, 3, 1, True, "a"), (6, 112, 3, 1, True, "a"),
          (6, 160, "k", 2, True, "a"), (6, 160, "k", 1, True, "a"), (6, 160, "k", 1, True, "a"))


def _mobilenet_v3(blocks, last_point_ch, model_type, input_shape, alpha, minimalistic, include_top, weights,
                  input_tensor, classes, pooling, dropout_rate, classifier_activation, include_preprocessing):
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 224, 32)
    kernel, activation, se_ratio = (3, _relu, None) if minimalistic else (5, _hard_swish, 0.25)
    x = layers.Rescaling(scale=1.0 / 127.5, offset=-1.0)(inputs) if include_preprocessing else inputs
    x = layers.Conv2D(16, kernel_size=3, strides=(2, 2), padding="same", use_bias=False, name="conv")(x)
    x = activation(_bn(x, "conv/BatchNorm"))
    for block_id, (expansion, filters, size, stride, se, act) in enumerate(blocks):
        x = _inverted_res_block(x, expansion, _depth(filters * alpha), kernel if size == "k" else size, stride,
                                se_ratio if se else None, activation if act == "a" else _relu, block_id)
    last_conv_ch = _depth(x.shape[-1] * 6)
    if alpha > 1.0:
        last_point_ch = _depth(last_point_ch * alpha)
    x = layers.Conv2D(last_conv_ch, kernel_size=1, padding="same", use_bias=False, name="conv_1")(x)
    x = activation(_bn(x, "conv_1/BatchNorm"))
    if include_top:
        x = layers.GlobalAveragePooling2D(keepdims=True)(x)
        x = activation(layers.Conv2D(last_point_ch, kernel_size=1, padding="same", use_bias=True, name="conv_2")(x))
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate)(x)
        x = layers.Flatten()(layers.Conv2D(classes, kernel_size=1, padding="same", name="logits")(x))
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.Activation(activation=classifier_activation, name="predictions")(x)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D(name="avg_pool")(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D(name="max_pool")(x)
    model = Model(inputs, x, name="MobilenetV3" + model_type)
    name = f"weights_mobilenet_v3_{model_type}{'_minimalistic' if minimalistic else ''}_224_{alpha}_float"
    imagenet_utils.load_weights(model, weights, name + ("" if include_top else "_no_top_v2") + ".h5")
    return model


def MobileNetV3Small(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
                     input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True):
    """MobileNetV3Small: 2,554,968 parameters with the top (Keras' table)."""
    return _mobilenet_v3(_SMALL, 1024, "small", input_shape, alpha, minimalistic, include_top, weights, input_tensor,
                         classes, pooling, dropout_rate, classifier_activation, include_preprocessing)


def MobileNetV3Large(input_shape=None, alpha=1.0, minimalistic=False, include_top=True, weights="imagenet",
                     input_tensor=None, classes=1000, pooling=None, dropout_rate=0.2, classifier_activation="softmax",
                     include_preprocessing=True):
    """MobileNetV3Large: 5,507,432 parameters with the top (Keras' table)."""
    return _mobilenet_v3(_LARGE, 1280, "large", input_shape, alpha, minimalistic, include_top, weights, input_tensor,
                         classes, pooling, dropout_rate, classifier_activation, include_preprocessing)


def preprocess_input(x, data_format=None):
    """The identity: MobileNetV3 models rescale their inputs themselves (include_preprocessing)."""
    return x


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
