"""MultiHeadAttention (kiln.keras.layers), with TF's arguments, weights (EinsumDense kernels) and masking,
and the arithmetic of the C++ kiln::nn::MultiHeadAttention (src/nn/attention.cpp), so both give the same
values."""
import math

from .. import _C
from .. import dtypes as _dtypes
from .. import nn as _nn
from ..tensor_shape import TensorShape
from . import initializers as _initializers
from ._layer import KerasTensor, Layer, _Node, _check_unsupported, _shape_of, _to_tensor
from ._masking import as_bool, get_mask

# Keras' _large_compatible_negative for float32 / float64: added to masked scores before the softmax.
_MASKED_SCORE = -1e9

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _projection_equation(free_dims, bound_dims, output_dims):
    """TF's _build_proj_equation: the EinsumDense equation that keeps `free_dims` leading dims, contracts
    `bound_dims` with the kernel's first dims and appends the kernel's last `output_dims`."""
    free = _LETTERS[:free_dims]
    bound = _LETTERS[free_dims:free_dims + bound_dims]
    out = _LETTERS[free_dims + bound_dims:free_dims + bound_dims + output_dims]
    return f"{free}{bound},{bound}{out}->{free}{out}"


def _attention_equations(rank, attention_axes):
    """TF's _build_attention_equation for projected inputs of `rank` ([batch, ..., heads, dim]): the scores'
    equation (key, query -> [batch dims and heads, query's attended dims, key's attended dims]) and the
    combination's (scores, value -> [batch, ..., heads, dim])."""
    target = _LETTERS[:rank]
    batch_dims = [i for i in range(rank) if i not in attention_axes and i != rank - 1]
    source, offset = "", rank
    for i in range(rank):
        if i in batch_dims or i == rank - 1:
            source += target[i]
        else:
            source += _LETTERS[offset]
            offset += 1
    product = "".join([target[i] for i in batch_dims] + [target[i] for i in attention_axes] +
                      [source[i] for i in attention_axes])
    return f"{source},{target}->{product}", f"{product},{source}->{target}"


def _positions(x):
    """1-based running positions along axis 1 of x's [batch, positions, 1] slice (lengths may be unknown)."""
    return _C.cumsum(_C.ones_like(_C.slice(x, [0, 0, 0], [-1, -1, 1]), _dtypes.int32._enum), 1, False, False)


class MultiHeadAttention(Layer):
    """softmax(q k^T / sqrt(key_dim) + mask) v per head over [batch, sequence, features] inputs, TF's layer:
    query/key/value kernels [features, num_heads, key_dim | value_dim] with [num_heads, dim] biases, and an
    attention_output kernel [num_heads, value_dim, output_dim] with an [output_dim] bias. call(query, value,
    key=None, attention_mask=None, return_attention_scores=False, training=None, use_causal_mask=False)."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        _check_unsupported("MultiHeadAttention", kernel_regularizer=(kernel_regularizer, None),
                           bias_regularizer=(bias_regularizer, None), activity_regularizer=(activity_regularizer, None),
                           kernel_constraint=(kernel_constraint, None), bias_constraint=(bias_constraint, None))
        super().__init__(**kwargs)
        for name, value in (("num_heads", num_heads), ("key_dim", key_dim), ("value_dim", value_dim)):
            if value is not None and (not isinstance(value, int) or value <= 0):
                raise ValueError(f"MultiHeadAttention: `{name}` must be a positive integer, got {value!r}")
        if not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
            raise ValueError(f"Invalid value received for argument `dropout`. Expected a float value in [0, 1). "
                             f"Received: dropout={dropout}")
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        if attention_axes is not None and (not isinstance(attention_axes, (list, tuple)) or not attention_axes or
                                           not all(isinstance(a, int) for a in attention_axes)):
            raise ValueError(f"MultiHeadAttention: `attention_axes` must be an int or a non-empty tuple of ints, got "
                             f"{attention_axes!r}")
        for dim in (output_shape if isinstance(output_shape, (list, tuple)) else [output_shape]):
            if dim is not None and (not isinstance(dim, int) or dim <= 0):
                raise ValueError(f"MultiHeadAttention: `output_shape` must be a positive integer or a tuple of them, "
                                 f"got {output_shape!r}")
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = value_dim if value_dim is not None else key_dim
        self.dropout, self.use_bias = float(dropout), bool(use_bias)
        self._output_shape = tuple(output_shape) if isinstance(output_shape, (list, tuple)) else output_shape
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.supports_masking = True

    # ---- building ------------------------------------------------------------------------------

    def _check_rank(self, what, shape):
        """The shape, checked: rank 3 or more ([batch, attended and other axes..., features]), and once built
        the rank the layer was built for."""
        shape = TensorShape(shape)
        rank = getattr(self, "_rank", None)
        if shape.rank is None or shape.rank < 3 or (rank is not None and shape.rank != rank):
            expected = f"rank {rank}" if rank is not None else "rank 3 or more [batch, positions..., features]"
            raise ValueError(f'Layer "{self.name}": the {what} must have {expected}, got shape {shape}')
        return shape

    def _attended_axes(self, rank):
        """The attention axes of inputs of `rank`, TF's default (every axis but the batch and the features) when
        none were given; a negative axis counts from the end of the inputs' axes."""
        if self.attention_axes is None:
            return tuple(range(1, rank - 1))
        axes = tuple(a + rank if a < 0 else a for a in self.attention_axes)
        if any(not 1 <= a <= rank - 2 for a in axes) or len(set(axes)) != len(axes):
            raise ValueError(f'Layer "{self.name}": attention_axes={self.attention_axes!r} must be distinct axes of '
                             f"the rank-{rank} inputs other than the batch (0) and the features (-1)")
        return axes

    def _output_dims(self, query_features):
        if self._output_shape is None:
            return (query_features,)
        return self._output_shape if isinstance(self._output_shape, tuple) else (self._output_shape,)

    def _build_from_signature(self, query, value, key=None):
        """TF's lazy build from the query's, value's and key's shapes (the key is the value by default)."""
        shapes = {}
        for what, x in (("query", query), ("value", value), ("key", value if key is None else key)):
            shape = self._check_rank(what, _shape_of(x))
            if shape[-1] is None:
                raise ValueError(f'Layer "{self.name}": the {what}\'s last dim must be known to build the layer, '
                                 f"got shape {shape}")
            shapes[what] = shape[-1]
        rank = _shape_of(query).rank
        for what in ("value", "key"):
            x = value if what == "value" or key is None else key
            if _shape_of(x).rank != rank:
                raise ValueError(f'Layer "{self.name}": the {what} must have the query\'s rank {rank}, got shape '
                                 f"{_shape_of(x)}")
        self._axes = self._attended_axes(rank)
        out_dims = list(self._output_dims(shapes["query"]))
        # Attention over the sequence of [batch, sequence, features] into one output dim runs as batched matmuls
        # (any dims unknown); anything else runs TF's einsum equations.
        self._einsum = rank != 3 or len(out_dims) != 1
        self._scores_equation, self._combine_equation = _attention_equations(rank + 1, self._axes)
        n = self.num_heads

        def dense(scope, kernel_shape, bias_shape):
            kernel = self.add_weight(f"{scope}/kernel", kernel_shape, initializer=self.kernel_initializer)
            bias = self.add_weight(f"{scope}/bias", bias_shape, initializer=self.bias_initializer) \
                if self.use_bias else None
            return kernel, bias

        self._query_dense = dense("query", [shapes["query"], n, self.key_dim], [n, self.key_dim])
        self._key_dense = dense("key", [shapes["key"], n, self.key_dim], [n, self.key_dim])
        self._value_dense = dense("value", [shapes["value"], n, self.value_dim], [n, self.value_dim])
        self._output_dense = dense("attention_output", [n, self.value_dim] + out_dims, out_dims)
        self._dims = shapes
        self._rank = rank
        self._build_input_shape = TensorShape(_shape_of(query))
        self.built = True

    def build(self, input_shape):
        """Builds for self-attention (value and key of the query's shape); a call builds from all three."""
        if not self.built:
            shape = TensorShape(input_shape)
            self._build_from_signature(KerasTensor(shape), KerasTensor(shape))

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        shape = self._check_rank("query", query_shape)
        return TensorShape(shape.as_list()[:-1] + list(self._output_dims(shape[-1])))

    def _scores_shape(self, query_shape, value_shape):
        """[batch and the axes not attended, heads, the query's attended axes, the value's attended axes]."""
        query_dims, value_dims = TensorShape(query_shape).as_list(), TensorShape(value_shape).as_list()
        batch_dims = [query_dims[i] for i in range(len(query_dims) - 1) if i not in self._axes]
        return batch_dims + [self.num_heads] + [query_dims[a] for a in self._axes] + \
            [value_dims[a] for a in self._axes]

    # ---- calling ---------------------------------------------------------------------------------

    def __call__(self, query, value=None, key=None, *args, **kwargs):
        if value is None:
            raise TypeError("MultiHeadAttention.call() missing 1 required positional argument: 'value'")
        query, value, key = _to_tensor(query), _to_tensor(value), _to_tensor(key)
        if not self.built:
            self._build_from_signature(query, value, key)
        if any(isinstance(x, KerasTensor) for x in (query, value, key)):
            return self._symbolic_call(query, value, key, args, kwargs)
        # The masks the inputs carry (Keras' implicit masks), read before any cast makes new tensors.
        for name, x in (("query_mask", query), ("value_mask", value), ("key_mask", value if key is None else key)):
            if kwargs.get(name) is None:
                kwargs[name] = get_mask(x)
        return super().__call__(query, value, key, *args, **kwargs)

    def _symbolic_call(self, query, value, key, args, kwargs):
        """A functional-API call: a node whose later inputs (value, key, a mask) are its arguments."""
        if args:
            raise TypeError("MultiHeadAttention: pass the arguments after `key` by name (attention_mask=..., ...)")
        self._check_rank("value", value.shape)
        node = _Node(self, query, (value, key), dict(kwargs))
        out = KerasTensor(self.compute_output_shape(query.shape), self._dtype, None, node, 0)
        if kwargs.get("return_attention_scores"):
            scores = self._scores_shape(query.shape, value.shape)
            node.outputs = [out, KerasTensor(scores, self._dtype, None, node, 1)]
        else:
            node.outputs = out
        return node.outputs

    def _projected(self, x, dense):
        """[batch, heads, positions, dim]: [batch, 1, positions, features] @ [heads, features, dim], the batch
        dims broadcast, so no reshape needs the (maybe unknown) batch and sequence sizes."""
        kernel, bias = dense
        y = _C.matmul(_C.expand_dims(x, 1), _C.transpose(kernel, [1, 0, 2]), False, False)
        return y if bias is None else _C.add(y, _C.expand_dims(bias, 1))

    def _mask(self, query, value, attention_mask, use_causal_mask, query_mask, value_mask, key_mask):
        """TF's _compute_attention_mask: the attention_mask and-ed with the queries' mask [batch, T, 1], the
        values' and keys' [batch, 1, S] and the causal mask [batch, T, S] (None without any)."""
        masks = []
        if attention_mask is not None:
            mask = as_bool(attention_mask)
            scores_rank = 2 * len(self._axes) + self._rank - len(self._axes)
            if mask.shape.rank is None or not 2 <= mask.shape.rank <= (3 if self._rank == 3 else scores_rank):
                expected = "[batch, T, S] (or [T, S])" if self._rank == 3 else \
                    f"of rank 2 to {scores_rank}, broadcastable to the scores"
                raise ValueError(f'Layer "{self.name}": attention_mask must be {expected}, got shape {mask.shape}')
            masks.append(mask)
        implicit = [(what, m, axis) for what, m, axis in (("query", query_mask, 2), ("value", value_mask, 1),
                                                            ("key", key_mask, 1)) if m is not None]
        if (implicit or use_causal_mask) and self._rank != 3:
            raise NotImplementedError(f'Layer "{self.name}": the query/value/key masks and use_causal_mask need '
                                      f"[batch, sequence, features] inputs (got rank {self._rank}); pass an "
                                      "attention_mask instead")
        for what, steps_mask, axis in implicit:
            steps_mask = as_bool(steps_mask)
            if steps_mask.shape.rank != 2:
                raise ValueError(f'Layer "{self.name}": the {what}\'s mask must be [batch, positions], got shape '
                                 f"{steps_mask.shape}")
            masks.append(_C.expand_dims(steps_mask, axis))
        if use_causal_mask:
            masks.append(_C.greater_equal(_positions(query), _C.transpose(_positions(value), [0, 2, 1])))
        if not masks:
            return None
        mask = masks[0]
        for m in masks[1:]:
            mask = _C.logical_and(mask, m)
        return mask

    def _masked_scores(self, scores, mask):
        """(1 - mask) * -1e9 added to the scores, the mask's missing dims inserted before the heads (TF's rule)."""
        if mask is None:
            return scores
        keep = _C.cast(mask, self._dtype._enum)
        for _ in range(scores.shape.rank - keep.shape.rank):
            keep = _C.expand_dims(keep, -2 * len(self._axes) - 1)
        return _C.add(scores, _C.multiply(_C.subtract(1.0, keep), _MASKED_SCORE))

    def _softmax(self, scores):
        """The softmax over the key's attended axes (the last ones) together."""
        if len(self._axes) == 1:
            return _C.softmax(scores, -1)
        axes = list(range(-len(self._axes), 0))
        return _C.exp(_C.subtract(scores, _C.reduce_logsumexp(scores, axes, True)))

    def call(self, query, value, key=None, attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False, query_mask=None, value_mask=None, key_mask=None):
        key = value if key is None else key
        for what, x in (("query", query), ("value", value), ("key", key)):
            shape = self._check_rank(what, x.shape)
            if shape[-1] is not None and shape[-1] != self._dims[what]:
                raise ValueError(f'Layer "{self.name}": the {what}\'s last dim is {shape[-1]} but the layer was '
                                 f"built for {self._dims[what]}")
        query, value, key = (self._autocast(x) for x in (query, value, key))
        mask = self._mask(query, value, attention_mask, use_causal_mask, query_mask, value_mask, key_mask)
        attend = self._attend_einsum if self._einsum else self._attend_sequence
        output, probabilities = attend(query, value, key, mask, training)
        return (output, probabilities) if return_attention_scores else output

    def _dropped(self, probabilities, training):
        return _nn.dropout(probabilities, self.dropout) if training and self.dropout > 0 else probabilities

    def _attend_sequence(self, query, value, key, mask, training):
        """Attention over the sequence of [batch, sequence, features] into one output dim: batched matmuls."""
        q = _C.multiply(self._projected(query, self._query_dense), 1.0 / math.sqrt(float(self.key_dim)))
        k = self._projected(key, self._key_dense)
        v = self._projected(value, self._value_dense)
        scores = self._masked_scores(_C.matmul(q, k, False, True), mask)  # [batch, heads, T, S]
        probabilities = _C.softmax(scores, -1)
        attended = _C.matmul(self._dropped(probabilities, training), v, False, False)  # [batch, heads, T, value_dim]
        kernel, bias = self._output_dense
        output = _C.reduce_sum(_C.matmul(attended, kernel, False, False), [1], False)
        return (output if bias is None else _C.add(output, bias)), probabilities

    def _attend_einsum(self, query, value, key, mask, training):
        """TF's einsum formulation, for any attention axes of rank-N inputs and any output_shape."""
        def dense(x, weights, output_dims):
            kernel, bias = weights
            bound_dims = kernel.shape.rank - output_dims
            y = _C.einsum(_projection_equation(x.shape.rank - bound_dims, bound_dims, output_dims), [x, kernel])
            return y if bias is None else _C.add(y, bias)

        q = _C.multiply(dense(query, self._query_dense, 2), 1.0 / math.sqrt(float(self.key_dim)))
        k = dense(key, self._key_dense, 2)
        v = dense(value, self._value_dense, 2)
        scores = self._masked_scores(_C.einsum(self._scores_equation, [k, q]), mask)
        probabilities = self._softmax(scores)
        attended = _C.einsum(self._combine_equation, [self._dropped(probabilities, training), v])
        kernel = self._output_dense[0]
        output = dense(attended, self._output_dense, kernel.shape.rank - 2)
        return output, probabilities

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, key_dim=self.key_dim, value_dim=self.value_dim, dropout=self.dropout,
                      use_bias=self.use_bias, output_shape=self._output_shape, attention_axes=self.attention_axes)
        return config
