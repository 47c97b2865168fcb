"""tf.keras.applications.regnet: RegNetX002 .. RegNetX320 and RegNetY002 .. RegNetY320 (Radosavovic et al., 2020):
a 32-channel stem, then four stages of X blocks (1x1, grouped 3x3, 1x1 convolutions on a residual) or Y blocks (X
with squeeze-and-excitation), the rescaling to [0, 1] inside the model, Keras' layer names and weight files.

As in Keras 2.15, the classification head is a Dense without activation (classifier_activation is checked, then
not applied), and it is named after a counter ("1_head_gap", "1head_dense")."""
from .. import backend, layers
from . import imagenet_utils

# depths, widths, group width per variant (Keras' MODEL_CONFIGS); X blocks for "x...", Y blocks for "y...".
_CONFIGS = {
    "x002": ((1, 1, 4, 7), (24, 56, 152, 368), 8), "x004": ((1, 2, 7, 12), (32, 64, 160, 384), 16),
    "x006": ((1, 3, 5, 7), (48, 96, 240, 528), 24), "x008": ((1, 3, 7, 5), (64, 128, 288, 672), 16),
    "x016": ((2, 4, 10, 2), (72, 168, 408, 912), 24), "x032": ((2, 6, 15, 2), (96, 192, 432, 1008), 48),
    "x040": ((2, 5, 14, 2), (80, 240, 560, 1360), 40), "x064": ((2, 4, 10, 1), (168, 392, 784, 1624), 56),
    "x080": ((2, 5, 15, 1), (80, 240, 720, 1920), 120), "x120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
    "x160": ((2, 6, 13, 1), (256, 512, 896, 2048), 128), "x320": ((2, 7, 13, 1), (336, 672, 1344, 2520), 168),
    "y002": ((1, 1, 4, 7), (24, 56, 152, 368), 8), "y004": ((1, 3, 6, 6), (48, 104, 208, 440), 8),
    "y006": ((1, 3, 7, 4), (48, 112, 256, 608), 16), "y008": ((1, 3, 8, 2), (64, 128, 320, 768), 16),
    "y016": ((2, 6, 17, 2), (48, 120, 336, 888), 24), "y032": ((2, 5, 13, 1), (72, 216, 576, 1512), 24),
    "y040": ((2, 6, 12, 2), (128, 192, 512, 1088), 64), "y064": ((2, 7, 14, 2), (144, 288, 576, 1296), 72),
    "y080": ((2, 4, 10, 1), (168, 448, 896, 2016), 56), "y120": ((2, 5, 11, 1), (224, 448, 896, 2240), 112),
    "y160": ((2, 4, 11, 1), (224, 448, 1232, 3024), 112), "y320": ((2, 5, 12, 1), (232, 696, 1392, 3712), 232),
}


def _conv(filters, kernel, name, **kwargs):
    return layers.Conv2D(filters, kernel, use_bias=False, kernel_initializer="he_normal", name=name, **kwargs)


def _bn(x, name):
    return layers.BatchNormalization(momentum=0.9, epsilon=1e-5, name=name)(x)


def _squeeze_excite(inputs, filters, se_filters, name):
    x = layers.GlobalAveragePooling2D(name=name + "_squeeze_and_excite_gap", keepdims=True)(inputs)
    x = layers.Conv2D(se_filters, (1, 1), activation="relu", kernel_initializer="he_normal",
                      name=name + "_squeeze_and_excite_squeeze")(x)
    x = layers.Conv2D(filters, (1, 1), activation="sigmoid", kernel_initializer="he_normal",
                      name=name + "_squeeze_and_excite_excite")(x)
    import kiln
    return kiln.math.multiply(x, inputs)  # an op layer ("tf.math.multiply"), as in Keras


def _block(inputs, block_type, filters_in, filters_out, group_width, stride, name):
    """An X block (Y: with squeeze-and-excitation on a quarter of the input channels)."""
    if filters_in != filters_out and stride == 1:
        raise ValueError(f"Input filters({filters_in}) and output filters({filters_out}) are not equal for stride "
                         f"{stride}. Input and output filters must be equal for stride={stride}.")
    if stride != 1:
        skip = _bn(_conv(filters_out, (1, 1), name + "_skip_1x1", strides=stride)(inputs), name + "_skip_bn")
    else:
        skip = inputs
    x = _bn(_conv(filters_out, (1, 1), name + "_conv_1x1_1")(inputs), name + "_conv_1x1_1_bn")
    x = layers.ReLU(name=name + "_conv_1x1_1_relu")(x)
    # Keras' Conv2D takes groups=0 as 1: a stage narrower than the group width (RegNetX080's first) is one group.
    x = _conv(filters_out, (3, 3), name + "_conv_3x3", strides=stride, groups=filters_out // group_width or 1,
              padding="same")(x)
    x = layers.ReLU(name=name + "_conv_3x3_relu")(_bn(x, name + "_conv_3x3_bn"))
    if block_type == "Y":
        x = _squeeze_excite(x, filters_out, int(filters_in * 0.25), name)
    x = _bn(_conv(filters_out, (1, 1), name + "_conv_1x1_2")(x), name + "_conv_1x1_2_bn")
    return layers.ReLU(name=name + "_exit_relu")(x + skip)


def RegNet(depths, widths, group_width, block_type, default_size, model_name="regnet", include_preprocessing=True,
           include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
           classifier_activation="softmax"):
    """A RegNet of the given stages and block type ("X" or "Y"; Keras' module-level builder)."""
    from .._model import Model
    if block_type not in ("X", "Y"):
        raise NotImplementedError(f"Block type `{block_type}` not recognized. block_type must be one of (`X`, `Y`, "
                                  "`Z`). " + ("Z blocks are not written in Kiln." if block_type == "Z" else ""))
    inputs, input_shape = imagenet_utils.checked_input(include_top, weights, input_tensor, input_shape, classes,
                                                       default_size)
    x = inputs
    if include_preprocessing:
        x = layers.Rescaling(scale=1.0 / 255.0, name=model_name + "_prestem_rescaling")(x)
    x = _bn(_conv(32, (3, 3), model_name + "_stem_conv", strides=2, padding="same")(x), model_name + "_stem_bn")
    x = layers.ReLU(name=model_name + "_stem_relu")(x)
    filters_in = 32
    for stage, (depth, width) in enumerate(zip(depths, widths)):
        name = f"{model_name}_Stage_{stage}_{block_type}Block_"
        x = _block(x, block_type, filters_in, width, group_width, 2, name + "0")
        for i in range(1, depth):
            x = _block(x, block_type, width, width, group_width, 1, name + str(i))
        filters_in = width
    if include_top:
        head = str(backend.get_uid("head"))
        x = layers.GlobalAveragePooling2D(name=head + "_head_gap")(x)
        x = layers.Dense(classes, name=head + "head_dense")(x)
        imagenet_utils.validate_activation(classifier_activation, weights)
    elif pooling == "avg":
        x = layers.GlobalAveragePooling2D()(x)
    elif pooling == "max":
        x = layers.GlobalMaxPooling2D()(x)
    model = Model(inputs=inputs, outputs=x, name=model_name)
    imagenet_utils.load_weights(model, weights, model_name + (".h5" if include_top else "_notop.h5"))
    return model


def _variant(key):
    depths, widths, group_width = _CONFIGS[key]

    def build(model_name=f"regnet{key}", include_top=True, include_preprocessing=True, weights="imagenet",
              input_tensor=None, input_shape=None, pooling=None, classes=1000, classifier_activation="softmax"):
        return RegNet(depths, widths, group_width, key[0].upper(), 224, model_name=model_name,
                      include_preprocessing=include_preprocessing, include_top=include_top, weights=weights,
                      input_tensor=input_tensor, input_shape=input_shape, pooling=pooling, classes=classes,
                      classifier_activation=classifier_activation)
    build.__name__ = build.__qualname__ = f"RegNet{key.upper()}"
    build.__doc__ = (f"RegNet{key.upper()}: stages of {depths} blocks, {widths} channels, groups of {group_width} "
                     "channels; inputs are pixels in [0, 255] (the model rescales them).")
    return build


(
    RegNetX002, RegNetX004, RegNetX006, RegNetX008, RegNetX016, RegNetX032,
    RegNetX040, RegNetX064, RegNetX080, RegNetX120, RegNetX160, RegNetX320,
    RegNetY002, RegNetY004, RegNetY006, RegNetY008, RegNetY016, RegNetY032,
    RegNetY040, RegNetY064, RegNetY080, RegNetY120, RegNetY160, RegNetY320,
) = (_variant(key) for key in _CONFIGS)


def preprocess_input(x, data_format=None):
    """The identity: RegNet models rescale their inputs themselves."""
    return x


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
