"""keras.preprocessing.image: the image array helpers (the legacy ImageDataGenerator is not in Kiln)."""
from .._image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: F401
