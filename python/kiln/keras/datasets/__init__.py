"""kiln.keras.datasets (tf.keras.datasets): mnist."""
from . import mnist  # noqa: F401
