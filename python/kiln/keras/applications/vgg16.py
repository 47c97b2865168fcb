"""tf.keras.applications.vgg16: VGG16 (Simonyan and Zisserman, 2014), with Keras' layer names (block{b}_conv{i},
block{b}_pool, fc1, fc2, predictions) so Keras' weight files load into it; vgg19 builds VGG19 with the same
code."""
from .. import layers
from .._model import Model
from . import imagenet_utils

_FILTERS = (64, 128, 256, 512, 512)


def vgg(convs_per_block, model_name, include_top, weights, input_tensor, input_shape, pooling, classes,
        classifier_activation="softmax", **kwargs):
    """Five blocks of 3x3 "same" ReLU convolutions, each closed by a 2x2 max pooling; then fc1 and fc2 (4096
    ReLU units) and predictions, or a global pooling."""
    if kwargs:
        raise ValueError(f"Unknown argument(s): {kwargs}")
    inputs = imagenet_utils.model_input(include_top, weights, input_tensor, input_shape, classes, 224, 32)
    x = inputs
    for block, (filters, count) in enumerate(zip(_FILTERS, convs_per_block), start=1):
        for i in range(1, count + 1):
            x = layers.Conv2D(filters, (3, 3), activation="relu", padding="same", name=f"block{block}_conv{i}")(x)
        x = layers.MaxPooling2D((2, 2), strides=(2, 2), name=f"block{block}_pool")(x)
    if not include_top:
        return imagenet_utils.classified_model(inputs, x, model_name, False, weights, pooling, classes,
                                               classifier_activation)
    x = layers.Flatten(name="flatten")(x)
    x = layers.Dense(4096, activation="relu", name="fc1")(x)
    x = layers.Dense(4096, activation="relu", name="fc2")(x)
    imagenet_utils.validate_activation(classifier_activation, weights)
    x = layers.Dense(classes, activation=classifier_activation, name="predictions")(x)
    model = Model(inputs, x, name=model_name)
    imagenet_utils.load_weights(model, weights, f"{model_name}_weights_tf_dim_ordering_tf_kernels.h5")
    return model


def VGG16(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax"):
    """VGG16: 138,357,544 parameters with the top, 14,714,688 without (Keras' table)."""
    return vgg((2, 2, 3, 3, 3), "vgg16", include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation)


def preprocess_input(x, data_format=None):
    """VGG's preprocessing: "caffe" (RGB to BGR, less the ImageNet means)."""
    return imagenet_utils.preprocess_input(x, data_format=data_format, mode="caffe")


def decode_predictions(preds, top=5):
    return imagenet_utils.decode_predictions(preds, top=top)
