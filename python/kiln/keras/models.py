"""kiln.keras.models (tf.keras.models): the model classes, and loading and saving whole models."""
import os

from ._model import Model  # noqa: F401
from ._sequential import Sequential  # noqa: F401
from . import _saving_lib


def save_model(model, filepath, overwrite=True, save_format=None, **kwargs):
    return model.save(filepath, overwrite=overwrite, save_format=save_format, **kwargs)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True, **kwargs):  # noqa: A002 - Keras' name
    """A model from a `.keras` file (Keras v3's zip), a Keras 2 `.h5` file or a directory Model.save wrote,
    compiled again when it was saved compiled (compile=False skips that). safe_mode=False allows Lambda layers
    holding Python lambdas."""
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise OSError(f"No file or directory found at {filepath}")
    if filepath.endswith(".keras"):
        return _saving_lib.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)
    if filepath.endswith((".h5", ".hdf5")):
        return _saving_lib.load_legacy_h5_model(filepath, custom_objects=custom_objects, compile=compile)
    # A directory Model.save wrote (a SavedModel with the Keras files beside it).
    return _saving_lib.load_model(filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode)


def model_from_json(json_string, custom_objects=None):
    """The (uncompiled, freshly initialized) model a Model.to_json() string describes."""
    return _saving_lib.model_from_json(json_string, custom_objects)


def model_from_yaml(yaml_string, custom_objects=None):
    """Removed from Keras 2 (YAML could run arbitrary code); raises as there."""
    raise RuntimeError("Method `model_from_yaml()` has been removed due to security risk of arbitrary code "
                       "execution. Please use `Model.to_json()` and `model_from_json()` instead.")


def model_from_config(config, custom_objects=None):
    return _saving_lib.deserialize_model(config, custom_objects)


def clone_model(model, input_tensors=None, clone_function=None):
    """A new model of the same architecture with fresh weights (from the model's config)."""
    if input_tensors is not None or clone_function is not None:
        raise NotImplementedError("kiln.keras.models.clone_model: input_tensors and clone_function are not supported")
    from . import layers as _layers
    from ._serialization import serialize_keras_object
    config = serialize_keras_object(model)
    config.pop("compile_config", None)
    return _layers.deserialize(config)
from ._sam import experimental  # noqa: E402,F401
