"""kiln.keras.utils (tf.keras.utils): to_categorical, the progress bar fit prints, image and sequence helpers,
the dataset-from-directory functions, set_random_seed, serialization."""
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
from ._image_utils import array_to_img, img_to_array, load_img, save_img  # noqa: E402,F401
from ._sequence_utils import Sequence, pad_sequences  # noqa: E402,F401
from ._dataset_utils import image_dataset_from_directory, text_dataset_from_directory  # noqa: E402,F401
from ._audio_dataset import audio_dataset_from_directory  # noqa: E402,F401
from ._file_utils import get_file  # noqa: E402,F401
from ._data_adapter import unpack_x_y_sample_weight  # noqa: E402,F401
from ._utils_more import (disable_interactive_logging, enable_interactive_logging, get_source_inputs,  # noqa: E402,F401
                          is_interactive_logging_enabled, pack_x_y_sample_weight, split_dataset,
                          timeseries_dataset_from_array, to_ordinal, warmstart_embedding_matrix)
from ._plot_model import model_to_dot, plot_model  # noqa: E402,F401
from ._utils_threads import GeneratorEnqueuer, OrderedEnqueuer, SequenceEnqueuer, TimedThread  # noqa: E402,F401


def _legacy_serialize(instance):
    """Keras 2's legacy format: {"class_name", "config"} (a function: its registered name or its name)."""
    from ._serialization import _GLOBAL_CUSTOM_NAMES
    if instance is None:
        return None
    if not hasattr(instance, "get_config"):
        return _GLOBAL_CUSTOM_NAMES.get(instance, getattr(instance, "__name__", instance))
    name = _GLOBAL_CUSTOM_NAMES.get(type(instance), type(instance).__name__)
    return {"class_name": name, "config": instance.get_config()}


class legacy:  # noqa: N801 - tf.keras.utils.legacy is a module in TF
    serialize_keras_object = staticmethod(_legacy_serialize)
    deserialize_keras_object = staticmethod(deserialize_keras_object)


def set_random_seed(seed):
    """Seeds Python's `random`, NumPy and Kiln's global generator at once (Keras 2.15)."""
    import random
    from .. import random as _random
    if not isinstance(seed, int):
        raise ValueError(f"Expected `seed` argument to be an integer. Received: seed={seed} (of type {type(seed)})")
    random.seed(seed)
    np.random.seed(seed)
    _random.set_seed(seed)


def normalize(x, axis=-1, order=2):
    """x divided by its L-`order` norm along `axis` (zero norms left as 1), as Keras' NumPy version."""
    x = np.asarray(x)
    norm = np.atleast_1d(np.linalg.norm(x, order, axis))
    norm[norm == 0] = 1
    return x / np.expand_dims(norm, axis)


from ._dataset_creator import DatasetCreator  # noqa: E402
from ._feature_space import FeatureSpace  # noqa: E402,F401
from ._sidecar_evaluator import SidecarEvaluator  # noqa: E402,F401
from ._steps_per_execution_tuner import StepsPerExecutionTuner  # noqa: E402,F401


class experimental:  # noqa: N801 - tf.keras.utils.experimental is a module in TF
    DatasetCreator = DatasetCreator

