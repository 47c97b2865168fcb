"""kiln.keras.saving (tf.keras.saving): registering custom classes, serializing objects, and the .keras format."""
from .._serialization import (register_keras_serializable, get_registered_name, get_registered_object,  # noqa: F401
                              get_custom_objects, custom_object_scope, CustomObjectScope, serialize_keras_object,
                              deserialize_keras_object)
from ..models import load_model, save_model  # noqa: F401

__all__ = ["register_keras_serializable", "get_registered_name", "get_registered_object", "get_custom_objects",
           "custom_object_scope", "CustomObjectScope", "serialize_keras_object", "deserialize_keras_object",
           "load_model", "save_model"]
