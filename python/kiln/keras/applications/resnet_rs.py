"""tf.keras.applications.resnet_rs: ResNetRS50 .. ResNetRS420 (Bello et al., 2021): a ResNet-D stem (four 3x3
convolutions), bottleneck blocks with squeeze-and-excitation and an average-pooled projection shortcut, stochastic
depth in the deeper variants; the ImageNet normalization inside the model, Keras' layer names and weight files.

weights="imagenet" means Keras' largest-input variant ("imagenet-i<size>"); "imagenet-i<size>" picks one."""
import os
import sys

from .. import backend, layers
from . import imagenet_utils

# blocks per group (filters 64, 128, 256, 512), Keras' BLOCK_ARGS
_DEPTHS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3), 200: (3, 24, 36, 3), 270: (4, 29, 53, 4),
           350: (4, 36, 72, 4), 420: (4, 44, 87, 4)}
_WEIGHT_SIZES = {50: (160,), 101: (160, 192), 152: (192, 224, 256), 200: (256,), 270: (256,), 350: (256, 320),
                 420: (320,)}
# (drop_connect_rate, dropout_rate) per depth, as Keras' ResNetRS<depth> pass them
_RATES = {50: (0.0, 0.25), 101: (0.0, 0.25), 152: (0.0, 0.25), 200: (0.1, 0.25), 270: (0.1, 0.25),
          350: (0.1, 0.4), 420: (0.1, 0.4)}
_RECURSION_LIMIT = 6000
_CONV_INIT = {"class_name": "VarianceScaling",
              "config": {"scale": 2.0, "mode": "fan_out", "distribution": "truncated_normal"}}
_MEAN_RGB = [0.485, 0.456, 0.406]
_STDDEV_RGB = [0.229, 0.224, 0.225]


def _bn_axis():
    return 3 if backend.image_data_format() == "channels_last" else 1


def _conv_fixed_padding(x, filters, kernel_size, strides, name):
    """A strided convolution pads (kernel - 1) zeros split evenly first, whatever the input size."""
    if strides > 1:
        begin = (kernel_size - 1) // 2
        end = kernel_size - 1 - begin
        x = layers.ZeroPadding2D(padding=((begin, end), (begin, end)))(x)
    return layers.Conv2D(filters=filters, kernel_size=kernel_size, strides=strides,
                         padding="same" if strides == 1 else "valid", use_bias=False, kernel_initializer=_CONV_INIT,
                         name=name)(x)


def _bn(x, momentum, epsilon, name):
    return layers.BatchNormalization(axis=_bn_axis(), momentum=momentum, epsilon=epsilon, name=name)(x)


def _stem(x, bn_momentum, bn_epsilon, activation):
    name = f"stem_{backend.get_uid('stem_')}"
    for i, (filters, strides) in enumerate(((32, 2), (32, 1), (64, 1), (64, 2)), start=1):
        x = _conv_fixed_padding(x, filters, 3, strides, f"{name}_stem_conv_{i}")
        x = _bn(x, bn_momentum, bn_epsilon, f"{name}_stem_batch_norm_{i}")
        x = layers.Activation(activation, name=f"{name}_stem_act_{i}")(x)
    return x


def _squeeze_excite(inputs, in_filters, se_ratio, name):
    x = layers.GlobalAveragePooling2D(name=name + "_se_squeeze")(inputs)
    shape = (x.shape[-1], 1, 1) if _bn_axis() == 1 else (1, 1, x.shape[-1])
    x = layers.Reshape(shape, name=name + "_se_reshape")(x)
    x = layers.Conv2D(filters=max(1, int(in_filters * 4 * se_ratio)), kernel_size=[1, 1], strides=[1, 1],
                      kernel_initializer=_CONV_INIT, padding="same", use_bias=True, activation="relu",
                      name=name + "_se_reduce")(x)
    x = layers.Conv2D(filters=4 * in_filters, kernel_size=[1, 1], strides=[1, 1], kernel_initializer=_CONV_INIT,
                      padding="same", use_bias=True, activation="sigmoid", name=name + "_se_expand")(x)
    return layers.multiply([inputs, x], name=name + "_se_excite")


def _bottleneck(inputs, filters, strides, use_projection, bn_momentum, bn_epsilon, activation, se_ratio,
                survival_probability, name):
    shortcut = inputs
    if use_projection:
        if strides == 2:
            shortcut = layers.AveragePooling2D(pool_size=(2, 2), strides=(2, 2), padding="same",
                                               name=name + "_projection_pooling")(inputs)
            shortcut = _conv_fixed_padding(shortcut, filters * 4, 1, 1, name + "_projection_conv")
        else:
            shortcut = _conv_fixed_padding(inputs, filters * 4, 1, strides, name + "_projection_conv")
        shortcut = _bn(shortcut, bn_momentum, bn_epsilon, name + "_projection_batch_norm")
    x = _conv_fixed_padding(inputs, filters, 1, 1, name + "_conv_1")
    x = _bn(x, bn_momentum, bn_epsilon, name + "batch_norm_1")  # sic: Keras' name has no "_" here
    x = layers.Activation(activation, name=name + "_act_1")(x)
    x = _conv_fixed_padding(x, filters, 3, strides, name + "_conv_2")
    x = _bn(x, bn_momentum, bn_epsilon, name + "_batch_norm_2")
    x = layers.Activation(activation, name=name + "_act_2")(x)
    x = _conv_fixed_padding(x, filters * 4, 1, 1, name + "_conv_3")
    x = _bn(x, bn_momentum, bn_epsilon, name + "_batch_norm_3")
    if 0 < se_ratio < 1:
        x = _squeeze_excite(x, filters, se_ratio, name + "_se")
    if survival_probability:
        # Keras passes the survival probability as the drop rate.
        x = layers.Dropout(survival_probability, noise_shape=(None, 1, 1, 1), name=name + "_drop")(x)
    x = layers.Add()([x, shortcut])
    return layers.Activation(activation, name=name + "_output_act")(x)


def _check_weights(weights, depth, include_top, classes):
    """Keras' "imagenet" is the largest-input variant; the weights that may be asked for."""
    allowed = [f"imagenet-i{size}" for size in _WEIGHT_SIZES[depth]]
    if weights == "imagenet":
        weights = allowed[-1]
    if not (weights in {*allowed, None} or os.path.exists(weights)):
        raise ValueError("The `weights` argument should be either `None` (random initialization), `'imagenet'` "
                         "(pre-training on ImageNet, with highest available input shape), or the path to the "
                         f"weights file to be loaded. For ResNetRS{depth} the following weight variants are "
                         f"available {allowed} (default=highest). Received weights={weights}")
    if weights in allowed and include_top and classes != 1000:
        raise ValueError(f"If using `weights` as `'imagenet'` or any of {allowed} with `include_top` as true, "
                         f"`classes` should be 1000. Received classes={classes}")
    return weights, allowed


def ResNetRS(depth, input_shape=None, bn_momentum=0.0, bn_epsilon=1e-5, activation="relu", se_ratio=0.25,
             dropout_rate=0.25, drop_connect_rate=0.2, include_top=True, block_args=None, model_name="resnet-rs",
             pooling=None, weights="imagenet", input_tensor=None, classes=1000, classifier_activation="softmax",
             include_preprocessing=True):
    """A ResNet-RS of the given depth (Keras' module-level builder); block_args: [{"input_filters",
    "num_repeats"}, ...] per group, by default the depth's."""
    from .._model import Model
    weights, allowed = _check_weights(weights, depth, include_top, classes)
    # Keras checks the input shape against weights="imagenet-i<size>", which is never plain "imagenet".
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=224, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    inputs = imagenet_utils.input_of(input_tensor, input_shape)
    x = inputs
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 255)(x)
        if input_shape[_bn_axis() - 1] == 3:
            x = layers.Normalization(mean=_MEAN_RGB, variance=[s ** 2 for s in _STDDEV_RGB], axis=_bn_axis())(x)
    x = _stem(x, bn_momentum, bn_epsilon, activation)
    if block_args is None:
        block_args = [{"input_filters": f, "num_repeats": n} for f, n in zip((64, 128, 256, 512), _DEPTHS[depth])]
    for i, args in enumerate(block_args):
        survival_probability = drop_connect_rate * float(i + 2) / (len(block_args) + 1)
        name = f"BlockGroup{i + 2}_"
        for j in range(args["num_repeats"]):
            x = _bottleneck(x, args["input_filters"], (1 if i == 0 else 2) if j == 0 else 1, j == 0, bn_momentum,
                            bn_epsilon, activation, se_ratio, survival_probability, f"{name}_block_{j}_")
    x = imagenet_utils.head(x, include_top, weights, pooling, classes, classifier_activation, ("avg_pool", "max_pool"),
                            dropout_rate=dropout_rate)
    model = Model(inputs, x, name=model_name)
    if weights in allowed:
        size = weights.split("-")[-1]
        imagenet_utils.load_weights(model, "imagenet", f"{model_name}-{size}{'' if include_top else '_notop'}.h5")
    else:
        imagenet_utils.load_weights(model, weights, None)
    return model


def _variant(depth):
    drop_connect_rate, dropout_rate = _RATES[depth]

    def build(include_top=True, weights="imagenet", classes=1000, input_shape=None, input_tensor=None, pooling=None,
              classifier_activation="softmax", include_preprocessing=True):
        if depth >= 270:
            # As Keras does: the functional graph of the deepest variants is walked recursively.
            sys.setrecursionlimit(max(sys.getrecursionlimit(), _RECURSION_LIMIT))
        return ResNetRS(depth=depth, include_top=include_top, drop_connect_rate=drop_connect_rate,
                        dropout_rate=dropout_rate, weights=weights, classes=classes, input_shape=input_shape,
                        input_tensor=input_tensor, pooling=pooling, classifier_activation=classifier_activation,
                        model_name=f"resnet-rs-{depth}", include_preprocessing=include_preprocessing)
    build.__name__ = build.__qualname__ = f"ResNetRS{depth}"
    build.__doc__ = (f"ResNetRS{depth}: groups of {_DEPTHS[depth]} bottleneck blocks; inputs are pixels in [0, 255] "
                     "(the model normalizes them).")
    return build


ResNetRS50, ResNetRS101, ResNetRS152, ResNetRS200, ResNetRS270, ResNetRS350, ResNetRS420 = (
    _variant(d) for d in _DEPTHS)


def preprocess_input(x, data_format=None):
    """The identity: ResNet-RS models normalize their inputs themselves."""
    return x


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
