"""kiln.nn (tf.nn)."""
from . import _C
from . import errors as _errors
from ._ops import _axis_list, convert_to_tensor as _convert_to_tensor, relu, sigmoid, tanh  # noqa: F401
from ._ops import top_k  # noqa: F401
from ._math_ops import in_top_k  # noqa: F401
from . import _nn_experimental as experimental  # noqa: F401
from ._nn_ctc import (collapse_repeated, ctc_beam_search_decoder, ctc_greedy_decoder, ctc_loss,  # noqa: F401
                      ctc_unique_labels)
from ._nn_dropout import dropout  # noqa: F401
from ._nn_misc import (approx_max_k, approx_min_k, batch_norm_with_global_normalization,  # noqa: F401
                       isotonic_regression)
from ._nn_morph import dilation2d, erosion2d  # noqa: F401
from ._nn_conv import (atrous_conv2d, atrous_conv2d_transpose, conv1d, conv1d_transpose, conv3d,  # noqa: F401
                       conv2d, conv2d_transpose, conv3d_transpose, conv_transpose, convolution, depth_to_space,
                       depthwise_conv2d,
                       depthwise_conv2d_backprop_filter, depthwise_conv2d_backprop_input, separable_conv2d,
                       space_to_batch, space_to_depth, with_space_to_batch)
from ._nn_embedding import embedding_lookup, embedding_lookup_sparse, safe_embedding_lookup_sparse  # noqa: F401
from ._nn_fractional import fractional_avg_pool, fractional_max_pool  # noqa: F401
from ._nn_losses import (compute_average_loss, log_poisson_loss, scale_regularization_loss,  # noqa: F401
                         sigmoid_cross_entropy_with_logits, weighted_cross_entropy_with_logits)
from ._nn_sampled import (all_candidate_sampler, compute_accidental_hits, fixed_unigram_candidate_sampler,  # noqa: F401
                           learned_unigram_candidate_sampler, log_uniform_candidate_sampler, nce_loss,
                           sampled_softmax_loss, uniform_candidate_sampler)
from ._nn_pool import (avg_pool, avg_pool1d, avg_pool2d, avg_pool3d, max_pool, max_pool1d, max_pool2d,  # noqa: F401
                       max_pool3d, max_pool_with_argmax, pool)
from ._nn_stats import (batch_normalization, local_response_normalization, lrn, normalize_moments,  # noqa: F401
                        sufficient_statistics, weighted_moments, zero_fraction)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    return _C.l2_normalize(x, _axis_list(dim if axis is None else axis), float(epsilon))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) over `axes`."""
    return _C.moments(x, _axis_list(axes), bool(keepdims))


def softplus(features, name=None):
    """log(exp(features) + 1), without overflow."""
    return _C.softplus(features)


def softsign(features, name=None):
    """features / (abs(features) + 1)."""
    return _C.softsign(features)


def elu(features, name=None):
    """features where positive, exp(features) - 1 elsewhere."""
    return _C.elu(features)


def selu(features, name=None):
    """scale * elu with alpha, Klambauer et al.'s constants."""
    return _C.selu(features)


def gelu(features, approximate=False, name=None):
    """0.5 x (1 + erf(x / sqrt(2))); with `approximate`, the tanh form."""
    return _C.gelu(features, bool(approximate))


def silu(features, beta=1.0, name=None):
    """features * sigmoid(beta * features)."""
    if beta == 1.0:
        return _C.silu(features)
    return features * _C.sigmoid(features * beta)


swish = silu


def relu6(features, name=None):
    """min(max(features, 0), 6)."""
    return _C.minimum(_C.relu(features), 6)


def crelu(features, axis=-1, name=None):
    """relu of features concatenated with -features along `axis` (twice the channels)."""
    features = _convert_to_tensor(features)
    return _C.relu(_C.concat([features, _C.negative(features)], int(axis)))


def leaky_relu(features, alpha=0.2, name=None):
    """features where positive, alpha * features elsewhere."""
    return _C.leaky_relu(features, float(alpha))


def softmax(logits, axis=None, name=None):
    return _C.softmax(logits, -1 if axis is None else int(axis))


def log_softmax(logits, axis=None, name=None):
    return _C.log_softmax(logits, -1 if axis is None else int(axis))


def bias_add(value, bias, data_format=None, name=None):
    """value + bias along the last (channels) axis."""
    if data_format is not None and not (data_format.startswith("N") and data_format.endswith("C")):
        raise ValueError(f"kiln.nn.bias_add: data_format {data_format!r} is not supported (only channels-last, "
                         "'N...C')")
    return _C.bias_add(value, bias)


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """-log_softmax(logits)[label] per example: labels have logits' shape without its last axis."""
    labels, logits = _convert_to_tensor(labels), _convert_to_tensor(logits)
    if labels.shape.rank is not None and logits.shape.rank is not None and (
            labels.shape.rank != logits.shape.rank - 1
            or not labels.shape.is_compatible_with(logits.shape[:-1])):
        raise ValueError(f"Shape mismatch: The shape of labels (received {labels.shape}) should equal the shape of "
                         f"logits except for the last dimension (received {logits.shape}).")
    depth = logits.shape[-1]
    if not labels._is_symbolic and depth is not None:
        # TF's CPU kernel refuses a label outside [0, depth); a trace does not check (one_hot gives a zero row)
        values = labels.numpy().reshape(-1)
        bad = values[(values < 0) | (values >= depth)]
        if bad.size:
            raise _errors.InvalidArgumentError(f"Received a label value of {bad[0]} which is outside the valid "
                                               f"range of [0, {depth}).  Label values: "
                                               f"{' '.join(str(v) for v in values)}")
    onehot = _C.one_hot(labels, depth, 1, 0, -1, logits.dtype._enum)
    return _C.negative(_C.reduce_sum(_C.multiply(onehot, _C.log_softmax(logits, -1)), [-1], False))


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    return _C.negative(_C.reduce_sum(_C.multiply(labels, _C.log_softmax(logits, axis)), [axis], False))


def l2_loss(t, name=None):
    return _C.divide(_C.reduce_sum(_C.square(t), None, False), 2)


_CELL_WRAPPERS = ("RNNCellDeviceWrapper", "RNNCellDropoutWrapper", "RNNCellResidualWrapper")


def __getattr__(name):
    # The RNN cell wrappers subclass keras' AbstractRNNCell: loaded on first use, once kiln.keras exists.
    if name in _CELL_WRAPPERS:
        from . import _nn_cell_wrappers
        return getattr(_nn_cell_wrappers, name)
    raise AttributeError(f"module 'kiln.nn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_CELL_WRAPPERS))
