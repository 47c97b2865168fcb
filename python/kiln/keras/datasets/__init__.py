"""kiln.keras.datasets (tf.keras.datasets): mnist, fashion_mnist."""
from . import fashion_mnist, mnist  # noqa: F401
