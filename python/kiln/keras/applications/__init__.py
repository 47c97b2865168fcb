"""tf.keras.applications (Keras 2.15): image classification models with Keras' architectures, layer names and
weight order. weights=None builds the model randomly initialized; a path loads a Keras weights file (.h5,
.weights.h5); "imagenet" reads Keras' file from its cache (Kiln downloads nothing)."""
from . import (convnext, densenet, efficientnet, efficientnet_v2, imagenet_utils, inception_resnet_v2,  # noqa: F401
               inception_v3, mobilenet, mobilenet_v2, mobilenet_v3, nasnet, regnet, resnet, resnet50, resnet_rs,
               resnet_v2, vgg16, vgg19, xception)
from .convnext import ConvNeXtBase, ConvNeXtLarge, ConvNeXtSmall, ConvNeXtTiny, ConvNeXtXLarge  # noqa: F401
from .densenet import DenseNet121, DenseNet169, DenseNet201  # noqa: F401
from .efficientnet import (EfficientNetB0, EfficientNetB1, EfficientNetB2, EfficientNetB3,  # noqa: F401
                           EfficientNetB4, EfficientNetB5, EfficientNetB6, EfficientNetB7)
from .efficientnet_v2 import (EfficientNetV2B0, EfficientNetV2B1, EfficientNetV2B2, EfficientNetV2B3,  # noqa: F401
                              EfficientNetV2L, EfficientNetV2M, EfficientNetV2S)
from .inception_resnet_v2 import InceptionResNetV2  # noqa: F401
from .inception_v3 import InceptionV3  # noqa: F401
from .mobilenet import MobileNet  # noqa: F401
from .mobilenet_v2 import MobileNetV2  # noqa: F401
from .mobilenet_v3 import MobileNetV3Large, MobileNetV3Small  # noqa: F401
from .nasnet import NASNetLarge, NASNetMobile  # noqa: F401
from .regnet import (RegNetX002, RegNetX004, RegNetX006, RegNetX008, RegNetX016, RegNetX032,  # noqa: F401
                     RegNetX040, RegNetX064, RegNetX080, RegNetX120, RegNetX160, RegNetX320,
                     RegNetY002, RegNetY004, RegNetY006, RegNetY008, RegNetY016, RegNetY032,
                     RegNetY040, RegNetY064, RegNetY080, RegNetY120, RegNetY160, RegNetY320)
from .resnet import ResNet50, ResNet101, ResNet152  # noqa: F401
from .resnet_rs import (ResNetRS50, ResNetRS101, ResNetRS152, ResNetRS200, ResNetRS270,  # noqa: F401
                        ResNetRS350, ResNetRS420)
from .resnet_v2 import ResNet50V2, ResNet101V2, ResNet152V2  # noqa: F401
from .vgg16 import VGG16  # noqa: F401
from .vgg19 import VGG19  # noqa: F401
from .xception import Xception  # noqa: F401

__all__ = sorted(name for name in globals() if not name.startswith("_"))
