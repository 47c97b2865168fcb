"""kiln.keras.activations: activations by name, as Keras' `activation=` arguments take them."""
from .. import _C


def linear(x):
    return x


def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    if alpha == 0 and max_value is None and threshold == 0:
        return _C.relu(x)
    from .layers import _leaky_relu
    return _leaky_relu(x, alpha, max_value, threshold)


def sigmoid(x):
    return _C.sigmoid(x)


def tanh(x):
    return _C.tanh(x)


def softmax(x, axis=-1):
    return _C.softmax(x, axis)


def log_softmax(x, axis=-1):
    return _C.log_softmax(x, axis)


def exponential(x):
    return _C.exp(x)


def elu(x, alpha=1.0):
    if alpha == 1.0:
        return _C.elu(x)
    return _C.where(_C.greater(x, 0), x, _C.elu(x) * alpha)


def selu(x):
    return _C.selu(x)


def softplus(x):
    return _C.softplus(x)


def softsign(x):
    return _C.softsign(x)


def gelu(x, approximate=False):
    return _C.gelu(x, bool(approximate))


def swish(x):
    return _C.silu(x)


def hard_sigmoid(x):
    """Keras 2's piecewise-linear sigmoid: clip(0.2 x + 0.5, 0, 1)."""
    return _C.clip(_C.add(_C.multiply(x, 0.2), 0.5), 0.0, 1.0)


def mish(x):
    """x tanh(softplus(x)) (Misra, 2019)."""
    return _C.multiply(x, _C.tanh(_C.softplus(x)))


_BY_NAME = {"linear": linear, "relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
            "log_softmax": log_softmax, "exponential": exponential, "elu": elu, "selu": selu,
            "softplus": softplus, "softsign": softsign, "gelu": gelu, "swish": swish, "silu": swish,
            "hard_sigmoid": hard_sigmoid, "mish": mish}


def get(identifier):
    """None or "linear": the identity; a name; or any callable, returned as it is."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier)
        if fn is None:
            # A custom activation by name: custom_object_scope, custom_objects or the registry (Keras' rule).
            from ._serialization import get_registered_object
            fn = get_registered_object(identifier)
        if fn is None:
            raise ValueError(f"Unknown activation function: '{identifier}'. Known: {', '.join(sorted(_BY_NAME))} "
                             "(or pass a callable)")
        return fn
    if callable(identifier):
        return identifier
    raise TypeError(f"Could not interpret activation function identifier: {identifier!r}")


def serialize(activation):
    for name, fn in _BY_NAME.items():
        if fn is activation:
            return name
    return getattr(activation, "__name__", repr(activation))


def deserialize(name, custom_objects=None):
    """The activation function of a name (or a serialized dict's class_name), custom_objects first."""
    if isinstance(name, dict):
        name = name.get("config", name.get("class_name"))
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    fn = _BY_NAME.get(name)
    if fn is None:
        raise ValueError(f"Unknown activation function '{name}' cannot be deserialized.")
    return fn
