"""Kiln: write eager, run as a graph. TensorFlow 2's Python API on Kiln's engine:
`import kiln as tf` runs TF2 code."""
import os as _os
import sys as _sys

# libgomp (the engine's thread pool) reads its wait policy once, when _C loads
# it: a short spin, so that idle threads do not burn a core another process
# needs (docs/design-notes.md, "Threads and contention"). The user's
# OMP_WAIT_POLICY or GOMP_SPINCOUNT wins; the setting is not left for
# subprocesses to inherit.
_fair_wait = "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ
if _fair_wait:
    _os.environ["GOMP_SPINCOUNT"] = "1000"  # kiln::config::kFairSpinCount
from . import _C  # noqa: E402
if _fair_wait:
    del _os.environ["GOMP_SPINCOUNT"]
del _fair_wait

_C._set_package_dir(_os.path.dirname(_os.path.abspath(__file__)) + _os.sep)

from . import dtypes  # noqa: E402
from .dtypes import DType, as_dtype, float32, float64, double, int32, int64, uint8, bool, string, resource  # noqa: E402,F401,A004
from .dtypes import float16, half, bfloat16, int8, int16, uint16, uint32, uint64, complex64, complex128  # noqa: E402,F401
from .tensor_shape import TensorShape  # noqa: E402

_C._set_python_types(dtypes._BY_ENUM, TensorShape)

from . import errors  # noqa: E402
from . import _tensor  # noqa: E402,F401  (Tensor and Variable behaviour)
from ._C import Tensor, Variable  # noqa: E402
from ._ops import *  # noqa: E402,F401,F403
from ._ops import _range_bounds, range, print, abs, pow, round, slice  # noqa: E402,F401,A004
from ._array_ops import (  # noqa: E402,F401  (composites; tile, unstack and rank replace _ops')
    bincount, boolean_mask, broadcast_dynamic_shape, broadcast_static_shape, broadcast_to, eye, histogram_fixed_width,
    histogram_fixed_width_bins,
    identity_n, linspace, meshgrid, rank, repeat, reverse, roll, searchsorted, tensordot, tile, unique,
    unique_with_counts, unstack)
from ._math_ops import norm  # noqa: E402
from .control_flow import cond, while_loop, TensorArray  # noqa: E402
from .gradient import GradientTape, UnconnectedGradients  # noqa: E402
from .autodiff import custom_gradient, grad_pass_through, recompute_grad  # noqa: E402
from ._graph_gradients import gradients, hessians  # noqa: E402
from ._graph import Graph, Operation  # noqa: E402
from ._critical_section import CriticalSection  # noqa: E402
from . import autodiff  # noqa: E402
from .function import function, Function, ConcreteFunction, TensorSpec, py_function  # noqa: E402
from .module import Module  # noqa: E402
from ._scope import name_scope  # noqa: E402
from . import config, debugging, version  # noqa: E402
from ._device import device, executing_eagerly, get_logger  # noqa: E402
from . import math, nn, random, linalg, experimental  # noqa: E402
from . import nest, data, saved_model, profiler, onnx  # noqa: E402
from . import io, train, summary, strings, image, signal, audio, bitwise, lookup, feature_column  # noqa: E402
from . import autograph  # noqa: E402
from . import distribute, queue, raw_ops  # noqa: E402
from . import keras  # noqa: E402
from . import ragged, sparse  # noqa: E402
from .ragged_tensor import RaggedTensor, RaggedTensorSpec  # noqa: E402
from .sparse_tensor import SparseTensor, SparseTensorSpec  # noqa: E402
from .sparse_indexed_slices import IndexedSlices  # noqa: E402
from ._map_fn import map_fn, vectorized_map  # noqa: E402
from . import ragged_dispatch as _ragged_dispatch  # noqa: E402
_ragged_dispatch.install()

# The rest of TF 2.15's tf.* names (python/tests/test_tf_catalogue.py lists what is still left out, and why).
from ._variable_enums import AggregationMethod, VariableAggregation, VariableSynchronization  # noqa: E402
from ._init_ops import (constant_initializer, ones_initializer, random_normal_initializer,  # noqa: E402
                        random_uniform_initializer, zeros_initializer)
from .type_spec import TypeSpec, type_spec_from_value  # noqa: E402
from .device_spec import DeviceSpec  # noqa: E402
from . import compat, mixed_precision, sets, sysconfig, test, types  # noqa: E402
from .keras import initializers, losses, metrics, optimizers  # noqa: E402  (TF 2.15 exports Keras' as these)
from ._math_more import (acos, acosh, approx_top_k, asin, asinh, atan, atan2, atanh, cosh, scalar_mul,  # noqa: E402
                         sinh, tan)
from ._array_more import (  # noqa: E402
    batch_to_space, bitcast, case, control_dependencies, dynamic_partition, dynamic_stitch, edit_distance,
    get_current_name_scope, get_static_value, group, guarantee_const, inside_function, is_symbolic_tensor, no_op,
    numpy_function, parallel_stack, realdiv, required_space_to_batch_paddings, reverse_sequence, saturate_cast,
    sequence_mask, shape_n, switch_case, timestamp, unravel_index)
from ._array_more import tf_tuple as tuple  # noqa: E402,A004  (TF's name)
from ._scan_fold import foldl, foldr, scan  # noqa: E402
from ._tensor_proto import make_ndarray, make_tensor_proto  # noqa: E402
from .debugging import assert_equal, assert_greater, assert_less, assert_rank  # noqa: E402
from .strings import as_string  # noqa: E402
from .linalg import eig, eigvals  # noqa: E402
from .nn import space_to_batch  # noqa: E402
space_to_batch_nd = space_to_batch
compat.v2 = _sys.modules[__name__]
dtypes.cast, dtypes.complex, dtypes.saturate_cast = cast, complex, saturate_cast  # noqa: F405

newaxis = None
init_scope = _C.init_scope
Assert = debugging.Assert

__version__ = version.VERSION  # the TensorFlow API version Kiln follows (Kiln's own: version.KILN_VERSION)
