"""Keras 2.15's dense attention layers: Attention (Luong dot-product, or "concat" scores) and AdditiveAttention
(Bahdanau). call([query, value(, key)], mask=[query_mask, value_mask], return_attention_scores=False,
training=None, use_causal_mask=False): scores [batch, Tq, Tv], masked positions get -1e9 before the softmax,
dropout on the weights while training, result = weights @ value, zeroed where the query is masked."""
import numpy as np

from .. import _C
from ..tensor_shape import TensorShape
from ._layer import Layer
from ._masking import as_bool


class _DenseAttention(Layer):
    def __init__(self, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.dropout = float(dropout)
        self.supports_masking = True

    def _parts(self, inputs):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{type(self).__name__} layer must be called on a list of inputs, namely [query, value] "
                             f"or [query, value, key]. Received: inputs={inputs}.")
        query, value = inputs[0], inputs[1]
        return query, value, inputs[2] if len(inputs) == 3 else value

    def call(self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        query, value, key = self._parts(inputs)
        q_mask = mask[0] if mask is not None else None
        v_mask = mask[1] if mask is not None and len(mask) > 1 else None
        scores = self._scores(query, key)
        allowed = None
        if v_mask is not None:
            allowed = _C.expand_dims(as_bool(v_mask), -2)  # [batch, 1, Tv]
        if use_causal_mask:
            tq, tv = TensorShape(scores.shape)[-2], TensorShape(scores.shape)[-1]
            causal = _C.constant(np.tril(np.ones((1, tq, tv), dtype=bool)), None)
            allowed = causal if allowed is None else _C.logical_and(allowed, causal)
        if allowed is not None:
            scores = _C.subtract(scores, _C.multiply(_C.cast(_C.logical_not(allowed), scores.dtype._enum), 1e9))
        weights = _C.softmax(scores, -1)
        if training and self.dropout > 0:
            keep = _C.greater_equal(_C.random_uniform_like(weights, 0.0, 1.0, None), self.dropout)
            weights = _C.where(keep, _C.multiply(weights, 1.0 / (1.0 - self.dropout)), 0.0)
        result = _C.matmul(weights, value, False, False)
        if q_mask is not None:
            result = _C.multiply(result, _C.expand_dims(_C.cast(as_bool(q_mask), result.dtype._enum), -1))
        return (result, weights) if return_attention_scores else result

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def get_config(self):
        config = super().get_config()
        config["dropout"] = self.dropout
        return config


class Attention(_DenseAttention):
    """Dot-product attention: scores = query @ key^T (times a learned scalar `scale` when use_scale); score_mode
    "concat": concat_score_weight * sum(tanh(scale * (query + key)))."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"Invalid value for argument score_mode. Expected one of {{'dot', 'concat'}}. Received: "
                             f"score_mode={score_mode}")
        self.use_scale, self.score_mode = bool(use_scale), score_mode
        self.scale = self.concat_score_weight = None

    def build(self, input_shape):
        if self.use_scale:
            self.scale = self.add_weight("scale", [], initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight("concat_score_weight", [], initializer="ones")
        self.built = True

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = _C.matmul(query, key, False, True)
            return _C.multiply(scores, self.scale.read_value()) if self.scale is not None else scores
        total = _C.add(_C.expand_dims(query, -2), _C.expand_dims(key, -3))
        if self.scale is not None:
            total = _C.multiply(total, self.scale.read_value())
        return _C.multiply(self.concat_score_weight.read_value(), _C.reduce_sum(_C.tanh(total), [-1], False))

    def get_config(self):
        config = super().get_config()
        config.update(use_scale=self.use_scale, score_mode=self.score_mode)
        return config


class AdditiveAttention(_DenseAttention):
    """Additive attention: scores = sum(scale * tanh(query + key)) over the features (scale a learned [dim]
    vector when use_scale)."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(dropout=dropout, **kwargs)
        self.use_scale = bool(use_scale)
        self.scale = None

    def build(self, input_shape):
        if self.use_scale:
            dim = TensorShape(input_shape[1])[-1]
            self.scale = self.add_weight("scale", [dim], initializer="glorot_uniform")
        self.built = True

    def _scores(self, query, key):
        total = _C.tanh(_C.add(_C.expand_dims(query, -2), _C.expand_dims(key, -3)))
        if self.scale is not None:
            total = _C.multiply(total, self.scale.read_value())
        return _C.reduce_sum(total, [-1], False)

    def get_config(self):
        config = super().get_config()
        config["use_scale"] = self.use_scale
        return config
