"""tf.nn's statistics and normalizations as composites: sufficient_statistics, normalize_moments,
weighted_moments, zero_fraction, batch_normalization (the formula), fused_batch_norm and
local_response_normalization."""
from . import _ops, dtypes as _dtypes
from . import errors as _errors
from ._array_ops import _tensor
from ._math_ops import divide_no_nan


def _axes(axes):
    return [int(a) for a in (axes if isinstance(axes, (list, tuple)) else [axes])]


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """(count, sum of x - shift, sum of squares of x - shift, shift) over `axes`; count is in x's dtype and
    the shift comes back as given (None without one)."""
    x = _tensor(x)
    axes = _axes(axes)
    dims = _ops.shape(x)
    count = _ops.reduce_prod(_ops.cast(_ops.gather(dims, axes), x.dtype))
    shifted = x if shift is None else _ops.subtract(x, shift)
    m_ss = _ops.reduce_sum(shifted, axes, keepdims=keepdims)
    v_ss = _ops.reduce_sum(_ops.square(shifted), axes, keepdims=keepdims)
    return count, m_ss, v_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient statistics: mean_ss / counts (+ shift), variance_ss / counts - the
    shifted mean squared."""
    divisor = _ops.divide(1.0, _tensor(counts))
    shifted_mean = _ops.multiply(mean_ss, divisor)
    mean = shifted_mean if shift is None else _ops.add(shifted_mean, shift)
    variance = _ops.subtract(_ops.multiply(variance_ss, divisor), _ops.square(shifted_mean))
    return mean, variance


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """(mean, variance) of x over `axes`, each element counted frequency_weights times (broadcast against x);
    an all-zero weight gives 0, not NaN (TF's divide_no_nan)."""
    x = _tensor(x)
    axes = _axes(axes)
    compute_dtype = _dtypes.float32 if x.dtype == _dtypes.float16 else x.dtype  # as TF: float16 sums in float32
    xc = _ops.cast(x, compute_dtype)
    weights = _ops.cast(_ops.convert_to_tensor(frequency_weights, dtype_hint=x.dtype), compute_dtype)
    weight_sum = _ops.reduce_sum(_ops.add(weights, _ops.zeros_like(xc)), axes, keepdims=True)
    mean = divide_no_nan(_ops.reduce_sum(_ops.multiply(weights, xc), axes, keepdims=True), weight_sum)
    # The mean's own gradient through the squared distances is zero at the minimum: TF stops it, and so do we.
    distances = _ops.squared_difference(xc, _ops.stop_gradient(mean))
    variance = divide_no_nan(_ops.reduce_sum(_ops.multiply(weights, distances), axes, keepdims=True), weight_sum)
    if not keepdims:
        mean, variance = _ops.squeeze(mean, axes), _ops.squeeze(variance, axes)
    return _ops.cast(mean, x.dtype), _ops.cast(variance, x.dtype)


def zero_fraction(value, name=None):
    """The fraction of value's elements that are zero, a float32 scalar (NaN for an empty tensor)."""
    value = _tensor(value)
    zeros = _ops.cast(_ops.equal(value, _ops.zeros_like(value)), _dtypes.float32)
    return _ops.reduce_mean(zeros)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset, written as x * inv + (offset - mean *
    inv) as TF does; offset and scale may be None."""
    x = _tensor(x)
    inv = _ops.rsqrt(_ops.add(variance, variance_epsilon))
    if scale is not None:
        inv = _ops.multiply(inv, scale)
    inv = _ops.cast(inv, x.dtype)
    shift = _ops.negative(_ops.multiply(mean, inv)) if offset is None else _ops.subtract(
        offset, _ops.multiply(mean, inv))
    return _ops.add(_ops.multiply(x, inv), _ops.cast(shift, x.dtype))


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001, data_format="NHWC",
                     is_training=True, name=None, exponential_avg_factor=1.0):
    """Batch normalization over every axis but the last of a 4-D (NHWC) or 5-D (NDHWC) x: (y, mean,
    variance). Training normalizes with the batch's biased variance and returns the batch mean and the
    unbiased (n / (n - 1)) variance, blended into mean/variance by exponential_avg_factor when it is below 1;
    inference uses mean and variance as given."""
    if data_format not in ("NHWC", "NDHWC"):
        raise ValueError(f"kiln.nn.fused_batch_norm: data_format {data_format!r} is not supported "
                         "(only 'NHWC' and 'NDHWC')")
    x = _tensor(x)
    if x.shape.rank not in (4, 5):
        raise ValueError(f"Shape must be rank 4 or 5 for 'FusedBatchNormV3' but is rank {x.shape.rank}")
    if not is_training and (mean is None or variance is None):
        raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training is False.")
    epsilon = max(float(epsilon), 1.001e-5)  # TF raises a smaller epsilon to cuDNN's minimum
    compute = _dtypes.float32 if x.dtype in (_dtypes.float16, _dtypes.bfloat16) else x.dtype
    xc = _ops.cast(x, compute)
    axes = list(range(x.shape.rank - 1))
    if is_training:
        batch_mean, batch_var = _moments(xc, axes)
    else:
        batch_mean, batch_var = _tensor(mean, compute), _tensor(variance, compute)
    y = batch_normalization(xc, batch_mean, batch_var, _tensor(offset, compute), _tensor(scale, compute), epsilon)
    y = _ops.cast(y, x.dtype)
    if not is_training:
        return y, batch_mean, batch_var
    n = _ops.divide(_ops.cast(_ops.size(xc), compute), _ops.cast(_ops.shape(xc)[-1], compute))
    unbiased = _ops.multiply(batch_var, _ops.divide(n, _ops.maximum(_ops.subtract(n, 1.0), 1.0)))
    factor = float(exponential_avg_factor)
    if factor != 1.0 and mean is not None and variance is not None:
        batch_mean = _ops.add(_ops.multiply(1.0 - factor, _tensor(mean, compute)), _ops.multiply(factor, batch_mean))
        unbiased = _ops.add(_ops.multiply(1.0 - factor, _tensor(variance, compute)), _ops.multiply(factor, unbiased))
    return y, batch_mean, unbiased


def _moments(x, axes):
    mean = _ops.reduce_mean(x, axes)
    return mean, _ops.reduce_mean(_ops.squared_difference(x, mean), axes)


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5, name=None):  # noqa: A002
    """input / (bias + alpha * sqr_sum) ** beta, sqr_sum the sum of squares over the channels within
    depth_radius of each channel (the last axis of a 4-D input)."""
    x = _tensor(input)
    if x.shape.rank is not None and x.shape.rank != 4:
        raise _errors.InvalidArgumentError(f"input must be 4-dimensional, got shape {x.shape}")
    r = int(depth_radius)
    channels = x.shape[-1]
    squares = _ops.pad(_ops.square(x), [[0, 0], [0, 0], [0, 0], [r, r]])
    # The window sum as 2r + 1 shifted slices: plain ops, so the gradient is theirs.
    sqr_sum = None
    for k in range(2 * r + 1):
        part = _ops.slice(squares, [0, 0, 0, k], [-1, -1, -1, channels])
        sqr_sum = part if sqr_sum is None else _ops.add(sqr_sum, part)
    return _ops.divide(x, _ops.pow(_ops.add(_ops.multiply(sqr_sum, alpha), bias), beta))


lrn = local_response_normalization
