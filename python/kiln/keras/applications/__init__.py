"""tf.keras.applications (Keras 2.15): image classification models with Keras' architectures, layer names and
weight order. weights=None builds the model randomly initialized; a path loads a Keras weights file (.h5,
.weights.h5); "imagenet" reads Keras' file from its cache (Kiln downloads nothing)."""
from . import (densenet, efficientnet, imagenet_utils, inception_resnet_v2, inception_v3, mobilenet,  # noqa: F401
               mobilenet_v2, mobilenet_v3, resnet, resnet50, resnet_v2, vgg16, vgg19, xception)
from .densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from .efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3,  # noqa: F401
                           EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7)
from .inception_resnet_v2 import InceptionResNetV2  # noqa: F401
from .inception_v3 import InceptionV3  # noqa: F401
from .mobilenet import MobileNet  # noqa: F401
from .mobilenet_v2 import MobileNetV2  # noqa: F401
from .mobilenet_v3 import MobileNetV3Large, MobileNetV3Small  # noqa: F401
from .resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from .resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401
from .vgg16 import VGG16  # noqa: F401
from .vgg19 import VGG19  # noqa: F401
from .xception import Xception  # noqa: F401

__all__ = ["DenseNet121", "DenseNet169", "DenseNet201", "EfficientNetB0", "EfficientNetB1", "EfficientNetB2",
           "EfficientNetB3", "EfficientNetB4", "EfficientNetB5", "EfficientNetB6", "EfficientNetB7",
           "InceptionResNetV2", "InceptionV3", "MobileNet", "MobileNetV2", "MobileNetV3Large", "MobileNetV3Small",
           "ResNet50", "ResNet101", "ResNet152", "ResNet50V2", "ResNet101V2", "ResNet152V2", "VGG16", "VGG19",
           "Xception", "densenet", "efficientnet", "imagenet_utils", "inception_resnet_v2", "inception_v3",
           "mobilenet", "mobilenet_v2", "mobilenet_v3", "resnet", "resnet50", "resnet_v2", "vgg16", "vgg19",
           "xception"]
