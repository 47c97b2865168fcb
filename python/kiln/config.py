"""kiln.config (tf.config)."""
from . import _C


def run_functions_eagerly(run_eagerly):
    _C.run_functions_eagerly(bool(run_eagerly))


def functions_run_eagerly():
    return _C.functions_run_eagerly()
