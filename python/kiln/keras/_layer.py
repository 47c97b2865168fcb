"""Keras' Layer on kiln.Module: lazy building from the first input's shape, weights made with
initializers (their values computed eagerly, under init_scope, even while a function traces), input
checks (InputSpec), autocasting, the training flag passed down to nested layers, and the symbolic
KerasTensors of the functional API (Input)."""
import inspect
import re
import threading

from .. import _C, _scope
from .. import dtypes as _dtypes
from ..module import Module
from ..tensor_shape import TensorShape
from . import backend
from . import initializers as _initializers
from ._masking import get_mask, set_mask

_state = threading.local()

# Whether any layer has ever added a per-call loss: until then calls skip clearing the (empty) loss lists.
_CALL_LOSSES_SEEN = [False]

# Weight constraints, by the variable's state id: the optimizer projects a weight after updating it.
_VARIABLE_CONSTRAINTS = {}


def variable_constraint(var):
    """The constraint add_weight(constraint=...) gave this variable, or None."""
    entry = _VARIABLE_CONSTRAINTS.get(var._state_id())
    return None if entry is None else entry[1]


def _training_context():
    return getattr(_state, "training", None)


class _CallContext:
    """The `training` value a layer call hands to the layers it calls (Keras' call context)."""

    def __init__(self, training):
        self._training = training

    def __enter__(self):
        self._saved = getattr(_state, "training", None)
        _state.training = self._training

    def __exit__(self, *exc):
        _state.training = self._saved
        return False


def _check_unsupported(layer_name, **options):
    """NotImplementedError for the first option `name=(value, default)` set to other than its default (or None)."""
    for name, (value, default) in options.items():
        if value is not None and value != default:
            raise NotImplementedError(f"kiln.keras.layers.{layer_name}: {name}={value!r} is not supported")


def _is_tensor(x):
    return isinstance(x, (_C.Tensor, _C.Variable))


def _flatten(structure):
    if isinstance(structure, (list, tuple)):
        out = []
        for s in structure:
            out.extend(_flatten(s))
        return out
    if isinstance(structure, dict):
        out = []
        for k in sorted(structure, key=repr):
            out.extend(_flatten(structure[k]))
        return out
    return [structure]


def _map(fn, structure):
    if isinstance(structure, list):
        return [_map(fn, s) for s in structure]
    if isinstance(structure, tuple):
        items = [_map(fn, s) for s in structure]
        return type(structure)(*items) if hasattr(structure, "_fields") else tuple(items)
    if isinstance(structure, dict):
        return {k: _map(fn, v) for k, v in structure.items()}
    return fn(structure)


def _to_tensor(x):
    """NumPy arrays and Python values become tensors (NumPy without a copy); tensors (ragged and sparse ones
    too) stay."""
    if _is_tensor(x) or x is None or isinstance(x, KerasTensor) or _is_composite(x):
        return x
    return _C.constant(x, None)


def _is_composite(x):
    from ..ragged_tensor import RaggedTensor
    from ..sparse_tensor import SparseTensor
    return isinstance(x, (RaggedTensor, SparseTensor))


def _shape_of(x):
    if isinstance(x, (KerasTensor, _C.Tensor, _C.Variable)):
        return TensorShape(x.shape)
    return TensorShape(getattr(x, "shape", None))


def _shape_str(shape):
    shape = TensorShape(shape)
    return "<unknown>" if shape.rank is None else str(shape)


def _shape_as_lists(shape):
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple, TensorShape)):
        return [_shape_as_lists(s) for s in shape]
    return TensorShape(shape).as_list()


def _shape_from_lists(shape):
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
        return [TensorShape(s) for s in shape]
    return TensorShape(shape)


# ---- InputSpec ------------------------------------------------------------------------

class InputSpec:
    """tf.keras.layers.InputSpec: what a layer accepts (rank, known dims); checked on every call."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None):
        self.dtype = dtype
        self.shape = None if shape is None else TensorShape(shape)
        self.ndim = len(shape) if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        self.name = name

    def __repr__(self):
        spec = [f"ndim={self.ndim}" if self.ndim is not None else "",
                f"min_ndim={self.min_ndim}" if self.min_ndim is not None else "",
                f"axes={self.axes}" if self.axes else ""]
        return f"InputSpec({', '.join(s for s in spec if s)})"


def _shape_fits(shape, spec):
    """Keras' shape check: with allow_last_axis_squeeze a last axis of 1 is dropped from either side first,
    and the dims are compared as far as both go."""
    dims, spec_dims = shape.as_list(), spec.shape.as_list()
    if not spec.allow_last_axis_squeeze:
        return shape.is_compatible_with(spec.shape)
    if dims and dims[-1] == 1:
        dims = dims[:-1]
    if spec_dims and spec_dims[-1] == 1:
        spec_dims = spec_dims[:-1]
    return all(a is None or b is None or a == b for a, b in zip(dims, spec_dims))


def conform_rank(value, reference_shape):
    """Keras' _conform_to_reference_input: an input one rank short of its Input, whose last dim is 1, gains that
    axis; one rank over with a last axis of 1 loses it."""
    rank, reference = value.shape.rank, TensorShape(reference_shape)
    if rank is None or reference.rank is None:
        return value
    if rank == reference.rank + 1 and value.shape[-1] == 1:
        return _C.squeeze(value, [-1])
    if rank == reference.rank - 1 and reference[-1] == 1:
        return _C.expand_dims(value, -1)
    return value


def _check_input_spec(layer, shape, index=0):
    spec = layer.input_spec
    if spec is None:
        return
    if isinstance(spec, (list, tuple)):
        spec = spec[index] if index < len(spec) else None
        if spec is None:
            return
    shape = TensorShape(shape)
    rank = shape.rank
    head = f'Input {index} of layer "{layer.name}" is incompatible with the layer: '
    if rank is None:
        return
    if spec.shape is not None and spec.shape.rank is not None and not _shape_fits(shape, spec):
        raise ValueError(f"{head}expected shape={_shape_str(spec.shape)}, found shape={_shape_str(shape)}")
    if spec.ndim is not None and rank != spec.ndim and not spec.allow_last_axis_squeeze:
        raise ValueError(f"{head}expected ndim={spec.ndim}, found ndim={rank}. Full shape received: "
                         f"{_shape_str(shape)}")
    if spec.min_ndim is not None and rank < spec.min_ndim:
        raise ValueError(f"{head}expected min_ndim={spec.min_ndim}, found ndim={rank}. Full shape received: "
                         f"{_shape_str(shape)}")
    if spec.max_ndim is not None and rank > spec.max_ndim:
        raise ValueError(f"{head}expected max_ndim={spec.max_ndim}, found ndim={rank}. Full shape received: "
                         f"{_shape_str(shape)}")
    for axis, value in spec.axes.items():
        if value is None:
            continue
        dim = shape[axis] if -rank <= axis < rank else None
        if dim is not None and dim != value:
            raise ValueError(f"{head}expected axis {axis} of input shape to have value {value}, but received "
                             f"input with shape {_shape_str(shape)}")


# ---- KerasTensor: the functional API's symbolic values ------------------------------------

class _Node:
    """One layer call between KerasTensors."""

    def __init__(self, layer, inputs, args, kwargs):
        self.layer = layer
        self.inputs = inputs      # structure of KerasTensors (and other values)
        self.args = args
        self.kwargs = kwargs
        self.outputs = None       # structure of KerasTensors


_OP_LAYERS = [False]


class KerasTensor:
    """A symbolic value of a functional model under construction: a shape (batch dim None), a dtype,
    and the layer call that makes it."""

    def __init__(self, shape, dtype=_dtypes.float32, name=None, node=None, index=0):
        if not _OP_LAYERS[0]:
            # The first symbolic value: from now on TF ops accept KerasTensors (programs that never build a
            # functional model keep the ops unwrapped).
            _OP_LAYERS[0] = True
            from ._tf_op_layer import install
            install()
        self._shape = TensorShape(shape)
        self._dtype = _dtypes.as_dtype(dtype)
        self._name = name
        self._node = node
        self._index = index

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    @property
    def ndim(self):
        return self._shape.rank

    def get_shape(self):
        return self._shape

    def __repr__(self):
        producer = f" (created by layer '{self._node.layer.name}')" if self._node is not None else ""
        return f"<KerasTensor: shape={_shape_str(self._shape)} dtype={self._dtype.name}{producer}>"

    def __str__(self):
        """Keras 2's print form, without the TF op name (Kiln's graph names its ops otherwise)."""
        from ..function import TensorSpec
        layer = self._node.layer if self._node is not None else getattr(self, "_made_by", None)
        description = f", description=\"created by layer '{layer.name}'\"" if layer is not None else ""
        return f"KerasTensor(type_spec={TensorSpec(self._shape, self._dtype)!r}{description})"

    def __bool__(self):
        raise TypeError("A KerasTensor (a symbolic input of a functional model) has no value: it cannot be used "
                        "as a Python bool")

    def __array__(self, dtype=None):
        raise TypeError("You are passing a KerasTensor (a symbolic input of a functional model) to NumPy; "
                        "KerasTensors have no values. Call the model on data instead.")


# Attributes whose contents are not the layer's weights: its own list (visited first), the compile state, the
# losses and add_metric's metrics.
_NOT_WEIGHT_HOLDERS = ("_layer_weights", "_compiled", "_call_losses", "_callable_losses", "_added_metrics")

# ---- Layer -------------------------------------------------------------------------------

_ALLOWED_KWARGS = {"input_shape", "batch_input_shape", "batch_size", "input_dim", "weights", "activity_regularizer",
                   "autocast", "implementation"}


def _policy_of(dtype):
    """The dtype Policy a layer's `dtype` argument names (a Policy, its saved dict, "mixed_bfloat16", a dtype or its
    name), or the global policy when it is None (Keras' policy.get_policy)."""
    from . import mixed_precision
    return mixed_precision.get_policy(dtype)


class Layer(Module):
    """tf.keras.layers.Layer: override `build(input_shape)` (weights, with add_weight) and `call(inputs)`."""

    def __init__(self, trainable=True, name=None, dtype=None, dynamic=False, **kwargs):
        for k in kwargs:
            if k not in _ALLOWED_KWARGS:
                raise TypeError(f"Keyword argument not understood: {k!r}")
        from . import regularizers as _regularizers
        self._activity_regularizer = _regularizers.get(kwargs.get("activity_regularizer"))
        self._call_losses = []       # add_loss tensors of the latest call
        self._callable_losses = []   # add_loss callables (weight regularizers), evaluated when read
        self._added_metrics = {}     # add_metric: name -> Mean
        self._initial_weights = kwargs.get("weights")  # set once built, as Keras'
        self._autocast_inputs = kwargs.get("autocast", True)
        if name is None:
            name = backend.unique_object_name(backend.to_snake_case(type(self).__name__))
        elif not isinstance(name, str):
            raise TypeError(f"Layer name must be a string, got {name!r}")
        if name == "":  # Keras keeps an empty name (TF's custom-layers tutorial: Model(name="")), no scope
            self._name, self._scope_name = "", "/"
        elif re.match(r"^[A-Za-z0-9.][\w.-]*$", name) and not re.match(r"^[A-Za-z_]", name) or \
                re.match(r"^[A-Za-z0-9.][\w.-]*(/[A-Za-z0-9.][\w.-]*)+$", name):
            # Keras layer names need not be Python identifiers ("3_layer_mlp", DenseNet's "conv1/conv"), only TF
            # scope names.
            self._name = name
            with _scope.name_scope(name) as scope_name:
                self._scope_name = scope_name
        else:
            Module.__init__(self, name)
        self._set_dtype_policy(dtype)
        self._trainable = bool(trainable)
        self.built = False
        self._layer_weights = []
        self._inbound_nodes = []  # the functional calls of this layer (KerasTensors in, KerasTensors out)
        self._build_input_shape = None
        self.input_spec = None
        # Keras' rule: a layer that overrides compute_mask supports masking.
        self.supports_masking = type(self).compute_mask is not Layer.compute_mask
        batch_input_shape = kwargs.get("batch_input_shape")
        if batch_input_shape is None and "input_shape" in kwargs and kwargs["input_shape"] is not None:
            input_shape = kwargs["input_shape"]
            if isinstance(input_shape, int):
                input_shape = (input_shape,)
            batch_input_shape = (kwargs.get("batch_size"),) + tuple(input_shape)
        elif batch_input_shape is None and kwargs.get("input_dim") is not None:
            batch_input_shape = (kwargs.get("batch_size"), kwargs["input_dim"])
        self._batch_input_shape = None if batch_input_shape is None else tuple(batch_input_shape)
        call = type(self).call
        try:
            params = inspect.signature(call).parameters
            any_keyword = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values())
            self._call_accepts_training = "training" in params or any_keyword
            self._call_accepts_mask = "mask" in params or any_keyword
        except (TypeError, ValueError):
            self._call_accepts_training = self._call_accepts_mask = True

    # ---- properties --------------------------------------------------------------------

    def _set_dtype_policy(self, dtype):
        """The layer's Policy, and the dtypes it gives: `_dtype` the compute dtype (the floating inputs are cast to
        it, weights read as it inside `call`; what Kiln's layers compute in), `_variable_dtype` the weights'."""
        self._dtype_policy = _policy_of(dtype)
        self._dtype = _dtypes.as_dtype(self._dtype_policy.compute_dtype or backend.floatx())
        self._variable_dtype = _dtypes.as_dtype(self._dtype_policy.variable_dtype or self._dtype)
        # Keras' enable_auto_cast_variables(compute dtype): floating compute dtypes only.
        self._autocast_number = self._dtype._enum if self._dtype.is_floating else -1

    @property
    def dtype(self):
        """The dtype of the layer's weights (its policy's variable dtype), as a string."""
        return self._variable_dtype.name

    @property
    def compute_dtype(self):
        """The dtype the layer computes in: its floating inputs are cast to it, and its outputs have it."""
        return self._dtype.name

    _compute_dtype = compute_dtype  # Keras' deprecated alias

    @property
    def variable_dtype(self):
        return self._variable_dtype.name

    @property
    def dtype_policy(self):
        return self._dtype_policy

    @property
    def stateful(self):
        """Keras: whether this layer or one it holds keeps state across calls (a stateful RNN)."""
        return any(getattr(layer, "_stateful", False) for layer in self._sublayers())

    @stateful.setter
    def stateful(self, value):
        self._stateful = bool(value)

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        # Keras: the flag reaches every nested layer (freezing a base model freezes its BatchNormalization's
        # statistics too).
        for layer in self._sublayers():
            layer._trainable = bool(value)

    @property
    def input_shape(self):
        if self._build_input_shape is None:
            raise AttributeError(f'The layer "{self.name}" has never been called and thus has no defined input '
                                 "shape.")
        shape = self._build_input_shape
        if isinstance(shape, TensorShape):
            return tuple(shape.as_list())
        if isinstance(shape, (list, tuple)) and shape and all(isinstance(s, TensorShape) for s in shape):
            return [tuple(s.as_list()) for s in shape]  # a layer of several inputs: Keras' list of tuples
        return shape

    # ---- the functional graph: layer.input / layer.output -----------------------------

    def _node_at(self, node_index, what):
        nodes = getattr(self, "_inbound_nodes", [])
        if not nodes:
            raise RuntimeError(f"The layer {self.name} has never been called and thus has no defined {what}.")
        if not -len(nodes) <= node_index < len(nodes):
            raise ValueError(f"Asked to get {what} at node {node_index}, but the layer has only {len(nodes)} "
                             "inbound nodes.")
        return nodes[node_index]

    def _single_node(self, what, method):
        nodes = getattr(self, "_inbound_nodes", [])
        if not nodes:
            if what == "input":
                raise AttributeError(f"Layer {self.name} is not connected, no input to return.")
            raise AttributeError(f"Layer {self.name} has no inbound nodes.")
        if len(nodes) > 1:
            raise AttributeError(f'Layer {self.name} has multiple inbound nodes, hence the notion of "layer {what}" '
                                 f"is ill-defined. Use `{method}(node_index)` instead.")
        return nodes[0]

    @staticmethod
    def _node_inputs(node):
        if node.inputs is None:  # an InputLayer's node: its output is its input
            return node.outputs
        return node.inputs

    @property
    def input(self):
        """The KerasTensor(s) this layer was called on (a functional model: its inputs)."""
        if getattr(self, "_is_graph_network", False):
            return self._fn_inputs
        return self._node_inputs(self._single_node("input", "get_input_at"))

    @property
    def output(self):
        """The KerasTensor(s) this layer's call returned (a functional model: its outputs)."""
        if getattr(self, "_is_graph_network", False):
            return self._fn_outputs
        return self._single_node("output", "get_output_at").outputs

    @property
    def output_shape(self):
        """The output shape of the layer's call, as a tuple (a list of them for several outputs)."""
        if getattr(self, "_is_graph_network", False) or getattr(self, "_inbound_nodes", []):
            outputs = self.output
            shapes = [tuple(t.shape.as_list()) for t in _flatten(outputs)]
            return shapes[0] if len(shapes) == 1 else shapes
        raise AttributeError(f"The layer {self.name} has never been called and thus has no defined output shape.")

    def get_input_at(self, node_index):
        return self._node_inputs(self._node_at(node_index, "input"))

    def get_output_at(self, node_index):
        return self._node_at(node_index, "output").outputs

    def get_input_shape_at(self, node_index):
        shapes = [tuple(t.shape.as_list()) for t in _flatten(self.get_input_at(node_index))
                  if isinstance(t, KerasTensor)]
        return shapes[0] if len(shapes) == 1 else shapes

    def get_output_shape_at(self, node_index):
        shapes = [tuple(t.shape.as_list()) for t in _flatten(self.get_output_at(node_index))]
        return shapes[0] if len(shapes) == 1 else shapes

    @property
    def inbound_nodes(self):
        return list(getattr(self, "_inbound_nodes", []))

    # ---- variables -------------------------------------------------------------------

    def _gather(self):
        """(variable, trainable) pairs: this layer's own weights in creation order, then those of the layers,
        modules and variables held by its attributes, in the order they were assigned; each once."""
        out, seen, visited = [], set(), set()

        def add(v, trainable):
            key = v._state_id()
            if key not in seen:
                seen.add(key)
                out.append((v, trainable and v.trainable))

        def visit_layer(layer, trainable, depth):
            if id(layer) in visited or depth > 64:
                return
            visited.add(id(layer))
            trainable = trainable and layer._trainable
            start = len(out)
            for v in layer._layer_weights:
                add(v, trainable)
            for key, value in vars(layer).items():
                if key in _NOT_WEIGHT_HOLDERS or key in type(layer)._TF_MODULE_IGNORED_PROPERTIES:
                    continue
                visit(value, trainable, depth + 1)
            if not hasattr(layer, "_is_graph_network"):
                # Keras: a layer's weights are its trainable weights, then the others (a model's: its layers' in
                # order), so freezing a nested layer moves its weights after the trainable ones.
                out[start:] = [p for p in out[start:] if p[1]] + [p for p in out[start:] if not p[1]]

        def visit(value, trainable, depth):
            if isinstance(value, _C.Variable):
                add(value, trainable)
            elif isinstance(value, Layer):
                visit_layer(value, trainable, depth)
            elif isinstance(value, Module):
                if id(value) not in visited:
                    visited.add(id(value))
                    for v in value.variables:
                        add(v, trainable)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v, trainable, depth + 1)
            elif isinstance(value, dict):
                for v in value.values():
                    visit(v, trainable, depth + 1)

        visit_layer(self, True, 0)
        return out

    @property
    def weights(self):
        return [v for v, _ in self._gather()]

    @property
    def trainable_weights(self):
        return [v for v, t in self._gather() if t]

    @property
    def non_trainable_weights(self):
        return [v for v, t in self._gather() if not t]

    @property
    def variables(self):
        return self.weights

    @property
    def trainable_variables(self):
        return self.trainable_weights

    @property
    def non_trainable_variables(self):
        return self.non_trainable_weights

    def get_weights(self):
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        params = self.weights
        if len(params) != len(weights):
            raise ValueError(f'Layer "{self.name}" expected {len(params)} weights, but the weights list has '
                             f"{len(weights)} elements.")
        for v, w in zip(params, weights):
            if TensorShape(getattr(w, "shape", ())) != v.shape:
                raise ValueError(f"Layer weight shape {v.shape} not compatible with provided weight shape "
                                 f"{TensorShape(w.shape)}")
            v.assign(w)

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer {self.name}, but the layer isn't built. "
                             f"You can build it manually via: `{self.name}.build(batch_input_shape)`.")
        n = 0
        for v in self.weights:
            n += v.shape.num_elements() or 0
        return n

    def add_variable(self, *args, **kwargs):
        """Keras' deprecated alias of add_weight."""
        return self.add_weight(*args, **kwargs)

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, use_resource=None, synchronization=None, aggregation=None, **kwargs):
        """A weight named "<layer>/<name>:0". Its initial value is computed eagerly (init_scope), so a layer
        first built while a function traces has its values at once."""
        shape = () if shape is None else tuple(int(d) for d in shape)
        dtype = _dtypes.as_dtype(dtype or self._variable_dtype)
        # Keras: a floating weight of a layer computing in another dtype reads as the compute dtype inside `call`
        # (an AutoCastVariable), unless the layer asks for its own dtype (experimental_autocast=False).
        autocast = kwargs.pop("autocast", None)
        if autocast is None:
            autocast = kwargs.pop("experimental_autocast", True)
        variable_class = _C.Variable
        if autocast and dtype.is_floating and self._dtype != self._variable_dtype:
            from ._mixed_precision_autocast import AutoCastVariable
            variable_class = AutoCastVariable
        if initializer is None:
            initializer = "glorot_uniform" if dtype.name in ("float32", "float64") else "zeros"
        init = _initializers.get(initializer)
        with _C.init_scope():
            value = init(shape, dtype=dtype)
            if not _is_tensor(value):
                value = _C.constant(value, dtype._enum)
            if value.dtype != dtype:
                value = _C.cast(value, dtype._enum)
        var = variable_class(value, True if trainable is None else bool(trainable),
                             f"{self.name}/{name or 'Variable'}", None)
        self._layer_weights.append(var)
        if regularizer is not None:
            from . import regularizers as _regularizers
            penalty = _regularizers.get(regularizer)
            self._callable_losses.append(lambda: penalty(var.read_value()))
        if constraint is not None:
            from . import constraints as _constraints
            _VARIABLE_CONSTRAINTS[var._state_id()] = (var, _constraints.get(constraint))
        return var

    # ---- losses and metrics added by layers ----------------------------------------------------

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    @activity_regularizer.setter
    def activity_regularizer(self, value):
        from . import regularizers as _regularizers
        self._activity_regularizer = _regularizers.get(value)

    def _sublayers(self):
        """This layer, then every layer its attributes hold (nested lists and dicts too), each once."""
        out, seen = [], set()

        def visit(value, depth):
            if depth > 64:
                return
            if isinstance(value, Layer):
                if id(value) in seen:
                    return
                seen.add(id(value))
                out.append(value)
                for key, v in vars(value).items():
                    if key not in ("_compiled", "_layer_weights", "_call_losses", "_callable_losses",
                                   "_added_metrics"):
                        visit(v, depth + 1)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v, depth + 1)
            elif isinstance(value, dict):
                for v in value.values():
                    visit(v, depth + 1)

        visit(self, 0)
        return out

    def add_loss(self, losses, **kwargs):
        """Adds a scalar (or tensors, summed by the loss) to what fit minimizes: a tensor computed in `call` counts
        for that call only (it is cleared when the outermost layer is called again); a zero-argument callable
        (a weight's penalty) is evaluated each time `losses` is read."""
        for loss in losses if isinstance(losses, (list, tuple)) else [losses]:
            if loss is None:
                continue
            if isinstance(loss, KerasTensor):
                from ._functional_side import AddLoss, add_symbolic
                add_symbolic(self, loss, AddLoss(unconditional=False))
                continue
            if callable(loss) and not _is_tensor(loss):
                self._callable_losses.append(loss)
            else:
                if not _is_tensor(loss):
                    loss = _C.constant(loss, self._dtype._enum)
                self._call_losses.append(loss)
                _CALL_LOSSES_SEEN[0] = True

    @property
    def losses(self):
        """The losses of the latest call (add_loss in call, activity regularizers) of this layer and the layers
        it holds, then their weight penalties (evaluated now)."""
        out = []
        layers = self._sublayers()
        for layer in layers:
            out.extend(layer._call_losses)
        for layer in layers:
            for fn in layer._callable_losses:
                value = fn()
                if value is not None:
                    out.append(value if _is_tensor(value) else _C.constant(value, self._dtype._enum))
        return out

    def _clear_losses(self):
        for layer in self._sublayers():
            layer._call_losses = []

    def add_metric(self, value, name=None, aggregation=None, **kwargs):
        """Tracks the mean of `value` over the epoch as metric `name` (shown by fit, in model.metrics)."""
        if aggregation is not None and aggregation != "mean":
            raise ValueError(f"We currently support only `mean` and `None` as aggregation, got {aggregation!r}")
        if name is None:
            raise ValueError("Please provide a name for your metric like `self.add_metric(tf.reduce_sum(inputs), "
                             "name='mean_activation')`")
        if isinstance(value, KerasTensor):
            from ._functional_side import AddMetric, add_symbolic
            add_symbolic(self, value, AddMetric(aggregation, name))
            return
        metric = self._added_metrics.get(name)
        if metric is None:
            from . import metrics as _metrics
            with _C.init_scope():
                metric = self._added_metrics[name] = _metrics.Mean(name=name)
        metric.update_state(value)

    @property
    def metrics(self):
        """The metrics add_metric made in this layer and the layers it holds."""
        return [m for layer in self._sublayers() for m in layer._added_metrics.values()]

    # ---- building and calling ------------------------------------------------------------

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, *args, **kwargs):
        return inputs

    def compute_mask(self, inputs, mask=None):
        """The mask of the outputs for these inputs and their mask: the input's mask for a layer that supports
        masking (it keeps the positions), else None (Keras' default)."""
        if not self.supports_masking:
            if any(m is not None for m in _flatten(mask)):
                raise TypeError(f"Layer {self.name} does not support masking, but was passed an input_mask: {mask}")
            return None
        return mask

    def compute_output_shape(self, input_shape):
        """The output shape for inputs of `input_shape`, found by tracing the layer's call on a placeholder
        (built-in layers compute it directly)."""
        from ..function import function, TensorSpec
        shapes = _map(TensorShape, input_shape) if isinstance(input_shape, (list, tuple)) and input_shape and \
            isinstance(input_shape[0], (list, tuple, TensorShape)) else TensorShape(input_shape)
        if not self.built:
            self._maybe_build(shapes)
        specs = _map(lambda s: TensorSpec(s, self._dtype), shapes) if isinstance(shapes, list) else \
            TensorSpec(shapes, self._dtype)
        probe = function(lambda x: self(x), autograph=False)
        outputs = probe.get_concrete_function(specs).outputs
        return outputs[0].shape if len(outputs) == 1 else [o.shape for o in outputs]

    def _traced_output_shape(self, inputs, args, kwargs):
        """The output shape(s) of this call with every KerasTensor argument as a placeholder."""
        from ..function import function, TensorSpec
        structure = [inputs, list(args), kwargs]
        symbolic = [t for t in _flatten(structure) if isinstance(t, KerasTensor)]

        def run(*values):
            lookup = {id(t): v for t, v in zip(symbolic, values)}
            x, a, k = _map(lambda t: lookup.get(id(t), t) if isinstance(t, KerasTensor) else t, structure)
            return self(x, *a, **k)

        specs = [TensorSpec(t.shape, t.dtype) for t in symbolic]
        outputs = function(run, autograph=False).get_concrete_function(*specs).outputs
        return outputs[0].shape if len(outputs) == 1 else [o.shape for o in outputs]

    def _maybe_build(self, input_shapes):
        if self.built:
            return
        shapes = input_shapes
        if isinstance(shapes, TensorShape) and shapes.rank is None:
            raise ValueError(f'Layer "{self.name}": cannot build for inputs of unknown rank')
        self.build(shapes)
        self.built = True
        if self._build_input_shape is None:
            self._build_input_shape = shapes
        if self._initial_weights is not None:
            with _C.init_scope():
                self.set_weights(self._initial_weights)
            self._initial_weights = None

    def _autocast(self, x):
        if self._autocast_inputs and _is_tensor(x) and x.dtype.is_floating and x.dtype != self._dtype:
            return _C.cast(x, self._dtype._enum)
        return x

    def _check_and_build(self, shapes):
        """Checks the inputs against input_spec, builds the layer on its first call, and checks them against the
        spec the build set (which knows the dims the weights fix)."""
        flat = _flatten(shapes)
        for i, s in enumerate(flat):
            _check_input_spec(self, s, i)
        if not self.built:
            self._maybe_build(shapes)
            for i, s in enumerate(flat):
                _check_input_spec(self, s, i)

    def __call__(self, inputs, *args, **kwargs):
        flat = _flatten(inputs)
        if any(isinstance(x, KerasTensor) for x in flat):
            return self._functional_call(inputs, args, kwargs)
        inputs = _map(_to_tensor, inputs)
        if getattr(self, "_is_graph_network", False):
            from ._functional_inputs import conform
            inputs = conform(self, inputs)
        training = kwargs.pop("training", None)
        if training is None:
            training = _training_context()
        elif _is_tensor(training):
            training = bool(training)
        self._check_and_build(_map(_shape_of, inputs))
        masks = self._input_masks(inputs, kwargs)
        inputs = _map(self._autocast, inputs)
        if self._call_accepts_training and training is not None:
            kwargs["training"] = training
        call = self.call
        if _C.is_tracing():
            # Inside kiln.function, the user's own `call` gets AutoGraph (Python control flow on tensors).
            from ..autograph import conversion
            call = conversion.call_target(call)
        outermost = not getattr(_state, "in_call", False)
        if outermost:
            if _CALL_LOSSES_SEEN[0]:
                self._clear_losses()  # Keras: the losses of a call replace those of the previous one
            _state.in_call = True
        # Keras' enable_auto_cast_variables: AutoCastVariables read as this layer's compute dtype in its call.
        autocast_before = _C._set_autocast_dtype(self._autocast_number)
        try:
            with _CallContext(training):
                outputs = call(inputs, *args, **kwargs)
        finally:
            _C._set_autocast_dtype(autocast_before)
            if outermost:
                _state.in_call = False
        if self._activity_regularizer is not None:
            self._regularize_activity(outputs)
        if self.supports_masking:
            self._set_output_masks(inputs, outputs, masks)
        return outputs

    def _regularize_activity(self, outputs):
        """Keras: the activity penalty of each output, divided by the batch size, is a loss of this call."""
        for out in _flatten(outputs):
            if not _is_tensor(out):
                continue
            penalty = self._activity_regularizer(out)
            if not _is_tensor(penalty):
                penalty = _C.constant(penalty, out.dtype._enum)
            batch = _C.cast(_C.slice(_C.shape(out), [0], [1]), penalty.dtype._enum)
            self.add_loss(_C.divide(penalty, _C.reshape(batch, [])))

    def _input_masks(self, inputs, kwargs):
        """The inputs' masks, Keras' rule: the `mask` argument when given, else the masks the inputs carry,
        which are then passed to a `call` that takes a `mask` (None when no input has one)."""
        if not self.supports_masking and not self._call_accepts_mask:
            return None
        if "mask" in kwargs:
            return kwargs["mask"]
        masks = _map(get_mask, inputs)
        if all(m is None for m in _flatten(masks)):
            return None
        if self._call_accepts_mask:
            kwargs["mask"] = masks
        return masks

    def _set_output_masks(self, inputs, outputs, masks):
        """Each output carries its mask from compute_mask, unless the call gave every output one."""
        flat = _flatten(outputs)
        if all(_is_tensor(x) and get_mask(x) is not None for x in flat):
            return
        out_masks = self.compute_mask(inputs, masks)
        if out_masks is None:
            return
        for x, m in zip(flat, _flatten(out_masks)):
            if m is not None and _is_tensor(x):
                set_mask(x, m)

    def _symbolic_input_masks(self, inputs, kwargs):
        """The masks the KerasTensor inputs will carry, for a custom call that takes `mask` (None otherwise)."""
        if not self._call_accepts_mask or "mask" in kwargs or \
                type(self).compute_output_shape is not Layer.compute_output_shape:
            return None
        masks = _map(lambda t: t._keras_mask if isinstance(t, KerasTensor) else None, inputs)
        return None if all(m is None for m in _flatten(masks)) else masks

    def _functional_call(self, inputs, args, kwargs):
        shapes = _map(lambda x: x.shape if isinstance(x, KerasTensor) else _shape_of(x), inputs)
        self._check_and_build(shapes)
        extra = [t for t in _flatten([list(args), kwargs]) if isinstance(t, KerasTensor)]
        masks = self._symbolic_input_masks(inputs, kwargs)
        if (extra or kwargs or masks is not None or getattr(self, "_always_trace", False)) and \
                type(self).compute_output_shape is Layer.compute_output_shape:
            # Symbolic tensors among the other arguments (call(targets, logits)), the inputs' masks for a call that
            # takes them, or settings that change the outputs (return_attention_scores=True): trace the whole call.
            out_shape = self._traced_output_shape(inputs, args, kwargs if masks is None else dict(kwargs, mask=masks))
        else:
            out_shape = self.compute_output_shape(shapes)
        node = _Node(self, inputs, args, dict(kwargs))
        # Layers whose outputs are not in their dtype (lookups: int64) say so with _output_dtype.
        dtype = getattr(self, "_output_dtype", None) or self._dtype
        if isinstance(out_shape, (list, tuple)) and out_shape and not isinstance(out_shape[0], (int, type(None))):
            node.outputs = [KerasTensor(s, dtype, None, node, i) for i, s in enumerate(out_shape)]
        else:
            node.outputs = KerasTensor(out_shape, dtype, None, node, 0)
        self._inbound_nodes.append(node)
        return node.outputs

    def get_config(self):
        from .mixed_precision import serialize
        # Keras saves a mixed policy as a Policy object; a plain one as its dtype name.
        config = {"name": self.name, "trainable": self.trainable, "dtype": serialize(self._dtype_policy)}
        if self._batch_input_shape is not None:
            config["batch_input_shape"] = self._batch_input_shape
        if self._activity_regularizer is not None and type(self).get_config is not Layer.get_config:
            from ._serialization import serialize_keras_object
            config["activity_regularizer"] = serialize_keras_object(self._activity_regularizer)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_build_config(self):
        """{"input_shape": ...} of the first build (saved beside the config, so a loaded layer is built before its
        weights are read)."""
        shape = getattr(self, "_build_input_shape", None)  # None too for a subclass that skipped Layer.__init__
        if shape is None:
            return None
        return {"input_shape": _shape_as_lists(shape)}

    def build_from_config(self, config):
        shape = config.get("input_shape")
        if shape is not None and not self.built:
            self._maybe_build(_shape_from_lists(shape))

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} object '{self.name}'>"


# ---- Input -------------------------------------------------------------------------------

class InputLayer(Layer):
    """The layer behind Input(): it holds the input's shape; calling it returns its input."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None, sparse=None, name=None,
                 ragged=None, type_spec=None, batch_input_shape=None, **kwargs):
        if name is None:
            name = backend.unique_object_name("input", zero_based=False)
        if batch_input_shape is None and kwargs.get("batch_shape") is not None:
            batch_input_shape = kwargs.pop("batch_shape")  # Keras 3's name, in the configs it writes
        kwargs.pop("batch_shape", None)
        if batch_input_shape is None:
            if input_shape is None:
                raise ValueError("InputLayer needs an input_shape (the shape without the batch dim) or a "
                                 "batch_input_shape")
            if isinstance(input_shape, int):
                input_shape = (input_shape,)
            batch_input_shape = (batch_size,) + tuple(input_shape)
        if sparse and ragged:
            raise ValueError("Cannot set both sparse and ragged to True in a Keras input.")
        # Keras: an input is floatx() unless given a dtype (the global policy is the layers' default, not inputs').
        super().__init__(name=name, dtype=dtype or backend.floatx(), batch_input_shape=batch_input_shape)
        # The composite the input takes (a SparseTensor or RaggedTensor); the layers it feeds accept it as Keras'.
        self.sparse, self.ragged = bool(sparse), bool(ragged)
        self.built = True
        self._build_input_shape = TensorShape(batch_input_shape)
        node = _Node(self, None, (), {})
        node.outputs = KerasTensor(batch_input_shape, self._dtype, name, node, 0)
        self._output_tensor = node.outputs
        self._inbound_nodes.append(node)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)

    def count_params(self):
        return 0

    def get_config(self):
        return {"batch_input_shape": tuple(TensorShape(self._batch_input_shape).as_list()), "dtype": self.dtype,
                "sparse": self.sparse, "ragged": self.ragged, "name": self.name}

    def get_build_config(self):
        return None


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=None, tensor=None, ragged=None,  # noqa: N802
          type_spec=None, batch_shape=None, **kwargs):
    """tf.keras.Input: a symbolic input of `shape` (without the batch dim) for functional models."""
    if shape is None and batch_shape is None:
        raise ValueError("Please provide to Input a `shape` or a `tensor` or a `type_spec` argument. Note that "
                         "`shape` does not include the batch dimension.")
    if isinstance(shape, int):
        shape = (shape,)
    layer = InputLayer(input_shape=shape, batch_size=batch_size, dtype=dtype, name=name,
                       batch_input_shape=batch_shape, sparse=sparse, ragged=ragged)
    return layer._output_tensor
