"""tf.raw_ops: TF's op names with their keyword-only arguments (`tf.raw_ops.MatMul(a=x, b=y,
transpose_b=True)`), for the ops Kiln has, each mapped onto the tf.* function that computes it.

One table, `_TABLE`: an op's name, its arguments as TF's API golden file lists them (without
`name`; `arg=default` for the optional ones) and the call it makes. TF has about 1,300 raw ops
(tensorflow/tools/api/golden/v2/tensorflow.raw_ops.pbtxt); most are kernels of v1 graph machinery
(queues, readers, summaries, resource handles, datasets, TPU) that tf.* reaches otherwise. Values
match the high-level functions; the random ops draw from Kiln's generators, not TF's bits.
python/tests/test_raw_ops.py checks every entry against the function it names."""
import ast as _ast
import collections as _collections
import functools as _functools


def _tf():
    import kiln
    return kiln


def _explicit(padding, explicit_paddings):
    """TF's EXPLICIT padding as the high-level functions take it: [[before, after], ...]."""
    if padding != "EXPLICIT":
        return padding
    flat = list(explicit_paddings)
    return [flat[i:i + 2] for i in range(0, len(flat), 2)]


def _squeeze(input, squeeze_dims):  # noqa: A002 - TF's argument name
    return _tf().squeeze(input, list(squeeze_dims) or None)


def _select(condition, t, e):
    """v1 Select: a vector condition picks rows of t and e."""
    tf = _tf()
    condition = tf.convert_to_tensor(condition)
    t = tf.convert_to_tensor(t)
    if condition.shape.rank == 1 and t.shape.rank is not None and t.shape.rank > 1:
        condition = tf.reshape(condition, [-1] + [1] * (t.shape.rank - 1))
        condition = tf.broadcast_to(condition, tf.shape(t))
    return tf.where(condition, t, e)


def _softmax_xent(features, labels):
    tf = _tf()
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=features)
    return _named("SoftmaxCrossEntropyWithLogits", ("loss", "backprop"), (loss, tf.nn.softmax(features) - labels))


def _sparse_softmax_xent(features, labels):
    tf = _tf()
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=features)
    backprop = tf.nn.softmax(features) - tf.one_hot(labels, tf.shape(features)[-1], dtype=features.dtype)
    return _named("SparseSoftmaxCrossEntropyWithLogits", ("loss", "backprop"), (loss, backprop))


@_functools.lru_cache(maxsize=None)
def _Pair(name, fields):  # noqa: N802 - a namedtuple class, as TF's multi-output raw ops return
    return _collections.namedtuple(name, list(fields))


def _named(name, fields, values):
    return _Pair(name, tuple(fields))(*values)


def _svd(input, compute_uv, full_matrices):  # noqa: A002
    tf = _tf()
    if compute_uv:
        s, u, v = tf.linalg.svd(input, full_matrices=full_matrices, compute_uv=True)
        return _named("Svd", ("s", "u", "v"), (s, u, v))
    s = tf.linalg.svd(input, full_matrices=full_matrices, compute_uv=False)
    return _named("Svd", ("s", "u", "v"), (s, None, None))


def _eigh(input, compute_v):  # noqa: A002
    tf = _tf()
    if compute_v:
        e, v = tf.linalg.eigh(input)
        return _named("SelfAdjointEigV2", ("e", "v"), (e, v))
    return _named("SelfAdjointEigV2", ("e", "v"), (tf.linalg.eigvalsh(input), None))


def _top_k(input, k, sorted):  # noqa: A002
    values, indices = _tf().math.top_k(input, k=k, sorted=sorted)
    return _named("TopKV2", ("values", "indices"), (values, indices))


def _unique(x, out_idx):
    y, idx = _tf().unique(x, out_idx=out_idx)
    return _named("Unique", ("y", "idx"), (y, idx))


def _unique_counts(x, out_idx):
    y, idx, count = _tf().unique_with_counts(x, out_idx=out_idx)
    return _named("UniqueWithCounts", ("y", "idx", "count"), (y, idx, count))


def _qr(input, full_matrices):  # noqa: A002
    q, r = _tf().linalg.qr(input, full_matrices=full_matrices)
    return _named("Qr", ("q", "r"), (q, r))


def _log_det(input):  # noqa: A002
    sign, log_abs = _tf().linalg.slogdet(input)
    return _named("LogMatrixDeterminant", ("sign", "log_abs_determinant"), (sign, log_abs))


def _no_op():
    return None


# name: (arguments, call). The arguments are TF's, in TF's order.
_TABLE = {}


# Elementwise ops of one argument `x`, by the tf.math function of the same meaning.
_UNARY_X = {
    "Abs": "abs",     "Ceil": "ceil", "Cos": "cos", "Erf": "erf",
    "Exp": "exp", "Floor": "floor", "Inv": "reciprocal",
    "IsFinite": "is_finite", "IsInf": "is_inf", "IsNan": "is_nan", "Log": "log",
    "Log1p": "log1p", "LogicalNot": "logical_not", "Neg": "negative", "Reciprocal": "reciprocal",
    "Rint": "rint", "Round": "round", "Rsqrt": "rsqrt", "Sigmoid": "sigmoid", "Sign": "sign", "Sin": "sin",
    "Sqrt": "sqrt", "Square": "square", "Tanh": "tanh",
    }
for _op, _fn in _UNARY_X.items():
    _TABLE[_op] = ("x", lambda x, _fn=_fn: getattr(_tf().math, _fn)(x))
_TABLE["OnesLike"] = ("x", lambda x: _tf().ones_like(x))
_TABLE["ZerosLike"] = ("x", lambda x: _tf().zeros_like(x))

# Activations of `features`.
_FEATURES = {"Relu": "relu", "Relu6": "relu6", "Elu": "elu", "Selu": "selu", "Softplus": "softplus",
             "Softsign": "softsign"}
for _op, _fn in _FEATURES.items():
    _TABLE[_op] = ("features", lambda features, _fn=_fn: getattr(_tf().nn, _fn)(features))
_TABLE["LeakyRelu"] = ("features, alpha=0.2", lambda features, alpha: _tf().nn.leaky_relu(features, alpha))

# Elementwise ops of `x, y`.
_BINARY = {
    "Add": "add", "AddV2": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "RealDiv": "divide",
    "DivNoNan": "divide_no_nan", "MulNoNan": "multiply_no_nan", "FloorDiv": "floordiv", "FloorMod": "floormod",
    "TruncateDiv": "truncatediv", "TruncateMod": "truncatemod", "Maximum": "maximum", "Minimum": "minimum",
    "Pow": "pow", "SquaredDifference": "squared_difference", "Less": "less", "LessEqual": "less_equal",
    "Greater": "greater", "GreaterEqual": "greater_equal", "LogicalAnd": "logical_and", "LogicalOr": "logical_or",
    "Xdivy": "xdivy", "Xlogy": "xlogy",
}
for _op, _fn in _BINARY.items():
    _TABLE[_op] = ("x, y", lambda x, y, _fn=_fn: getattr(_tf().math, _fn)(x, y))
_TABLE["Equal"] = ("x, y, incompatible_shape_error=True", lambda x, y, incompatible_shape_error: _tf().equal(x, y))
_TABLE["NotEqual"] = ("x, y, incompatible_shape_error=True",
                      lambda x, y, incompatible_shape_error: _tf().not_equal(x, y))
_TABLE["Mod"] = ("x, y", lambda x, y: _tf().math.truncatemod(x, y))
_TABLE["ApproximateEqual"] = ("x, y, tolerance=1e-05",
                              lambda x, y, tolerance: _tf().less(_tf().abs(_tf().subtract(x, y)), tolerance))


def _div(x, y):
    """Div: integer division rounds toward zero for integers (TF's C semantics), true division for floats."""
    tf = _tf()
    x, y = tf.convert_to_tensor(x), tf.convert_to_tensor(y)
    return tf.math.truncatediv(x, y) if x.dtype.is_integer else tf.divide(x, y)


_TABLE["Div"] = ("x, y", _div)

# Complex numbers.
_TABLE["Complex"] = ("real, imag, Tout=complex64", lambda real, imag, Tout: _tf().complex(real, imag))
_TABLE["Real"] = ("input, Tout=float32", lambda input, Tout: _tf().math.real(input))
_TABLE["Imag"] = ("input, Tout=float32", lambda input, Tout: _tf().math.imag(input))
_TABLE["Angle"] = ("input, Tout=float32", lambda input, Tout: _tf().math.angle(input))
_TABLE["Conj"] = ("input", lambda input: _tf().math.conj(input))
_TABLE["ComplexAbs"] = ("x, Tout=float32", lambda x, Tout: _tf().abs(x))

# Reductions.
for _op, _fn in {"Sum": "reduce_sum", "Prod": "reduce_prod", "Max": "reduce_max", "Min": "reduce_min",
                 "Mean": "reduce_mean", "All": "reduce_all", "Any": "reduce_any",
                 "EuclideanNorm": "reduce_euclidean_norm"}.items():
    _TABLE[_op] = ("input, axis, keep_dims=False",
                   lambda input, axis, keep_dims, _fn=_fn: getattr(_tf().math, _fn)(input, axis, keepdims=keep_dims))
_TABLE["ArgMax"] = ("input, dimension, output_type=int64",
                    lambda input, dimension, output_type: _tf().argmax(input, dimension, output_type=output_type))
_TABLE["ArgMin"] = ("input, dimension, output_type=int64",
                    lambda input, dimension, output_type: _tf().argmin(input, dimension, output_type=output_type))
_TABLE["Cumsum"] = ("x, axis, exclusive=False, reverse=False",
                    lambda x, axis, exclusive, reverse: _tf().math.cumsum(x, axis, exclusive, reverse))
_TABLE["Cumprod"] = ("x, axis, exclusive=False, reverse=False",
                     lambda x, axis, exclusive, reverse: _tf().math.cumprod(x, axis, exclusive, reverse))
_TABLE["CumulativeLogsumexp"] = ("x, axis, exclusive=False, reverse=False",
                                 lambda x, axis, exclusive, reverse: _tf().math.cumulative_logsumexp(
                                     x, axis, exclusive, reverse))
_TABLE["AddN"] = ("inputs", lambda inputs: _tf().add_n(inputs))
_TABLE["AccumulateNV2"] = ("inputs, shape", lambda inputs, shape: _tf().add_n(inputs))
_TABLE["L2Loss"] = ("t", lambda t: _tf().nn.l2_loss(t))
_TABLE["ClipByValue"] = ("t, clip_value_min, clip_value_max",
                         lambda t, clip_value_min, clip_value_max: _tf().clip_by_value(t, clip_value_min,
                                                                                      clip_value_max))

# Segments.
for _op, _fn in {"SegmentSum": "segment_sum", "SegmentMean": "segment_mean"}.items():
    _TABLE[_op] = ("data, segment_ids", lambda data, segment_ids, _fn=_fn: getattr(_tf().math, _fn)(data, segment_ids))
for _op, _fn in {"UnsortedSegmentSum": "unsorted_segment_sum", "UnsortedSegmentMax": "unsorted_segment_max",
                 "UnsortedSegmentMin": "unsorted_segment_min"}.items():
    _TABLE[_op] = ("data, segment_ids, num_segments",
                   lambda data, segment_ids, num_segments, _fn=_fn: getattr(_tf().math, _fn)(data, segment_ids,
                                                                                              num_segments))

# Products.
_TABLE["MatMul"] = ("a, b, transpose_a=False, transpose_b=False, grad_a=False, grad_b=False",
                    lambda a, b, transpose_a, transpose_b, grad_a, grad_b: _tf().matmul(
                        a, b, transpose_a=transpose_a, transpose_b=transpose_b))
for _op in ("BatchMatMul", "BatchMatMulV2"):
    _TABLE[_op] = ("x, y, adj_x=False, adj_y=False",
                   lambda x, y, adj_x, adj_y: _tf().matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y))
_TABLE["BatchMatMulV3"] = ("x, y, Tout, adj_x=False, adj_y=False, grad_x=False, grad_y=False",
                           lambda x, y, Tout, adj_x, adj_y, grad_x, grad_y: _tf().cast(
                               _tf().matmul(x, y, adjoint_a=adj_x, adjoint_b=adj_y), Tout))
_TABLE["Einsum"] = ("inputs, equation", lambda inputs, equation: _tf().einsum(equation, *inputs))
_TABLE["Cross"] = ("a, b", lambda a, b: _tf().linalg.cross(a, b))

# Shapes and layout.
_TABLE["Reshape"] = ("tensor, shape", lambda tensor, shape: _tf().reshape(tensor, shape))
_TABLE["Transpose"] = ("x, perm", lambda x, perm: _tf().transpose(x, perm))
_TABLE["ConjugateTranspose"] = ("x, perm", lambda x, perm: _tf().transpose(x, perm, conjugate=True))
_TABLE["ExpandDims"] = ("input, axis", lambda input, axis: _tf().expand_dims(input, axis))
_TABLE["Squeeze"] = ("input, squeeze_dims=[]", _squeeze)
_TABLE["Shape"] = ("input, out_type=int32", lambda input, out_type: _tf().shape(input, out_type=out_type))
_TABLE["Size"] = ("input, out_type=int32", lambda input, out_type: _tf().size(input, out_type=out_type))
_TABLE["Rank"] = ("input", lambda input: _tf().rank(input))
_TABLE["Cast"] = ("x, DstT, Truncate=False", lambda x, DstT, Truncate: _tf().cast(x, DstT))
_TABLE["BroadcastTo"] = ("input, shape", lambda input, shape: _tf().broadcast_to(input, shape))
_TABLE["BroadcastArgs"] = ("s0, s1", lambda s0, s1: _tf().broadcast_dynamic_shape(s0, s1))
_TABLE["Fill"] = ("dims, value", lambda dims, value: _tf().fill(dims, value))
_TABLE["Range"] = ("start, limit, delta", lambda start, limit, delta: _tf().range(start, limit, delta))
_TABLE["LinSpace"] = ("start, stop, num", lambda start, stop, num: _tf().linspace(start, stop, num))
_TABLE["ConcatV2"] = ("values, axis", lambda values, axis: _tf().concat(values, axis))
_TABLE["Concat"] = ("concat_dim, values", lambda concat_dim, values: _tf().concat(values, concat_dim))
_TABLE["Pack"] = ("values, axis=0", lambda values, axis: _tf().stack(values, axis))
_TABLE["Unpack"] = ("value, num, axis=0", lambda value, num, axis: _tf().unstack(value, num, axis))
_TABLE["Split"] = ("axis, value, num_split", lambda axis, value, num_split: _tf().split(value, num_split, axis))
_TABLE["SplitV"] = ("value, size_splits, axis, num_split",
                    lambda value, size_splits, axis, num_split: _tf().split(value, size_splits, axis))
_TABLE["Slice"] = ("input, begin, size", lambda input, begin, size: _tf().slice(input, begin, size))
_TABLE["StridedSlice"] = (
    "input, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0",
    lambda input, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask:
    _tf().strided_slice(input, begin, end, strides, begin_mask=begin_mask, end_mask=end_mask,
                        ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask))
_TABLE["Tile"] = ("input, multiples", lambda input, multiples: _tf().tile(input, multiples))
_TABLE["Pad"] = ("input, paddings", lambda input, paddings: _tf().pad(input, paddings))
_TABLE["PadV2"] = ("input, paddings, constant_values",
                   lambda input, paddings, constant_values: _tf().pad(input, paddings, constant_values=constant_values))
_TABLE["ReverseV2"] = ("tensor, axis", lambda tensor, axis: _tf().reverse(tensor, axis))
_TABLE["Roll"] = ("input, shift, axis", lambda input, shift, axis: _tf().roll(input, shift, axis))
_TABLE["SpaceToDepth"] = ("input, block_size, data_format=NHWC",
                          lambda input, block_size, data_format: _tf().nn.space_to_depth(input, block_size,
                                                                                         data_format))
_TABLE["DepthToSpace"] = ("input, block_size, data_format=NHWC",
                          lambda input, block_size, data_format: _tf().nn.depth_to_space(input, block_size,
                                                                                         data_format))

# Indexing.
_TABLE["GatherV2"] = ("params, indices, axis, batch_dims=0",
                      lambda params, indices, axis, batch_dims: _tf().gather(params, indices, axis=axis,
                                                                             batch_dims=batch_dims))
_TABLE["Gather"] = ("params, indices, validate_indices=True",
                    lambda params, indices, validate_indices: _tf().gather(params, indices))
_TABLE["GatherNd"] = ("params, indices", lambda params, indices: _tf().gather_nd(params, indices))
_TABLE["ScatterNd"] = ("indices, updates, shape", lambda indices, updates, shape: _tf().scatter_nd(indices, updates,
                                                                                                   shape))
for _op, _fn in {"TensorScatterUpdate": "tensor_scatter_nd_update", "TensorScatterAdd": "tensor_scatter_nd_add",
                 "TensorScatterSub": "tensor_scatter_nd_sub", "TensorScatterMax": "tensor_scatter_nd_max",
                 "TensorScatterMin": "tensor_scatter_nd_min"}.items():
    _TABLE[_op] = ("tensor, indices, updates",
                   lambda tensor, indices, updates, _fn=_fn: getattr(_tf(), _fn)(tensor, indices, updates))
_TABLE["Where"] = ("input", lambda input: _tf().where(input))
_TABLE["SelectV2"] = ("condition, t, e", lambda condition, t, e: _tf().where(condition, t, e))
_TABLE["Select"] = ("condition, t, e", _select)
_TABLE["OneHot"] = ("indices, depth, on_value, off_value, axis=-1",
                    lambda indices, depth, on_value, off_value, axis: _tf().one_hot(indices, depth, on_value,
                                                                                    off_value, axis))
_TABLE["TopKV2"] = ("input, k, sorted=True", _top_k)
_TABLE["InTopKV2"] = ("predictions, targets, k",
                      lambda predictions, targets, k: _tf().math.in_top_k(targets, predictions, k))
_TABLE["Unique"] = ("x, out_idx=int32", _unique)
_TABLE["UniqueWithCounts"] = ("x, out_idx=int32", _unique_counts)
_TABLE["LowerBound"] = ("sorted_inputs, values, out_type=int32",
                        lambda sorted_inputs, values, out_type: _tf().searchsorted(sorted_inputs, values, "left",
                                                                                   out_type))
_TABLE["UpperBound"] = ("sorted_inputs, values, out_type=int32",
                        lambda sorted_inputs, values, out_type: _tf().searchsorted(sorted_inputs, values, "right",
                                                                                   out_type))
def _bucketize(input, boundaries):  # noqa: A002
    tf = _tf()
    input = tf.convert_to_tensor(input)
    edges = tf.constant([float(b) for b in boundaries], tf.float64)
    flat = tf.searchsorted(edges, tf.cast(tf.reshape(input, [-1]), tf.float64), side="right", out_type=tf.int32)
    return tf.reshape(flat, tf.shape(input))


_TABLE["Bucketize"] = ("input, boundaries", _bucketize)

# Identity and checks.
_TABLE["Identity"] = ("input", lambda input: _tf().identity(input))
_TABLE["IdentityN"] = ("input", lambda input: _tf().identity_n(input))
_TABLE["Snapshot"] = ("input", lambda input: _tf().identity(input))
_TABLE["StopGradient"] = ("input", lambda input: _tf().stop_gradient(input))
_TABLE["PreventGradient"] = ("input, message=", lambda input, message: _tf().stop_gradient(input))
_TABLE["EnsureShape"] = ("input, shape", lambda input, shape: _tf().ensure_shape(input, shape))
_TABLE["NoOp"] = ("", _no_op)

# Linear algebra.
_TABLE["MatrixInverse"] = ("input, adjoint=False", lambda input, adjoint: _tf().linalg.inv(input, adjoint))
_TABLE["MatrixDeterminant"] = ("input", lambda input: _tf().linalg.det(input))
_TABLE["LogMatrixDeterminant"] = ("input", _log_det)
_TABLE["Cholesky"] = ("input", lambda input: _tf().linalg.cholesky(input))
_TABLE["Qr"] = ("input, full_matrices=False", _qr)
_TABLE["Svd"] = ("input, compute_uv=True, full_matrices=False", _svd)
_TABLE["SelfAdjointEigV2"] = ("input, compute_v=True", _eigh)
_TABLE["MatrixSolve"] = ("matrix, rhs, adjoint=False",
                         lambda matrix, rhs, adjoint: _tf().linalg.solve(matrix, rhs, adjoint))
_TABLE["MatrixTriangularSolve"] = ("matrix, rhs, lower=True, adjoint=False",
                                   lambda matrix, rhs, lower, adjoint: _tf().linalg.triangular_solve(
                                       matrix, rhs, lower, adjoint))
_TABLE["MatrixBandPart"] = ("input, num_lower, num_upper",
                            lambda input, num_lower, num_upper: _tf().linalg.band_part(input, num_lower, num_upper))
_TABLE["MatrixDiag"] = ("diagonal", lambda diagonal: _tf().linalg.diag(diagonal))
_TABLE["MatrixDiagPart"] = ("input", lambda input: _tf().linalg.diag_part(input))
_TABLE["MatrixSetDiag"] = ("input, diagonal", lambda input, diagonal: _tf().linalg.set_diag(input, diagonal))

_TABLE["MatrixSolveLs"] = ("matrix, rhs, l2_regularizer, fast=True",
                           lambda matrix, rhs, l2_regularizer, fast: _tf().linalg.lstsq(matrix, rhs, l2_regularizer,
                                                                                       fast))
_TABLE["MatrixExponential"] = ("input", lambda input: _tf().linalg.expm(input))


def _lu(input, output_idx_type):  # noqa: A002
    lu, p = _tf().linalg.lu(input, output_idx_type)
    return _named("Lu", ("lu", "p"), (lu, p))


def _eig(input, Tout, compute_v):  # noqa: A002, N803
    tf = _tf()
    if compute_v:
        e, v = tf.linalg.eig(input)
        return _named("Eig", ("e", "v"), (e, v))
    return _named("Eig", ("e", "v"), (tf.linalg.eigvals(input), None))


_TABLE["Lu"] = ("input, output_idx_type=int32", _lu)
_TABLE["Eig"] = ("input, Tout, compute_v=True", _eig)

# Neural-network kernels.
_TABLE["Softmax"] = ("logits", lambda logits: _tf().nn.softmax(logits))
_TABLE["LogSoftmax"] = ("logits", lambda logits: _tf().nn.log_softmax(logits))
_TABLE["SoftmaxCrossEntropyWithLogits"] = ("features, labels", _softmax_xent)
_TABLE["SparseSoftmaxCrossEntropyWithLogits"] = ("features, labels", _sparse_softmax_xent)
_TABLE["BiasAdd"] = ("value, bias, data_format=NHWC",
                     lambda value, bias, data_format: _tf().nn.bias_add(value, bias, data_format))
_TABLE["BiasAddV1"] = ("value, bias", lambda value, bias: _tf().nn.bias_add(value, bias))
_TABLE["Conv2D"] = (
    "input, filter, strides, padding, use_cudnn_on_gpu=True, explicit_paddings=[], data_format=NHWC, "
    "dilations=[1, 1, 1, 1]",
    lambda input, filter, strides, padding, use_cudnn_on_gpu, explicit_paddings, data_format, dilations:
    _tf().nn.conv2d(input, filter, strides, _explicit(padding, explicit_paddings), data_format, dilations))
_TABLE["DepthwiseConv2dNative"] = (
    "input, filter, strides, padding, explicit_paddings=[], data_format=NHWC, dilations=[1, 1, 1, 1]",
    lambda input, filter, strides, padding, explicit_paddings, data_format, dilations:
    _tf().nn.depthwise_conv2d(input, filter, strides, _explicit(padding, explicit_paddings), data_format,
                              list(dilations)[1:3]))
_TABLE["MaxPool"] = ("input, ksize, strides, padding, explicit_paddings=[], data_format=NHWC",
                     lambda input, ksize, strides, padding, explicit_paddings, data_format: _tf().nn.max_pool2d(
                         input, ksize, strides, _explicit(padding, explicit_paddings), data_format))
_TABLE["AvgPool"] = ("value, ksize, strides, padding, data_format=NHWC",
                     lambda value, ksize, strides, padding, data_format: _tf().nn.avg_pool2d(
                         value, ksize, strides, padding, data_format))
_TABLE["LRN"] = ("input, depth_radius=5, bias=1, alpha=1, beta=0.5",
                 lambda input, depth_radius, bias, alpha, beta: _tf().nn.local_response_normalization(
                     input, depth_radius, bias, alpha, beta))

_TABLE["Conv3D"] = ("input, filter, strides, padding, data_format=NDHWC, dilations=[1, 1, 1, 1, 1]",
                    lambda input, filter, strides, padding, data_format, dilations: _tf().nn.conv3d(
                        input, filter, strides, padding, data_format, dilations))
for _op, _fn in {"MaxPool3D": "max_pool3d", "AvgPool3D": "avg_pool3d"}.items():
    _TABLE[_op] = ("input, ksize, strides, padding, data_format=NDHWC",
                   lambda input, ksize, strides, padding, data_format, _fn=_fn: getattr(_tf().nn, _fn)(
                       input, ksize, strides, padding, data_format))
_TABLE["Conv2DBackpropInput"] = (
    "input_sizes, filter, out_backprop, strides, padding, use_cudnn_on_gpu=True, explicit_paddings=[], "
    "data_format=NHWC, dilations=[1, 1, 1, 1]",
    lambda input_sizes, filter, out_backprop, strides, padding, use_cudnn_on_gpu, explicit_paddings, data_format,
    dilations: _tf().nn.conv2d_transpose(out_backprop, filter, input_sizes, strides,
                                         _explicit(padding, explicit_paddings), data_format, dilations))


def _bincount(arr, size, weights):
    """Bincount: counts (or summed weights) of each value below size, in the weights' dtype; empty
    weights count ones."""
    tf = _tf()
    weights = tf.convert_to_tensor(weights)
    if weights.shape.num_elements() == 0:
        return tf.cast(tf.math.bincount(arr, minlength=size, maxlength=size), weights.dtype)
    return tf.math.bincount(arr, weights=weights, minlength=size, maxlength=size, dtype=weights.dtype)


_TABLE["Bincount"] = ("arr, size, weights", _bincount)

# Images.
_TABLE["AdjustContrastv2"] = ("images, contrast_factor",
                              lambda images, contrast_factor: _tf().image.adjust_contrast(images, contrast_factor))
_TABLE["AdjustHue"] = ("images, delta", lambda images, delta: _tf().image.adjust_hue(images, delta))
_TABLE["AdjustSaturation"] = ("images, scale", lambda images, scale: _tf().image.adjust_saturation(images, scale))
_TABLE["RGBToHSV"] = ("images", lambda images: _tf().image.rgb_to_hsv(images))
_TABLE["HSVToRGB"] = ("images", lambda images: _tf().image.hsv_to_rgb(images))
_TABLE["ExtractImagePatches"] = ("images, ksizes, strides, rates, padding",
                                 lambda images, ksizes, strides, rates, padding: _tf().image.extract_patches(
                                     images, ksizes, strides, rates, padding))
_TABLE["DecodePng"] = ("contents, channels=0, dtype=uint8",
                       lambda contents, channels, dtype: _tf().image.decode_png(contents, channels, dtype))
_TABLE["EncodePng"] = ("image, compression=-1", lambda image, compression: _tf().image.encode_png(image, compression))

# Bytes and files.
_TABLE["DecodeRaw"] = ("bytes, out_type, little_endian=True",
                       lambda bytes, out_type, little_endian: _tf().io.decode_raw(bytes, out_type, little_endian))
_TABLE["ReadFile"] = ("filename", lambda filename: _tf().io.read_file(filename))
_TABLE["WriteFile"] = ("filename, contents", lambda filename, contents: _tf().io.write_file(filename, contents))
_TABLE["SerializeTensor"] = ("tensor", lambda tensor: _tf().io.serialize_tensor(tensor))
_TABLE["ParseTensor"] = ("serialized, out_type", lambda serialized, out_type: _tf().io.parse_tensor(serialized,
                                                                                                    out_type))

# FFT.
for _op, _fn in {"FFT": "fft", "IFFT": "ifft", "FFT2D": "fft2d", "IFFT2D": "ifft2d", "FFT3D": "fft3d",
                 "IFFT3D": "ifft3d"}.items():
    _TABLE[_op] = ("input", lambda input, _fn=_fn: getattr(_tf().signal, _fn)(input))
for _op, _fn in {"RFFT": "rfft", "RFFT2D": "rfft2d", "RFFT3D": "rfft3d"}.items():
    _TABLE[_op] = ("input, fft_length, Tcomplex=complex64",
                   lambda input, fft_length, Tcomplex, _fn=_fn: getattr(_tf().signal, _fn)(input, fft_length))
for _op, _fn in {"IRFFT": "irfft", "IRFFT2D": "irfft2d", "IRFFT3D": "irfft3d"}.items():
    _TABLE[_op] = ("input, fft_length, Treal=float32",
                   lambda input, fft_length, Treal, _fn=_fn: getattr(_tf().signal, _fn)(input, fft_length))

# Strings.
_TABLE["StringJoin"] = ("inputs, separator=", lambda inputs, separator: _tf().strings.join(inputs, separator))
_TABLE["StringLength"] = ("input, unit=BYTE", lambda input, unit: _tf().strings.length(input, unit))
_TABLE["Substr"] = ("input, pos, len, unit=BYTE",
                    lambda input, pos, len, unit: _tf().strings.substr(input, pos, len, unit=unit))
_TABLE["StringToNumber"] = ("string_tensor, out_type=float32",
                            lambda string_tensor, out_type: _tf().strings.to_number(string_tensor, out_type))
_TABLE["StringUpper"] = ("input, encoding=", lambda input, encoding: _tf().strings.upper(input, encoding))
_TABLE["StringLower"] = ("input, encoding=", lambda input, encoding: _tf().strings.lower(input, encoding))
_TABLE["StringStrip"] = ("input", lambda input: _tf().strings.strip(input))
_TABLE["RegexReplace"] = ("input, pattern, rewrite, replace_global=True",
                          lambda input, pattern, rewrite, replace_global: _tf().strings.regex_replace(
                              input, pattern, rewrite, replace_global))
_TABLE["StaticRegexReplace"] = _TABLE["RegexReplace"]
_TABLE["RegexFullMatch"] = ("input, pattern", lambda input, pattern: _tf().strings.regex_full_match(input, pattern))
_TABLE["StaticRegexFullMatch"] = _TABLE["RegexFullMatch"]
_TABLE["EncodeBase64"] = ("input, pad=False", lambda input, pad: _tf().io.encode_base64(input, pad))
_TABLE["DecodeBase64"] = ("input", lambda input: _tf().io.decode_base64(input))
_TABLE["AsString"] = ("input, precision=-1, scientific=False, shortest=False, width=-1, fill=",
                      lambda input, precision, scientific, shortest, width, fill: _tf().strings.as_string(
                          input, precision, scientific, shortest, width, fill))
_TABLE["ReduceJoin"] = ("inputs, reduction_indices, keep_dims=False, separator=",
                        lambda inputs, reduction_indices, keep_dims, separator: _tf().strings.reduce_join(
                            inputs, reduction_indices, keep_dims, separator))
_TABLE["StringToHashBucket"] = ("string_tensor, num_buckets",
                                lambda string_tensor, num_buckets: _tf().strings.to_hash_bucket(string_tensor,
                                                                                               num_buckets))
_TABLE["StringToHashBucketStrong"] = ("input, num_buckets, key",
                                      lambda input, num_buckets, key: _tf().strings.to_hash_bucket_strong(
                                          input, num_buckets, key))
_TABLE["StringToHashBucketFast"] = ("input, num_buckets",
                                    lambda input, num_buckets: _tf().strings.to_hash_bucket_fast(input, num_buckets))

# Random draws (Kiln's generators: the same distributions, not TF's bits).
_TABLE["RandomUniform"] = ("shape, dtype, seed=0, seed2=0",
                           lambda shape, dtype, seed, seed2: _tf().random.uniform(shape, dtype=dtype,
                                                                                 seed=seed2 or seed or None))
_TABLE["RandomStandardNormal"] = ("shape, dtype, seed=0, seed2=0",
                                  lambda shape, dtype, seed, seed2: _tf().random.normal(shape, dtype=dtype,
                                                                                       seed=seed2 or seed or None))
_TABLE["TruncatedNormal"] = ("shape, dtype, seed=0, seed2=0",
                             lambda shape, dtype, seed, seed2: _tf().random.truncated_normal(
                                 shape, dtype=dtype, seed=seed2 or seed or None))
_TABLE["Multinomial"] = ("logits, num_samples, seed=0, seed2=0, output_dtype=int64",
                         lambda logits, num_samples, seed, seed2, output_dtype: _tf().random.categorical(
                             logits, num_samples, dtype=output_dtype, seed=seed2 or seed or None))
_TABLE["RandomShuffle"] = ("value, seed=0, seed2=0",
                           lambda value, seed, seed2: _tf().random.shuffle(value, seed=seed2 or seed or None))
_TABLE["RandomGamma"] = ("shape, alpha, seed=0, seed2=0",
                         lambda shape, alpha, seed, seed2: _tf().random.gamma(
                             shape, alpha, dtype=_tf().convert_to_tensor(alpha).dtype, seed=seed2 or seed or None))
_TABLE["StatelessRandomUniform"] = ("shape, seed, dtype=float32",
                                    lambda shape, seed, dtype: _tf().random.stateless_uniform(shape, seed,
                                                                                              dtype=dtype))
_TABLE["StatelessRandomNormal"] = ("shape, seed, dtype=float32",
                                   lambda shape, seed, dtype: _tf().random.stateless_normal(shape, seed, dtype=dtype))
_TABLE["StatelessTruncatedNormal"] = ("shape, seed, dtype=float32",
                                      lambda shape, seed, dtype: _tf().random.stateless_truncated_normal(
                                          shape, seed, dtype=dtype))


def _parse(spec):
    """'a, b, flag=False' -> (['a', 'b', 'flag'], {'flag': False}); a default that is not a Python
    literal is a string (a dtype's or a data format's name, NHWC)."""
    names, defaults = [], {}
    depth, part, parts = 0, "", []
    for ch in spec:  # split on the commas outside brackets
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
            continue
        depth += ch in "[(" and 1 or (ch in "])" and -1 or 0)
        part += ch
    if part.strip():
        parts.append(part)
    for p in parts:
        name, eq, default = p.strip().partition("=")
        names.append(name)
        if eq:
            try:
                defaults[name] = _ast.literal_eval(default) if default else ""
            except (ValueError, SyntaxError):
                defaults[name] = default
    return names, defaults


def _make(op, spec, call):
    names, defaults = _parse(spec)

    def raw(*args, **kwargs):
        if args:
            raise TypeError(f"{op} only takes keyword args (possible keys: {names + ['name']}). Please pass these "
                            f"args as kwargs instead.")
        kwargs.pop("name", None)
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise TypeError(f"{op} got an unexpected keyword argument '{unknown[0]}'")
        missing = [n for n in names if n not in kwargs and n not in defaults]
        if missing:
            raise TypeError(f"{op} missing required argument: '{missing[0]}'")
        values = dict(defaults)
        values.update(kwargs)
        return call(**{n: values[n] for n in names})

    raw.__name__ = raw.__qualname__ = op
    raw.__doc__ = f"tf.raw_ops.{op}({', '.join(n + '=' for n in names)}name=None): Kiln maps it onto tf.*."
    raw._kiln_arguments = tuple(names)
    return raw


for _op, (_spec, _call) in sorted(_TABLE.items()):
    globals()[_op] = _make(_op, _spec, _call)

__all__ = sorted(_TABLE)
