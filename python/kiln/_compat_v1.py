"""tf.compat.v1, thinly: the few TF 1 calls that TF 2 programs still make (logging verbosity, enabling eager
execution and v2 behaviour, which are Kiln's only mode, set_random_seed). The rest of TF 1's graph-and-session
API (placeholders, Session, collections, v1 layers) is not in Kiln: asking for it raises an AttributeError
that says so."""
import logging as _logging
import types as _types

from ._device import executing_eagerly, get_logger  # noqa: F401

DEBUG, INFO, WARN, ERROR, FATAL = _logging.DEBUG, _logging.INFO, _logging.WARN, _logging.ERROR, _logging.FATAL


def _set_verbosity(v):
    get_logger().setLevel(v)


logging = _types.SimpleNamespace(
    DEBUG=DEBUG, INFO=INFO, WARN=WARN, ERROR=ERROR, FATAL=FATAL,
    set_verbosity=_set_verbosity, get_verbosity=lambda: get_logger().getEffectiveLevel(),
    debug=lambda msg, *args: get_logger().debug(msg, *args), info=lambda msg, *args: get_logger().info(msg, *args),
    warn=lambda msg, *args: get_logger().warning(msg, *args),
    warning=lambda msg, *args: get_logger().warning(msg, *args),
    error=lambda msg, *args: get_logger().error(msg, *args), fatal=lambda msg, *args: get_logger().critical(msg, *args))


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """Eager execution is Kiln's mode already."""


def enable_v2_behavior():
    """TF 2 behaviour is Kiln's only behaviour."""


def set_random_seed(seed):
    """tf.random.set_seed under its TF 1 name."""
    from .random import set_seed
    set_seed(seed)


def __getattr__(name):
    raise AttributeError(f"tf.compat.v1.{name} is not in Kiln: tf.compat.v1 holds only logging, "
                         "enable_eager_execution, enable_v2_behavior, executing_eagerly and set_random_seed "
                         "(TF 1's graph-and-session API is not part of Kiln)")
