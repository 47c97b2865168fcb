"""tf.keras.applications.convnext: ConvNeXtTiny .. ConvNeXtXLarge (Liu et al., 2022): a 4x4 patchify stem and
2x2 downsampling (each a nested Sequential, as in Keras), blocks of a 7x7 depthwise convolution, LayerNormalization,
two pointwise Dense layers around GELU and a learned per-channel scale, added to the block's input; the ImageNet
normalization inside the model (include_preprocessing), Keras' layer names and weight files."""
import numpy as np

from .. import backend, initializers, layers
from . import imagenet_utils

_CONFIGS = {"tiny": ((3, 3, 9, 3), (96, 192, 384, 768)), "small": ((3, 3, 27, 3), (96, 192, 384, 768)),
            "base": ((3, 3, 27, 3), (128, 256, 512, 1024)), "large": ((3, 3, 27, 3), (192, 384, 768, 1536)),
            "xlarge": ((3, 3, 27, 3), (256, 512, 1024, 2048))}
_MEAN_RGB = (0.485, 0.456, 0.406)
_STDDEV_RGB = (0.229, 0.224, 0.225)


class _ApplicationLayer(layers.Layer):
    """Saved under Keras' module name, so a saved model names the class where Keras defines it."""

    def _serialized_module(self):
        return "keras.src.applications.convnext"


class StochasticDepth(_ApplicationLayer):
    """Drops the whole residual branch of a sample with probability drop_path_rate while training (the kept ones
    scaled by 1 / keep probability); the identity otherwise."""

    def __init__(self, drop_path_rate, **kwargs):
        super().__init__(**kwargs)
        self.drop_path_rate = drop_path_rate

    def call(self, x, training=None):
        if not training:
            return x
        import kiln
        keep = 1.0 - self.drop_path_rate
        shape = kiln.concat([kiln.shape(x)[:1], kiln.ones([len(x.shape) - 1], dtype=kiln.int32)], axis=0)
        mask = kiln.floor(keep + kiln.random.uniform(shape, 0, 1, dtype=x.dtype))
        return x / keep * mask

    def get_config(self):
        config = super().get_config()
        config["drop_path_rate"] = self.drop_path_rate
        return config


class LayerScale(_ApplicationLayer):
    """Multiplies its input by a learned per-channel scale ("gamma", projection_dim values, all init_values)."""

    def __init__(self, init_values, projection_dim, **kwargs):
        super().__init__(**kwargs)
        self.init_values = init_values
        self.projection_dim = projection_dim

    def build(self, input_shape):
        self.gamma = self.add_weight(name="gamma", shape=(self.projection_dim,),
                                     initializer=initializers.Constant(self.init_values), trainable=True)
        super().build(input_shape)

    def call(self, x):
        return x * self.gamma

    def get_config(self):
        config = super().get_config()
        config.update(init_values=self.init_values, projection_dim=self.projection_dim)
        return config


def _block(inputs, dim, drop_path_rate, layer_scale_init_value, name):
    x = layers.Conv2D(dim, 7, padding="same", groups=dim, name=name + "_depthwise_conv")(inputs)
    x = layers.LayerNormalization(epsilon=1e-6, name=name + "_layernorm")(x)
    x = layers.Dense(4 * dim, name=name + "_pointwise_conv_1")(x)
    x = layers.Activation("gelu", name=name + "_gelu")(x)
    x = layers.Dense(dim, name=name + "_pointwise_conv_2")(x)
    if layer_scale_init_value is not None:
        x = LayerScale(layer_scale_init_value, dim, name=name + "_layer_scale")(x)
    if drop_path_rate:
        x = StochasticDepth(drop_path_rate, name=name + "_stochastic_depth")(x)
    else:
        x = layers.Activation("linear", name=name + "_identity")(x)
    return inputs + x  # an op layer ("tf.__operators__.add"), as in Keras


def _downsampling_layers(dims, model_name):
    """The stem (4x4 patches) and the three 2x2 downsamplings, each a Sequential of Keras' name."""
    from .._sequential import Sequential
    stem = Sequential([layers.Conv2D(dims[0], 4, strides=4, name=model_name + "_stem_conv"),
                       layers.LayerNormalization(epsilon=1e-6, name=model_name + "_stem_layernorm")],
                      name=model_name + "_stem")
    downsampling = [
        Sequential([layers.LayerNormalization(epsilon=1e-6, name=f"{model_name}_downsampling_layernorm_{i}"),
                    layers.Conv2D(dims[i + 1], 2, strides=2, name=f"{model_name}_downsampling_conv_{i}")],
                   name=f"{model_name}_downsampling_block_{i}") for i in range(3)]
    return [stem] + downsampling


def ConvNeXt(depths, projection_dims, drop_path_rate=0.0, layer_scale_init_value=1e-6, default_size=224,
             model_name="convnext", include_preprocessing=True, include_top=True, weights=None, input_tensor=None,
             input_shape=None, pooling=None, classes=1000, classifier_activation="softmax"):
    """A ConvNeXt of the given stage depths and widths (Keras' module-level builder)."""
    from .._model import Model
    inputs, input_shape = imagenet_utils.checked_input(include_top, weights, input_tensor, input_shape, classes,
                                                       default_size)
    x = inputs
    channel_axis = 3 if backend.image_data_format() == "channels_last" else 1
    if include_preprocessing and input_shape[channel_axis - 1] == 3:
        x = layers.Normalization(mean=[m * 255 for m in _MEAN_RGB], variance=[(s * 255) ** 2 for s in _STDDEV_RGB],
                                 name=model_name + "_prestem_normalization")(x)
    rates = [float(r) for r in np.linspace(0.0, drop_path_rate, sum(depths))]
    done = 0
    for stage, downsample in enumerate(_downsampling_layers(projection_dims, model_name)):
        x = downsample(x)
        for j in range(depths[stage]):
            x = _block(x, projection_dims[stage], rates[done + j], layer_scale_init_value,
                       f"{model_name}_stage_{stage}_block_{j}")
        done += depths[stage]
    if include_top:
        imagenet_utils.validate_activation(classifier_activation, weights)
        x = layers.GlobalAveragePooling2D(name=model_name + "_head_gap")(x)
        x = layers.LayerNormalization(epsilon=1e-6, name=model_name + "_head_layernorm")(x)
        x = layers.Dense(classes, activation=classifier_activation, name=model_name + "_head_dense")(x)
    else:
        if pooling == "avg":
            x = layers.GlobalAveragePooling2D()(x)
        elif pooling == "max":
            x = layers.GlobalMaxPooling2D()(x)
        x = layers.LayerNormalization(epsilon=1e-6)(x)  # Keras normalizes the features without the top too
    model = Model(inputs=inputs, outputs=x, name=model_name)
    imagenet_utils.load_weights(model, weights, model_name + (".h5" if include_top else "_notop.h5"))
    return model


def _variant(key):
    depths, dims = _CONFIGS[key]

    def build(model_name=f"convnext_{key}", include_top=True, include_preprocessing=True, weights="imagenet",
              input_tensor=None, input_shape=None, pooling=None, classes=1000, classifier_activation="softmax"):
        return ConvNeXt(depths, dims, drop_path_rate=0.0, layer_scale_init_value=1e-6, default_size=224,
                        model_name=model_name, include_preprocessing=include_preprocessing,
                        include_top=include_top, weights=weights, input_tensor=input_tensor,
                        input_shape=input_shape, pooling=pooling, classes=classes,
                        classifier_activation=classifier_activation)
    name = {"xlarge": "XLarge"}.get(key, key.capitalize())
    build.__name__ = build.__qualname__ = f"ConvNeXt{name}"
    build.__doc__ = (f"ConvNeXt{name}: stages of {depths} blocks, {dims} channels; inputs are pixels in [0, 255] "
                     "(the model normalizes them).")
    return build


ConvNeXtTiny, ConvNeXtSmall, ConvNeXtBase, ConvNeXtLarge, ConvNeXtXLarge = (
    _variant(k) for k in ("tiny", "small", "base", "large", "xlarge"))


def preprocess_input(x, data_format=None):
    """The identity: ConvNeXt models normalize their inputs themselves."""
    return x


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
