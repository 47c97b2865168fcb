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
        if isinstance(output_shape, (list, tuple)):
            if len(output_shape) != 1:
                raise NotImplementedError(f"kiln.keras.layers.MultiHeadAttention: output_shape={output_shape!r} is "
                                          "not supported (one output dim only)")
            output_shape = output_shape[0]
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        if attention_axes is not None and tuple(attention_axes) not in ((1,), (-2,)):
            raise NotImplementedError(f"kiln.keras.layers.MultiHeadAttention: attention_axes={attention_axes!r} is "
                                      "not supported (attention over the sequence axis of [batch, sequence, "
                                      "features] inputs only: None, (1,) or (-2,))")
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = value_dim if value_dim is not None else key_dim
        self.dropout, self.use_bias, self._output_shape = float(dropout), bool(use_bias), output_shape
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        self.supports_masking = True

    # ---- building ------------------------------------------------------------------------------

    def _check_rank(self, what, shape):
        shape = TensorShape(shape)
        if shape.rank != 3:
            raise ValueError(f'Layer "{self.name}": the {what} must have rank 3 [batch, sequence, features], got '
                             f"shape {shape}")
        return shape

    def _build_from_signature(self, query, value, key=None):
        """TF's lazy build from the query's, value's and key's shapes (the key is the value by default)."""
        shapes = {}
        for what, x in (("query", query), ("value", value), ("key", value if key is None else key)):
            shape = self._check_rank(what, _shape_of(x))
            if shape[-1] is None:
                raise ValueError(f'Layer "{self.name}": the {what}\'s last dim must be known to build the layer, '
                                 f"got shape {shape}")
            shapes[what] = shape[-1]
        out_dim = self._output_shape if self._output_shape is not None else shapes["query"]
        n = self.num_heads

        def dense(scope, kernel_shape, bias_shape):
            kernel = self.add_weight(f"{scope}/kernel", kernel_shape, initializer=self.kernel_initializer)
            bias = self.add_weight(f"{scope}/bias", bias_shape, initializer=self.bias_initializer) \
                if self.use_bias else None
            return kernel, bias

        self._query_dense = dense("query", [shapes["query"], n, self.key_dim], [n, self.key_dim])
        self._key_dense = dense("key", [shapes["key"], n, self.key_dim], [n, self.key_dim])
        self._value_dense = dense("value", [shapes["value"], n, self.value_dim], [n, self.value_dim])
        self._output_dense = dense("attention_output", [n, self.value_dim, out_dim], [out_dim])
        self._dims = shapes
        self._build_input_shape = TensorShape(_shape_of(query))
        self.built = True

    def build(self, input_shape):
        """Builds for self-attention (value and key of the query's shape); a call builds from all three."""
        if not self.built:
            shape = TensorShape(input_shape)
            self._build_from_signature(KerasTensor(shape), KerasTensor(shape))

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        shape = self._check_rank("query", query_shape)
        out_dim = self._output_shape if self._output_shape is not None else shape[-1]
        return TensorShape(shape.as_list()[:-1] + [out_dim])

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
            scores = [query.shape[0], self.num_heads, query.shape[1], value.shape[1]]
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
            if mask.shape.rank not in (2, 3):
                raise ValueError(f'Layer "{self.name}": attention_mask must be [batch, T, S] (or [T, S]), got shape '
                                 f"{mask.shape}")
            masks.append(mask)
        for what, steps_mask, axis in (("query", query_mask, 2), ("value", value_mask, 1), ("key", key_mask, 1)):
            if steps_mask is not None:
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

    def call(self, query, value, key=None, attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False, query_mask=None, value_mask=None, key_mask=None):
        key = value if key is None else key
        for what, x in (("query", query), ("value", value), ("key", key)):
            shape = self._check_rank(what, x.shape)
            if shape[-1] is not None and shape[-1] != self._dims[what]:
                raise ValueError(f'Layer "{self.name}": the {what}\'s last dim is {shape[-1]} but the layer was '
                                 f"built for {self._dims[what]}")
        query, value, key = (self._autocast(x) for x in (query, value, key))
        q = _C.multiply(self._projected(query, self._query_dense), 1.0 / math.sqrt(float(self.key_dim)))
        k = self._projected(key, self._key_dense)
        v = self._projected(value, self._value_dense)
        scores = _C.matmul(q, k, False, True)  # [batch, heads, T, S]
        mask = self._mask(query, value, attention_mask, use_causal_mask, query_mask, value_mask, key_mask)
        if mask is not None:
            keep = _C.cast(_C.expand_dims(mask, -3), self._dtype._enum)
            scores = _C.add(scores, _C.multiply(_C.subtract(1.0, keep), _MASKED_SCORE))
        probabilities = _C.softmax(scores, -1)
        dropped = _nn.dropout(probabilities, self.dropout) if training and self.dropout > 0 else probabilities
        attended = _C.matmul(dropped, v, False, False)  # [batch, heads, T, value_dim]
        kernel, bias = self._output_dense
        output = _C.reduce_sum(_C.matmul(attended, kernel, False, False), [1], False)
        if bias is not None:
            output = _C.add(output, bias)
        return (output, probabilities) if return_attention_scores else output

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, key_dim=self.key_dim, value_dim=self.value_dim, dropout=self.dropout,
                      use_bias=self.use_bias, output_shape=self._output_shape, attention_axes=self.attention_axes)
        return config
