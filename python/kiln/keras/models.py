"""kiln.keras.models (tf.keras.models)."""
from ._model import Model, Sequential  # noqa: F401
