"""kiln.linalg (tf.linalg): what the engine has."""
from ._ops import matmul, transpose  # noqa: F401
