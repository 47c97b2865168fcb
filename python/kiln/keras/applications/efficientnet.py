"""tf.keras.applications.efficientnet: EfficientNetB0 .. B7 (Tan and Le, 2019): MBConv blocks (expansion,
depthwise convolution, squeeze-and-excitation, projection, stochastic-depth dropout) scaled in width and depth,
the rescaling and normalization of the inputs inside the model, Keras' layer names and weight files."""
import copy
import math

from .. import layers
from . import imagenet_utils

_BLOCKS = [
    dict(kernel_size=3, repeats=1, filters_in=32, filters_out=16, expand_ratio=1, strides=1),
    dict(kernel_size=3, repeats=2, filters_in=16, filters_out=24, expand_ratio=6, strides=2),
    dict(kernel_size=5, repeats=2, filters_in=24, filters_out=40, expand_ratio=6, strides=2),
    dict(kernel_size=3, repeats=3, filters_in=40, filters_out=80, expand_ratio=6, strides=2),
    dict(kernel_size=5, repeats=3, filters_in=80, filters_out=112, expand_ratio=6, strides=1),
    dict(kernel_size=5, repeats=4, filters_in=112, filters_out=192, expand_ratio=6, strides=2),
    dict(kernel_size=3, repeats=1, filters_in=192, filters_out=320, expand_ratio=6, strides=1),
]
_CONV_INIT = {"class_name": "VarianceScaling",
              "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
_DENSE_INIT = {"class_name": "VarianceScaling",
               "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
_IMAGENET_STDDEV_RGB = [0.229, 0.224, 0.225]


def _block(inputs, activation, drop_rate, name, filters_in, filters_out, kernel_size, strides, expand_ratio,
           se_ratio=0.25):
    filters = filters_in * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = layers.Conv2D(filters, 1, padding="same", use_bias=False, kernel_initializer=_CONV_INIT,
                          name=name + "expand_conv")(x)
        x = layers.BatchNormalization(axis=3, name=name + "expand_bn")(x)
        x = layers.Activation(activation, name=name + "expand_activation")(x)
    if strides == 2:
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size), name=name + "dwconv_pad")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, padding="valid" if strides == 2 else "same",
                               use_bias=False, depthwise_initializer=_CONV_INIT, name=name + "dwconv")(x)
    x = layers.BatchNormalization(axis=3, name=name + "bn")(x)
    x = layers.Activation(activation, name=name + "activation")(x)
    se = layers.GlobalAveragePooling2D(name=name + "se_squeeze")(x)
    se = layers.Reshape((1, 1, filters), name=name + "se_reshape")(se)
    se = layers.Conv2D(max(1, int(filters_in * se_ratio)), 1, padding="same", activation=activation,
                       kernel_initializer=_CONV_INIT, name=name + "se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=_CONV_INIT,
                       name=name + "se_expand")(se)
    x = layers.multiply([x, se], name=name + "se_excite")
    x = layers.Conv2D(filters_out, 1, padding="same", use_bias=False, kernel_initializer=_CONV_INIT,
                      name=name + "project_conv")(x)
    x = layers.BatchNormalization(axis=3, name=name + "project_bn")(x)
    if strides == 1 and filters_in == filters_out:
        if drop_rate > 0:
            x = layers.Dropout(drop_rate, noise_shape=(None, 1, 1, 1), name=name + "drop")(x)
        x = layers.add([x, inputs], name=name + "add")
    return x


def _efficientnet(width, depth, default_size, dropout_rate, model_name, include_top, weights, input_tensor,
                  input_shape, pooling, classes, classifier_activation, drop_connect_rate=0.2, divisor=8,
                  activation="swish"):
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, default_size, 32)

    def round_filters(filters):
        filters *= width
        new = max(divisor, int(filters + divisor / 2) // divisor * divisor)
        return int(new + divisor if new < 0.9 * filters else new)

    def round_repeats(repeats):
        return int(math.ceil(depth * repeats))

    x = layers.Rescaling(1.0 / 255.0)(inputs)
    x = layers.Normalization(axis=3)(x)
    if weights == "imagenet":
        # Keras' Normalization holds the squared deviations as variances: this makes (x - mean) / deviation.
        x = layers.Rescaling([1.0 / math.sqrt(s) for s in _IMAGENET_STDDEV_RGB])(x)
    x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, 3), name="stem_conv_pad")(x)
    x = layers.Conv2D(round_filters(32), 3, strides=2, padding="valid", use_bias=False, kernel_initializer=_CONV_INIT,
                      name="stem_conv")(x)
    x = layers.BatchNormalization(axis=3, name="stem_bn")(x)
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(_BLOCKS)
    total = float(sum(round_repeats(args["repeats"]) for args in blocks_args))
    done = 0
    for i, args in enumerate(blocks_args):
        args["filters_in"] = round_filters(args["filters_in"])
        args["filters_out"] = round_filters(args["filters_out"])
        for j in range(round_repeats(args.pop("repeats"))):
            if j > 0:
                args["strides"] = 1
                args["filters_in"] = args["filters_out"]
            x = _block(x, activation, drop_connect_rate * done / total, f"block{i + 1}{chr(j + 97)}_", **args)
            done += 1
    x = layers.Conv2D(round_filters(1280), 1, padding="same", use_bias=False, kernel_initializer=_CONV_INIT,
                      name="top_conv")(x)
    x = layers.BatchNormalization(axis=3, name="top_bn")(x)
    x = layers.Activation(activation, name="top_activation")(x)
    from .._model import Model
    x = imagenet_utils.head(x, include_top, weights, pooling, classes, classifier_activation, ("avg_pool", "max_pool"),
                            dropout_rate=dropout_rate, kernel_initializer=_DENSE_INIT)
    model = Model(inputs, x, name=model_name)
    # Keras' EfficientNet weight files: "efficientnetb0.h5" / "efficientnetb0_notop.h5".
    imagenet_utils.load_weights(model, weights, model_name + ("" if include_top else "_notop") + ".h5")
    return model


_VARIANTS = {"B0": (1.0, 1.0, 224, 0.2), "B1": (1.0, 1.1, 240, 0.2), "B2": (1.1, 1.2, 260, 0.3),
             "B3": (1.2, 1.4, 300, 0.3), "B4": (1.4, 1.8, 380, 0.4), "B5": (1.6, 2.2, 456, 0.4),
             "B6": (1.8, 2.6, 528, 0.5), "B7": (2.0, 3.1, 600, 0.5)}


def _variant(key):
    width, depth, size, dropout = _VARIANTS[key]

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None,
              classes=1000, classifier_activation="softmax", **kwargs):
        return _efficientnet(width, depth, size, dropout, f"efficientnet{key.lower()}", include_top, weights,
                             input_tensor, input_shape, pooling, classes, classifier_activation, **kwargs)
    build.__name__ = build.__qualname__ = f"EfficientNet{key}"
    build.__doc__ = f"EfficientNet{key}: width {width}, depth {depth}, default input {size} x {size}."
    return build


EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3 = (_variant(k) for k in ("B0", "B1", "B2", "B3"))
EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7 = (_variant(k) for k in ("B4", "B5", "B6", "B7"))


def preprocess_input(x, data_format=None):
    """The identity: EfficientNet models rescale and normalize their inputs themselves."""
    return x


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
