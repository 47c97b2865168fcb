"""tf.keras.applications.vgg19: VGG19, the VGG16 architecture with four convolutions in blocks 3 to 5."""
from .vgg16 import decode_predictions, preprocess_input, vgg  # noqa: F401


def VGG19(include_top=True, weights="imagenet", input_tensor=None, input_shape=None, pooling=None, classes=1000,
          classifier_activation="softmax"):
    """VGG19: 143,667,240 parameters with the top, 20,024,384 without (Keras' table)."""
    return vgg((2, 2, 4, 4, 4), "vgg19", include_top, weights, input_tensor, input_shape, pooling, classes,
               classifier_activation)
