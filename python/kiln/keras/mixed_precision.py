"""kiln.keras.mixed_precision (tf.keras.mixed_precision, Keras 2.15): dtype policies, AutoCastVariable, loss scaling.

A "mixed_bfloat16" or "mixed_float16" policy computes in bfloat16 / float16 and keeps variables in float32:
layers cast their floating inputs to the compute dtype and read their weights as it (AutoCastVariable, see
`_mixed_precision_autocast.py`), so their outputs are in the compute dtype. bfloat16 MatMul and Conv2D (and
their gradients) run on oneDNN's bf16 kernels, accumulating in float32, where the CPU has AVX512_BF16 or AMX;
elsewhere they compute in float32 and round once (a warning says so when a mixed_bfloat16 policy is made).
float16 always computes in float32 and rounds once per op on the CPU (TF's CPU kernels are no faster), and
Keras' "no GPU" warning is logged for it."""
import logging
import warnings

from .. import _C
from .. import dtypes as _dtypes
from ._mixed_precision_autocast import AutoCastVariable, enable_auto_cast_variables  # noqa: F401
from ._mixed_precision_loss_scale import LossScaleOptimizer

_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}
_checked = set()


def bfloat16_kernels_available():
    """Whether bfloat16 matmul and convolution run on the CPU's bf16 instructions (AVX512_BF16 or AMX)."""
    return bool(_C._bf16_kernels_available())


def _check_device(name):
    """Keras' device compatibility check, once per policy name: mixed_float16 has no fast device here (Keras'
    warning, to the kiln logger); mixed_bfloat16 warns when the CPU lacks bf16 instructions."""
    if name in _checked:
        return
    _checked.add(name)
    if name == "mixed_float16":
        logging.getLogger("kiln").warning(
            "Mixed precision compatibility check (mixed_float16): WARNING\nThe dtype policy mixed_float16 may run "
            "slowly because this machine does not have a GPU. Only Nvidia GPUs with compute capability of at least "
            "7.0 run quickly with mixed_float16.\nIf you will use compatible GPU(s) not attached to this host, e.g. "
            "by running a multi-worker model, you can ignore this warning. This message will only be logged once")
    elif name == "mixed_bfloat16" and not bfloat16_kernels_available():
        warnings.warn("Mixed precision policy 'mixed_bfloat16': this CPU has neither AVX512_BF16 nor AMX, so "
                      "bfloat16 matmuls and convolutions compute in float32 and round once (correct, but not "
                      "faster than float32).", stacklevel=3)


class Policy:
    """A layer dtype policy: a dtype name ("float32", "float64", ...; compute and variable dtype alike),
    "mixed_float16" or "mixed_bfloat16" (float16 / bfloat16 compute dtype, float32 variables)."""

    def __init__(self, name):
        if isinstance(name, _dtypes.DType):
            raise TypeError(f"'name' must be a string, not a DType. Instead, pass DType.name. Received: "
                            f"name={name.name}")
        if not isinstance(name, str):
            raise TypeError(f"'name' must be a string, but got: {name}")
        self._name = name
        self._compute_dtype, self._variable_dtype = self._parse_name(name)
        if name in _MIXED:
            _check_device(name)

    @staticmethod
    def _parse_name(name):
        if name.endswith("_float32_vars"):
            message = "Policies ending in '_float32_vars' have been removed from TensorFlow."
            if name in ("infer_float32_vars", "infer_with_float32_vars"):
                message += " Please use the 'mixed_float16' or 'mixed_bfloat16' policy instead."
            elif name == "float16_with_float32_vars":
                message += " Please use the 'mixed_float16' policy instead."
            elif name == "bfloat16_with_float32_vars":
                message += " Please use the 'mixed_bfloat16' policy instead."
            raise ValueError(message + f" Got policy name: '{name}'")
        if name in _MIXED:
            return _MIXED[name], "float32"
        if name == "_infer":
            return None, None
        try:
            dtype = _dtypes.as_dtype(name).name
        except (TypeError, ValueError, KeyError):
            raise ValueError(f"Cannot convert value {name} to a mixed precision Policy. Valid policies include "
                             "'mixed_float16', 'mixed_bfloat16', and the name of any dtype such as 'float32'."
                             ) from None
        return dtype, dtype

    @property
    def name(self):
        return self._name

    @property
    def variable_dtype(self):
        """The dtype of the variables layers make (float32 under the mixed policies)."""
        return self._variable_dtype

    @property
    def compute_dtype(self):
        """The dtype layers compute in and output."""
        return self._compute_dtype

    def __repr__(self):
        return f'<Policy "{self._name}">'

    def __eq__(self, other):
        return isinstance(other, Policy) and other.name == self.name

    def __hash__(self):
        return hash(self._name)

    def get_config(self):
        return {"name": self._name}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        config.pop("loss_scale", None)  # TF <= 2.3 policies had one; Keras drops it
        return cls(**config)


_global_policy = None


def global_policy():
    """The policy layers get when their dtype is not given: set_global_policy's, else floatx()'s."""
    if _global_policy is not None:
        return _global_policy
    from . import backend
    return Policy(backend.floatx())


def set_global_policy(policy):
    """Sets the global policy (a name or a Policy; None: back to floatx())."""
    global _global_policy
    if policy is not None and not isinstance(policy, Policy):
        policy = Policy(policy)
    if policy is not None and policy.compute_dtype is not None and \
            not _dtypes.as_dtype(policy.compute_dtype).is_floating:
        raise ValueError('set_global_policy can only be used to set the global policy to floating-point policies, '
                         f'such as "float32" and "mixed_float16", but got policy: {policy.name}')
    _global_policy = policy


def get_policy(identifier):
    """Keras' policy.get_policy: a layer's `dtype` argument (a Policy, its saved dict, a mixed policy's name, a
    dtype or its name, or None for the global policy) as a Policy."""
    if isinstance(identifier, Policy):
        return identifier
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and identifier in _MIXED:
        return Policy(identifier)
    if identifier:
        return Policy(_dtypes.as_dtype(identifier).name)
    return global_policy()


def serialize(policy):
    """A plain dtype policy saves as its name; a mixed one as a Keras object (Keras 2.15's layer config)."""
    if type(policy) is Policy and policy.name not in _MIXED:
        return None if policy.name == "_infer" else policy.name
    return {"module": "keras.mixed_precision", "class_name": "Policy", "config": policy.get_config(),
            "registered_name": None}


def deserialize(config, custom_objects=None):
    if config is None:
        return Policy("_infer")
    if isinstance(config, str):
        return Policy(config)
    if config.get("class_name") not in ("Policy", "PolicyV1", "DTypePolicy"):
        raise ValueError(f"Unknown dtype policy: {config.get('class_name')!r}")
    return Policy.from_config(config.get("config", {}))


__all__ = ["Policy", "global_policy", "set_global_policy", "LossScaleOptimizer"]
