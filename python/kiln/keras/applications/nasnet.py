"""tf.keras.applications.nasnet: NASNetMobile and NASNetLarge (Zoph et al., 2018): normal and reduction cells
found by architecture search (separable convolutions and poolings on the last two cells' outputs, added in pairs
and concatenated), with Keras' layer names ("normal_conv_1_0", "reduction_add_1_stem_1", ...) and weight files."""
import logging

from .. import backend, layers
from . import imagenet_utils


def _relu(x, name=None):
    return layers.Activation("relu", name=name)(x)


def _bn(x, name):
    return layers.BatchNormalization(axis=-1, momentum=0.9997, epsilon=1e-3, name=name)(x)


def _conv1x1(x, filters, name, strides=(1, 1)):
    return layers.Conv2D(filters, (1, 1), strides=strides, padding="same", use_bias=False, name=name,
                         kernel_initializer="he_normal")(x)


def _separable_conv_block(x, filters, kernel_size=(3, 3), strides=(1, 1), block_id=None):
    """Twice ReLU, separable convolution, batch normalization; the first strided with Keras' padding."""
    x = _relu(x)
    padding = "same"
    if strides == (2, 2):
        x = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(x, kernel_size),
                                 name=f"separable_conv_1_pad_{block_id}")(x)
        padding = "valid"
    x = layers.SeparableConv2D(filters, kernel_size, strides=strides, name=f"separable_conv_1_{block_id}",
                               padding=padding, use_bias=False, kernel_initializer="he_normal")(x)
    x = _relu(_bn(x, f"separable_conv_1_bn_{block_id}"))
    x = layers.SeparableConv2D(filters, kernel_size, name=f"separable_conv_2_{block_id}", padding="same",
                               use_bias=False, kernel_initializer="he_normal")(x)
    return _bn(x, f"separable_conv_2_bn_{block_id}")


def _adjust_block(p, ip, filters, block_id=None):
    """The previous cell's output p brought to ip's size (a factorized reduction) or to `filters` channels."""
    if p is None:
        return ip
    if p.shape[-2] != ip.shape[-2]:
        p = _relu(p, f"adjust_relu_1_{block_id}")
        p1 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_1_{block_id}")(p)
        p1 = layers.Conv2D(filters // 2, (1, 1), padding="same", use_bias=False, name=f"adjust_conv_1_{block_id}",
                           kernel_initializer="he_normal")(p1)
        # The second path is shifted by one pixel: pad at the bottom right, crop at the top left.
        p2 = layers.ZeroPadding2D(padding=((0, 1), (0, 1)))(p)
        p2 = layers.Cropping2D(cropping=((1, 0), (1, 0)))(p2)
        p2 = layers.AveragePooling2D((1, 1), strides=(2, 2), padding="valid", name=f"adjust_avg_pool_2_{block_id}")(p2)
        p2 = layers.Conv2D(filters // 2, (1, 1), padding="same", use_bias=False, name=f"adjust_conv_2_{block_id}",
                           kernel_initializer="he_normal")(p2)
        p = layers.concatenate([p1, p2], axis=-1)
        return _bn(p, f"adjust_bn_{block_id}")
    if p.shape[-1] != filters:
        p = _conv1x1(_relu(p), filters, f"adjust_conv_projection_{block_id}")
        return _bn(p, f"adjust_bn_{block_id}")
    return p


def _normal_a_cell(ip, p, filters, block_id=None):
    p = _adjust_block(p, ip, filters, block_id)
    h = _bn(_conv1x1(_relu(ip), filters, f"normal_conv_1_{block_id}"), f"normal_bn_1_{block_id}")
    x1 = layers.add([_separable_conv_block(h, filters, (5, 5), block_id=f"normal_left1_{block_id}"),
                     _separable_conv_block(p, filters, block_id=f"normal_right1_{block_id}")],
                    name=f"normal_add_1_{block_id}")
    x2 = layers.add([_separable_conv_block(p, filters, (5, 5), block_id=f"normal_left2_{block_id}"),
                     _separable_conv_block(p, filters, (3, 3), block_id=f"normal_right2_{block_id}")],
                    name=f"normal_add_2_{block_id}")
    x3 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"normal_left3_{block_id}")(h)
    x3 = layers.add([x3, p], name=f"normal_add_3_{block_id}")
    x4 = layers.add([layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                             name=f"normal_left4_{block_id}")(p),
                     layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same",
                                             name=f"normal_right4_{block_id}")(p)], name=f"normal_add_4_{block_id}")
    x5 = _separable_conv_block(h, filters, block_id=f"normal_left5_{block_id}")
    x5 = layers.add([x5, h], name=f"normal_add_5_{block_id}")
    x = layers.concatenate([p, x1, x2, x3, x4, x5], axis=-1, name=f"normal_concat_{block_id}")
    return x, ip


def _reduction_a_cell(ip, p, filters, block_id=None):
    p = _adjust_block(p, ip, filters, block_id)
    h = _bn(_conv1x1(_relu(ip), filters, f"reduction_conv_1_{block_id}"), f"reduction_bn_1_{block_id}")
    h3 = layers.ZeroPadding2D(padding=imagenet_utils.correct_pad(h, 3), name=f"reduction_pad_1_{block_id}")(h)
    x1 = layers.add([_separable_conv_block(h, filters, (5, 5), strides=(2, 2), block_id=f"reduction_left1_{block_id}"),
                     _separable_conv_block(p, filters, (7, 7), strides=(2, 2),
                                           block_id=f"reduction_right1_{block_id}")],
                    name=f"reduction_add_1_{block_id}")
    x2 = layers.add([layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                         name=f"reduction_left2_{block_id}")(h3),
                     _separable_conv_block(p, filters, (7, 7), strides=(2, 2),
                                           block_id=f"reduction_right2_{block_id}")],
                    name=f"reduction_add_2_{block_id}")
    x3 = layers.add([layers.AveragePooling2D((3, 3), strides=(2, 2), padding="valid",
                                             name=f"reduction_left3_{block_id}")(h3),
                     _separable_conv_block(p, filters, (5, 5), strides=(2, 2),
                                           block_id=f"reduction_right3_{block_id}")],
                    name=f"reduction_add3_{block_id}")
    x4 = layers.AveragePooling2D((3, 3), strides=(1, 1), padding="same", name=f"reduction_left4_{block_id}")(x1)
    x4 = layers.add([x2, x4])
    x5 = layers.add([_separable_conv_block(x1, filters, (3, 3), block_id=f"reduction_left4_{block_id}"),
                     layers.MaxPooling2D((3, 3), strides=(2, 2), padding="valid",
                                         name=f"reduction_right5_{block_id}")(h3)],
                    name=f"reduction_add4_{block_id}")
    x = layers.concatenate([x2, x3, x4, x5], axis=-1, name=f"reduction_concat_{block_id}")
    return x, ip


def NASNet(input_shape=None, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
           filter_multiplier=2, include_top=True, weights="imagenet", input_tensor=None, pooling=None, classes=1000,
           default_size=None, classifier_activation="softmax"):
    """A NASNet-A (Keras' module-level builder): penultimate_filters channels before the top, num_blocks normal
    cells between the reductions."""
    from .._model import Model
    imagenet_utils.check_weights_argument(weights, include_top, classes)
    if isinstance(input_shape, tuple) and None in input_shape and weights == "imagenet":
        raise ValueError("When specifying the input shape of a NASNet and loading `ImageNet` weights, the "
                         f"input_shape argument must be static (no None entries). Got: `input_shape={input_shape}`.")
    default_size = 331 if default_size is None else default_size
    input_shape = imagenet_utils.obtain_input_shape(input_shape, default_size=default_size, min_size=32,
                                                    data_format=backend.image_data_format(),
                                                    require_flatten=include_top, weights=weights)
    old_data_format = None
    if backend.image_data_format() != "channels_last":
        logging.warning("The NASNet family of models is only available for the input data format \"channels_last\" "
                        "(width, height, channels). However your settings specify the default data format "
                        "\"channels_first\" (channels, width, height). You should set "
                        "`image_data_format=\"channels_last\"` in your Keras config located at "
                        "~/.keras/keras.json. The model being returned right now will expect inputs to follow the "
                        "\"channels_last\" data format.")
        backend.set_image_data_format("channels_last")
        old_data_format = "channels_first"
    try:
        if penultimate_filters % (24 * (filter_multiplier ** 2)) != 0:
            raise ValueError("For NASNet-A models, the `penultimate_filters` must be a multiple of 24 * "
                             f"(`filter_multiplier` ** 2). Current value: {penultimate_filters}")
        inputs = imagenet_utils.input_of(input_tensor, input_shape)
        filters = penultimate_filters // 24
        x = layers.Conv2D(stem_block_filters, (3, 3), strides=(2, 2), padding="valid", use_bias=False,
                          name="stem_conv1", kernel_initializer="he_normal")(inputs)
        x = _bn(x, "stem_bn1")
        x, p = _reduction_a_cell(x, None, filters // (filter_multiplier ** 2), block_id="stem_1")
        x, p = _reduction_a_cell(x, p, filters // filter_multiplier, block_id="stem_2")
        for stage in range(3):
            if stage:
                x, p0 = _reduction_a_cell(x, p, filters * filter_multiplier ** stage,
                                          block_id=f"reduce_{stage * num_blocks}")
                p = p if skip_reduction else p0
            for i in range(num_blocks):
                x, p = _normal_a_cell(x, p, filters * filter_multiplier ** stage,
                                      block_id=str(stage * num_blocks + i + (1 if stage else 0)))
        x = _relu(x)
        x = imagenet_utils.head(x, include_top, weights, pooling, classes, classifier_activation,
                                top_pool_name=None)
        model = Model(inputs, x, name="NASNet")
        if weights == "imagenet":
            files = {224: "nasnet_mobile", 331: "nasnet_large"}
            if default_size not in files:
                raise ValueError("ImageNet weights can only be loaded with NASNetLarge or NASNetMobile")
            imagenet_utils.load_weights(model, weights, files[default_size] + (".h5" if include_top else "_no_top.h5"))
        else:
            imagenet_utils.load_weights(model, weights, None)
    finally:
        if old_data_format:
            backend.set_image_data_format(old_data_format)
    return model


def NASNetMobile(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                 classes=1000, classifier_activation="softmax"):
    """NASNetMobile: 5,326,716 parameters with the top (Keras' table), 224 x 224 inputs by default."""
    return NASNet(input_shape, penultimate_filters=1056, num_blocks=4, stem_block_filters=32, skip_reduction=False,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=224, classifier_activation=classifier_activation)


def NASNetLarge(input_shape=None, include_top=True, weights="imagenet", input_tensor=None, pooling=None,
                classes=1000, classifier_activation="softmax"):
    """NASNetLarge: 88,949,818 parameters with the top (Keras' table), 331 x 331 inputs by default."""
    return NASNet(input_shape, penultimate_filters=4032, num_blocks=6, stem_block_filters=96, skip_reduction=True,
                  filter_multiplier=2, include_top=include_top, weights=weights, input_tensor=input_tensor,
                  pooling=pooling, classes=classes, default_size=331, classifier_activation=classifier_activation)


def preprocess_input(x, data_format=None):
    """NASNet's preprocessing: "tf" (pixels scaled to [-1, 1])."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="tf")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
