"""tf.nn.experimental."""
from ._nn_dropout import general_dropout, stateless_dropout  # noqa: F401
