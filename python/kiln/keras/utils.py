"""kiln.keras.utils (tf.keras.utils): to_categorical and the progress bar fit prints."""
import numpy as np

from ._progbar import Progbar  # noqa: F401


def to_categorical(y, num_classes=None, dtype="float32"):
    """One-hot rows for integer class labels (a NumPy array, as Keras')."""
    y = np.asarray(y, dtype="int64")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = shape[:-1]
    y = y.reshape(-1)
    if num_classes is None:
        num_classes = int(y.max()) + 1 if y.size else 0
    out = np.zeros((y.shape[0], num_classes), dtype=dtype)
    out[np.arange(y.shape[0]), y] = 1
    return out.reshape(shape + (num_classes,))


from ._serialization import (register_keras_serializable, get_registered_name, get_registered_object,  # noqa: E402,F401
                             get_custom_objects, custom_object_scope, CustomObjectScope, serialize_keras_object,
                             deserialize_keras_object)
