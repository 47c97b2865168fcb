"""kiln.types (tf.types): the types of TF's values, for annotations and isinstance checks."""
from . import experimental  # noqa: F401
