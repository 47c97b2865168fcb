"""kiln.config (tf.config): eager functions, devices, threading, determinism, graph optimizer switches.

Kiln runs on one CPU device: the physical device list names it alone (the logical list, the logical
CPUs it may be split into, which all run on it), and GPU requests (tf.device) run on it with a warning."""
import collections as _collections
import types as _types

from . import _C
from . import _config_optimizer


optimizer = _types.SimpleNamespace(
    set_experimental_options=_config_optimizer.set_experimental_options,
    get_experimental_options=_config_optimizer.get_experimental_options,
    set_jit=_config_optimizer.set_jit, get_jit=_config_optimizer.get_jit)


def run_functions_eagerly(run_eagerly):
    _C.run_functions_eagerly(bool(run_eagerly))


def functions_run_eagerly():
    return _C.functions_run_eagerly()


# ---- devices ---------------------------------------------------------------------------

PhysicalDevice = _collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = _collections.namedtuple("LogicalDevice", ["name", "device_type"])

_CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
_LOGICAL_CPU = LogicalDevice("/device:CPU:0", "CPU")


def _matches(device_type, kind):
    return device_type is None or str(device_type).upper() == kind


def list_physical_devices(device_type=None):
    return [_CPU] if _matches(device_type, "CPU") else []


def list_logical_devices(device_type=None):
    """The CPU, or the logical CPUs set_logical_device_configuration split it into (all run on the one CPU)."""
    if not _matches(device_type, "CPU"):
        return []
    if _cpu_configuration[0] is None:
        return [_LOGICAL_CPU]
    return [LogicalDevice(f"/device:CPU:{i}", "CPU") for i in range(len(_cpu_configuration[0]))]


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Only the CPU can be visible; hiding it (an empty list for 'CPU') is refused."""
    devices = devices if isinstance(devices, (list, tuple)) else [devices]
    for d in devices:
        if d != _CPU:
            raise ValueError(f"Unrecognized device: {d!r}")
    if not devices and _matches(device_type, "CPU") and device_type is not None:
        raise ValueError("Kiln cannot hide its only device, the CPU")


class LogicalDeviceConfiguration(
        _collections.namedtuple("LogicalDeviceConfiguration",
                                ["memory_limit", "experimental_priority", "experimental_device_ordinal"])):
    """A logical device's configuration (TF's fields; a CPU takes none of them)."""

    def __new__(cls, memory_limit=None, experimental_priority=None, experimental_device_ordinal=None):
        return super().__new__(cls, memory_limit, experimental_priority, experimental_device_ordinal)


_cpu_configuration = [None]  # the logical CPUs' configurations, once set


def get_logical_device_configuration(device):
    _check_physical(device)
    return None if _cpu_configuration[0] is None else list(_cpu_configuration[0])


def set_logical_device_configuration(device, logical_devices):
    """Splits the CPU into len(logical_devices) logical CPUs (/device:CPU:0, 1, ...), as TF does for
    distribution strategies on one machine; they share the one CPU. As TF, a CPU takes no memory limit, and
    a configuration, once set, can be set again only to the same."""
    _check_physical(device)
    configs = list(logical_devices) if logical_devices is not None else None
    for c in configs or ():
        if not isinstance(c, LogicalDeviceConfiguration):
            raise ValueError(f"Invalid logical device configuration: {c!r}")
        for field, label in (("memory_limit", "memory limit"), ("experimental_priority", "experimental_priority"),
                             ("experimental_device_ordinal", "experimental_device_ordinal")):
            if getattr(c, field) is not None:
                raise ValueError(f"Setting {label} on CPU virtual devices is currently not supported")
    if _cpu_configuration[0] is not None and configs != _cpu_configuration[0]:
        raise RuntimeError("Virtual devices cannot be modified after being initialized")
    _cpu_configuration[0] = configs or None


def _check_physical(device):
    if device != _CPU:
        raise ValueError(f"Unrecognized device: {device!r}")


def set_soft_device_placement(enabled):
    """Kiln always places ops on the CPU (soft placement, in effect, is always on)."""


def get_soft_device_placement():
    return True


# ---- threading -------------------------------------------------------------------------

_threads = {"inter": 0}


def _set_intra_op_parallelism_threads(num_threads):
    """The engine's kernels use at most num_threads threads (0: the machine's choice). Unlike TF,
    this may be changed after ops have run; it holds for ops started from the calling thread."""
    _C.set_intra_op_parallelism_threads(int(num_threads))


def _get_intra_op_parallelism_threads():
    return _C.get_intra_op_parallelism_threads()


def _set_inter_op_parallelism_threads(num_threads):
    """Recorded for get_inter_op_parallelism_threads: Kiln runs independent ops one after another
    (in program order), so there is no inter-op pool to size."""
    n = int(num_threads)
    if n < 0:
        raise ValueError(f"num_threads must not be negative, got {n}")
    _threads["inter"] = n


def _get_inter_op_parallelism_threads():
    return _threads["inter"]


threading = _types.SimpleNamespace(
    set_intra_op_parallelism_threads=_set_intra_op_parallelism_threads,
    get_intra_op_parallelism_threads=_get_intra_op_parallelism_threads,
    set_inter_op_parallelism_threads=_set_inter_op_parallelism_threads,
    get_inter_op_parallelism_threads=_get_inter_op_parallelism_threads)


# ---- experimental ----------------------------------------------------------------------

_determinism = [False]


def _enable_op_determinism():
    """Kiln's CPU kernels give the same results run to run for a fixed thread count, so this records
    the request (is_op_determinism_enabled) and changes nothing else."""
    _determinism[0] = True


def _disable_op_determinism():
    _determinism[0] = False


def _is_op_determinism_enabled():
    return _determinism[0]


def _set_memory_growth(device, enable):
    if getattr(device, "device_type", None) != "GPU":
        raise ValueError("Cannot set memory growth on non-GPU devices")


def _get_memory_growth(device):
    raise ValueError("Cannot get memory growth on non-GPU devices")


experimental = _types.SimpleNamespace(
    enable_op_determinism=_enable_op_determinism,
    disable_op_determinism=_disable_op_determinism,
    is_op_determinism_enabled=_is_op_determinism_enabled,
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    get_visible_devices=get_visible_devices,
    set_visible_devices=set_visible_devices,
    set_memory_growth=_set_memory_growth,
    VirtualDeviceConfiguration=LogicalDeviceConfiguration,
    set_virtual_device_configuration=set_logical_device_configuration,
    get_virtual_device_configuration=get_logical_device_configuration,
    get_memory_growth=_get_memory_growth,
    enable_tensor_float_32_execution=lambda enabled: None,
    tensor_float_32_execution_enabled=lambda: False)
