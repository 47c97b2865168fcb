"""keras.preprocessing.image: the image array helpers, and the legacy ImageDataGenerator with its iterators and
array transforms."""
from .._image_utils import array_to_img, img_to_array, load_img, save_img, smart_resize  # noqa: F401
from .._dataframe_iterator import DataFrameIterator  # noqa: F401
from .._image_data_generator import (DirectoryIterator, ImageDataGenerator, Iterator,  # noqa: F401
                                     NumpyArrayIterator)
from .._image_transforms import (apply_affine_transform, apply_brightness_shift, apply_channel_shift,  # noqa: F401
                                 random_brightness, random_channel_shift, random_rotation, random_shear,
                                 random_shift, random_zoom)
