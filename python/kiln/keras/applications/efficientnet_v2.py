"""tf.keras.applications.efficientnet_v2: EfficientNetV2B0 .. B3, S, M and L (Tan and Le, 2021): fused MBConv
blocks (one full convolution for expansion and depthwise) in the early stages, MBConv blocks with squeeze-and-
excitation later; the input scaling inside the model (include_preprocessing), Keras' layer names and weight files."""
import copy
import math

from .. import backend, initializers, layers
from . import imagenet_utils


def _stage(kernel, repeats, filters_in, filters_out, expand, se, strides, fused):
    return dict(kernel_size=kernel, num_repeat=repeats, input_filters=filters_in, output_filters=filters_out,
                expand_ratio=expand, se_ratio=se, strides=strides, conv_type=1 if fused else 0)


_B = [_stage(3, 1, 32, 16, 1, 0, 1, True), _stage(3, 2, 16, 32, 4, 0, 2, True), _stage(3, 2, 32, 48, 4, 0, 2, True),
      _stage(3, 3, 48, 96, 4, 0.25, 2, False), _stage(3, 5, 96, 112, 6, 0.25, 1, False),
      _stage(3, 8, 112, 192, 6, 0.25, 2, False)]
_BLOCKS = {
    "s": [_stage(3, 2, 24, 24, 1, 0, 1, True), _stage(3, 4, 24, 48, 4, 0, 2, True), _stage(3, 4, 48, 64, 4, 0, 2, True),
          _stage(3, 6, 64, 128, 4, 0.25, 2, False), _stage(3, 9, 128, 160, 6, 0.25, 1, False),
          _stage(3, 15, 160, 256, 6, 0.25, 2, False)],
    "m": [_stage(3, 3, 24, 24, 1, 0, 1, True), _stage(3, 5, 24, 48, 4, 0, 2, True), _stage(3, 5, 48, 80, 4, 0, 2, True),
          _stage(3, 7, 80, 160, 4, 0.25, 2, False), _stage(3, 14, 160, 176, 6, 0.25, 1, False),
          _stage(3, 18, 176, 304, 6, 0.25, 2, False), _stage(3, 5, 304, 512, 6, 0.25, 1, False)],
    "l": [_stage(3, 4, 32, 32, 1, 0, 1, True), _stage(3, 7, 32, 64, 4, 0, 2, True), _stage(3, 7, 64, 96, 4, 0, 2, True),
          _stage(3, 10, 96, 192, 4, 0.25, 2, False), _stage(3, 19, 192, 224, 6, 0.25, 1, False),
          _stage(3, 25, 224, 384, 6, 0.25, 2, False), _stage(3, 7, 384, 640, 6, 0.25, 1, False)],
    "b0": _B, "b1": _B, "b2": _B, "b3": _B,
}
_CONV_INIT = {"class_name": "VarianceScaling",
              "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
_DENSE_INIT = {"class_name": "VarianceScaling",
               "config": {"scale": 1.0 / 3.0, "mode": "fan_out", "distribution": "uniform"}}
_MEAN_RGB = [0.485, 0.456, 0.406]
_STDDEV_RGB = [0.229, 0.224, 0.225]


def round_filters(filters, width_coefficient, min_depth, depth_divisor):
    """filters scaled by the width and rounded to a multiple of depth_divisor (at least min_depth)."""
    filters *= width_coefficient
    return int(max(min_depth or depth_divisor, int(filters + depth_divisor / 2) // depth_divisor * depth_divisor))


def round_repeats(repeats, depth_coefficient):
    return int(math.ceil(depth_coefficient * repeats))


def _conv(filters, kernel, name, strides=1, **kwargs):
    return layers.Conv2D(filters, kernel, strides=strides, kernel_initializer=_CONV_INIT, padding="same",
                         use_bias=False, name=name, **kwargs)


def _bn(x, momentum, name):
    return layers.BatchNormalization(axis=_bn_axis(), momentum=momentum, name=name)(x)


def _bn_axis():
    return 3 if backend.image_data_format() == "channels_last" else 1


def _squeeze_excite(x, filters, filters_in, se_ratio, activation, name):
    se = layers.GlobalAveragePooling2D(name=name + "se_squeeze")(x)
    shape = (filters, 1, 1) if _bn_axis() == 1 else (1, 1, filters)
    se = layers.Reshape(shape, name=name + "se_reshape")(se)
    se = layers.Conv2D(max(1, int(filters_in * se_ratio)), 1, padding="same", activation=activation,
                       kernel_initializer=_CONV_INIT, name=name + "se_reduce")(se)
    se = layers.Conv2D(filters, 1, padding="same", activation="sigmoid", kernel_initializer=_CONV_INIT,
                       name=name + "se_expand")(se)
    return layers.multiply([x, se], name=name + "se_excite")


def _residual(x, inputs, strides, filters_in, filters_out, survival_probability, name):
    """The skip connection of a block that keeps the size; Keras passes survival_probability as the drop rate."""
    if strides == 1 and filters_in == filters_out:
        if survival_probability:
            x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1), name=name + "drop")(x)
        x = layers.add([x, inputs], name=name + "add")
    return x


def _mbconv(inputs, input_filters, output_filters, expand_ratio, kernel_size, strides, se_ratio, bn_momentum,
            activation, survival_probability, name):
    """Expansion (1x1), depthwise convolution, squeeze-and-excitation, projection (1x1)."""
    filters = input_filters * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv(filters, 1, name + "expand_conv", data_format="channels_last")(x)
        x = _bn(x, bn_momentum, name + "expand_bn")
        x = layers.Activation(activation, name=name + "expand_activation")(x)
    x = layers.DepthwiseConv2D(kernel_size, strides=strides, depthwise_initializer=_CONV_INIT, padding="same",
                               data_format="channels_last", use_bias=False, name=name + "dwconv2")(x)
    x = _bn(x, bn_momentum, name + "bn")
    x = layers.Activation(activation, name=name + "activation")(x)
    if 0 < se_ratio <= 1:
        x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
    x = _conv(output_filters, 1, name + "project_conv", data_format="channels_last")(x)
    x = _bn(x, bn_momentum, name + "project_bn")
    return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)


def _fused_mbconv(inputs, input_filters, output_filters, expand_ratio, kernel_size, strides, se_ratio, bn_momentum,
                  activation, survival_probability, name):
    """One full convolution in place of the expansion and the depthwise convolution, then the projection."""
    filters = input_filters * expand_ratio
    x = inputs
    if expand_ratio != 1:
        x = _conv(filters, kernel_size, name + "expand_conv", strides=strides, data_format="channels_last")(x)
        x = _bn(x, bn_momentum, name + "expand_bn")
        x = layers.Activation(activation=activation, name=name + "expand_activation")(x)
    if 0 < se_ratio <= 1:
        x = _squeeze_excite(x, filters, input_filters, se_ratio, activation, name)
    expanded = expand_ratio != 1
    x = _conv(output_filters, 1 if expanded else kernel_size, name + "project_conv",
              strides=1 if expanded else strides)(x)
    x = _bn(x, bn_momentum, name + "project_bn")
    if not expanded:
        x = layers.Activation(activation=activation, name=name + "project_activation")(x)
    return _residual(x, inputs, strides, input_filters, output_filters, survival_probability, name)


def EfficientNetV2(width_coefficient, depth_coefficient, default_size, dropout_rate=0.2, drop_connect_rate=0.2,
                   depth_divisor=8, min_depth=8, bn_momentum=0.9, activation="swish", blocks_args="default",
                   model_name="efficientnetv2", include_top=True, weights="imagenet", input_tensor=None,
                   input_shape=None, pooling=None, classes=1000, classifier_activation="softmax",
                   include_preprocessing=True):
    """An EfficientNetV2 of the given scaling (Keras' module-level builder)."""
    from .._model import Model
    if blocks_args == "default":
        blocks_args = _BLOCKS[model_name.split("-")[-1]]
    inputs, input_shape = imagenet_utils.checked_input(include_top, weights, input_tensor, input_shape, classes,
                                                       default_size)
    x = inputs
    if include_preprocessing:
        # The B variants were trained on ImageNet-normalized inputs, S, M and L on [-1, 1].
        if model_name.split("-")[-1].startswith("b") and input_shape[_bn_axis() - 1] == 3:
            x = layers.Rescaling(scale=1.0 / 255)(x)
            x = layers.Normalization(mean=_MEAN_RGB, variance=[s ** 2 for s in _STDDEV_RGB], axis=_bn_axis())(x)
        else:
            x = layers.Rescaling(scale=1.0 / 128.0, offset=-1)(x)

    def filters(n):
        return round_filters(n, width_coefficient, min_depth, depth_divisor)

    x = _conv(filters(blocks_args[0]["input_filters"]), 3, "stem_conv", strides=2)(x)
    x = _bn(x, bn_momentum, "stem_bn")
    x = layers.Activation(activation, name="stem_activation")(x)
    blocks_args = copy.deepcopy(blocks_args)
    total = float(sum(args["num_repeat"] for args in blocks_args))
    done = 0
    for i, args in enumerate(blocks_args):
        args["input_filters"] = filters(args["input_filters"])
        args["output_filters"] = filters(args["output_filters"])
        block = _fused_mbconv if args.pop("conv_type") else _mbconv
        for j in range(round_repeats(args.pop("num_repeat"), depth_coefficient)):
            if j > 0:
                args["strides"] = 1
                args["input_filters"] = args["output_filters"]
            x = block(x, bn_momentum=bn_momentum, activation=activation,
                      survival_probability=drop_connect_rate * done / total, name=f"block{i + 1}{chr(j + 97)}_",
                      **args)
            done += 1
    x = _conv(filters(1280), 1, "top_conv", data_format="channels_last")(x)
    x = _bn(x, bn_momentum, "top_bn")
    x = layers.Activation(activation=activation, name="top_activation")(x)
    x = imagenet_utils.head(x, include_top, weights, pooling, classes, classifier_activation, ("avg_pool", "max_pool"),
                            dropout_rate=dropout_rate, kernel_initializer=_DENSE_INIT,
                            bias_initializer=initializers.Constant(0))
    model = Model(inputs, x, name=model_name)
    imagenet_utils.load_weights(model, weights, model_name + (".h5" if include_top else "_notop.h5"))
    return model


_VARIANTS = {"B0": (1.0, 1.0, 224), "B1": (1.0, 1.1, 240), "B2": (1.1, 1.2, 260), "B3": (1.2, 1.4, 300),
             "S": (1.0, 1.0, 384), "M": (1.0, 1.0, 480), "L": (1.0, 1.0, 480)}


def _variant(key):
    width, depth, size = _VARIANTS[key]

    def build(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
              classifier_activation="softmax", include_preprocessing=True):
        return EfficientNetV2(width, depth, size, model_name=f"efficientnetv2-{key.lower()}", include_top=include_top,
                              weights=weights, input_tensor=input_tensor, input_shape=input_shape, pooling=pooling,
                              classes=classes, classifier_activation=classifier_activation,
                              include_preprocessing=include_preprocessing)
    build.__name__ = build.__qualname__ = f"EfficientNetV2{key}"
    build.__doc__ = (f"EfficientNetV2{key}: width {width}, depth {depth}, default input {size} x {size}; inputs are "
                     "pixels in [0, 255] (the model scales them).")
    return build


EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2, EfficientNetV2B3 = (_variant(k) for k in ("B0", "B1", "B2", "B3"))
EfficientNetV2S, EfficientNetV2M, EfficientNetV2L = (_variant(k) for k in ("S", "M", "L"))


def preprocess_input(x, data_format=None):
    """The identity: EfficientNetV2 models scale their inputs themselves."""
    return x


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
