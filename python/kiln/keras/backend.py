"""kiln.keras.backend: Keras' unique layer names, epsilon and floatx."""
import collections
import re
import threading

_lock = threading.Lock()
_name_counts = collections.defaultdict(int)
_EPSILON = 1e-7
_FLOATX = "float32"


def to_snake_case(name):
    """Keras' class name -> layer name: "Conv2D" -> "conv2d", "MaxPooling2D" -> "max_pooling2d",
    "ReLU" -> "re_lu"."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    insecure = re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()
    return insecure if insecure[0] != "_" else "private" + insecure


def unique_object_name(name, zero_based=True):
    """"dense", then "dense_1", "dense_2", ... (zero_based=False: "input_1", "input_2", ...). One counter per
    name for the whole process, as Keras' (clear_session() restarts them)."""
    with _lock:
        n = _name_counts[name]
        _name_counts[name] += 1
    if zero_based:
        return name if n == 0 else f"{name}_{n}"
    return f"{name}_{n + 1}"


def clear_session():
    """Restarts Keras' layer-name counters: the next Dense is "dense" again."""
    with _lock:
        _name_counts.clear()


def epsilon():
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = float(value)


def floatx():
    return _FLOATX


def set_floatx(value):
    global _FLOATX
    if value not in ("float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value!r} (kiln supports 'float32' and 'float64')")
    _FLOATX = value


def get_value(x):
    """The value of a variable or tensor as NumPy (a Python number stays as it is)."""
    if hasattr(x, "numpy"):
        return x.numpy()
    return x


def set_value(x, value):
    """Assigns `value` to the variable x (an optimizer's learning rate, ...)."""
    if not hasattr(x, "assign"):
        raise TypeError(f"set_value needs a variable, got {type(x).__name__} ({x!r})")
    import numpy as np
    x.assign(np.asarray(value, dtype=x.dtype.as_numpy_dtype))
