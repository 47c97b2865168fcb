"""tf.device, Tensor.device, tf.executing_eagerly and tf.get_logger. Kiln has one device, the
CPU: a device scope is checked and remembered, and a GPU one runs on the CPU with a warning (as
TF's soft placement does on a machine without that GPU)."""
import contextlib
import logging
import re

from . import _C

_CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_FIELDS = {"job", "replica", "task", "device", "cpu", "gpu", "tpu"}
_log = logging.getLogger("kiln")
_warned = set()
_scope = []


def get_logger():
    """The logger Kiln's warnings go to (TF's is 'tensorflow'): tf.get_logger().setLevel('ERROR')
    silences them."""
    return _log


def executing_eagerly():
    """False while a kiln.function is being traced, else True (run_functions_eagerly included)."""
    return not _C.is_tracing()


def _device_type(spec):
    """The device type a spec names ('CPU', 'GPU', 'TPU', or None), or ValueError for a bad spec."""
    kind = None
    for part in spec.strip("/").split("/"):
        if not part:
            continue
        name, _, rest = part.partition(":")
        key = name.lower()
        if key == "device":
            kind_part = rest.split(":")[0]
            if kind_part:
                kind = kind_part.upper()
        elif key in ("cpu", "gpu", "tpu"):
            kind = key.upper()
        elif key not in _FIELDS or (key in ("replica", "task") and not rest.isdigit()):
            raise ValueError(f"Unknown attribute: '{name}' in '{spec}'")
        if key in ("cpu", "gpu", "tpu") and rest and not re.fullmatch(r"\d+|\*", rest):
            raise ValueError(f"Multiple device types are not allowed while parsing '{spec}'")
    return kind


@contextlib.contextmanager
def device(device_name):
    """Ops in the block run on the CPU; a GPU or TPU name is accepted with one warning."""
    if hasattr(device_name, "to_string"):  # a tf.DeviceSpec
        device_name = device_name.to_string()
    if device_name is not None and not isinstance(device_name, str):
        if callable(device_name):
            raise RuntimeError("tf.device does not support functions when eager execution is enabled.")
        device_name = str(device_name)
    kind = _device_type(device_name) if device_name else None
    if kind not in (None, "CPU") and kind not in _warned:
        _warned.add(kind)
        _log.warning("kiln.device(%r): Kiln runs on the CPU only; ops in this block run there.", device_name)
    _scope.append(device_name)
    try:
        yield
    finally:
        _scope.pop()


def _tensor_device(self):
    return "" if self._is_symbolic else _CPU_DEVICE


_C.Tensor.device = property(_tensor_device)
_C.Tensor.backing_device = property(_tensor_device)
_C.Variable.device = property(lambda self: _CPU_DEVICE)
