"""keras.preprocessing (Keras 2.15): the dataset-from-directory functions, and the legacy `image` and `sequence`
modules' helpers that programs still import from here."""
from . import image, sequence, text  # noqa: F401
from .._dataset_utils import image_dataset_from_directory, text_dataset_from_directory  # noqa: F401
from .._utils_more import timeseries_dataset_from_array  # noqa: F401
