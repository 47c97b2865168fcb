"""tf.raw_ops: every entry of Kiln's table called with TF's keyword arguments against the
high-level function it stands for (written here independently, with NumPy or SciPy where the value
is plain), the keyword-only rule, and the count against TF's raw ops."""
import numpy as np
import pytest
import scipy.special

import kiln as tf
from kiln import raw_ops

F = np.array([[0.3, -0.7, 0.1], [0.45, 0.5, -0.2]], np.float32)   # in (-1, 1)
P = np.array([[1.3, 2.7, 1.1], [3.5, 1.5, 2.2]], np.float32)      # > 1
I = np.array([[3, -7, 4], [9, 5, -2]], np.int32)
J = np.array([[2, 3, -3], [4, 5, 3]], np.int32)
M = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float64)  # symmetric positive definite
C = np.array([1 + 2j, -0.5 + 0.25j], np.complex64)
IMG = np.random.default_rng(1).normal(size=(1, 4, 4, 2)).astype(np.float32)
S = np.array([b"Hello", b" Kiln "], object)
VOL = np.random.default_rng(2).normal(size=(1, 2, 3, 3, 1)).astype(np.float32)
RGB = np.random.default_rng(3).uniform(size=(2, 2, 3)).astype(np.float32)
PIXELS = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)

# Unary ops of x, by NumPy / SciPy.
UNARY_NUMPY = {
    "Abs": (F, np.abs),     "Ceil": (F, np.ceil),
    "Cos": (F, np.cos), "Erf": (F, scipy.special.erf),
    "Exp": (F, np.exp),
    "Floor": (F, np.floor), "Inv": (P, np.reciprocal), "IsFinite": (F, np.isfinite),
    "IsInf": (F, np.isinf), "IsNan": (F, np.isnan), "Log": (P, np.log),
    "Log1p": (P, np.log1p), "Neg": (F, np.negative),
    "Reciprocal": (P, np.reciprocal), "Rint": (F * 5, np.rint), "Round": (F * 5, np.round),
    "Rsqrt": (P, lambda x: 1 / np.sqrt(x)), "Sigmoid": (F, scipy.special.expit), "Sign": (F, np.sign),
    "Sin": (F, np.sin), "Sqrt": (P, np.sqrt), "Square": (F, np.square),     "Tanh": (F, np.tanh),     "OnesLike": (F, np.ones_like), "ZerosLike": (F, np.zeros_like),     "LogicalNot": (F > 0, np.logical_not),
}
FEATURES_NUMPY = {
    "Relu": lambda x: np.maximum(x, 0), "Relu6": lambda x: np.clip(x, 0, 6),
    "Elu": lambda x: np.where(x > 0, x, np.expm1(x)),
    "Selu": lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x)),
    "Softplus": lambda x: np.log1p(np.exp(x)), "Softsign": lambda x: x / (1 + np.abs(x)),
}
BINARY_NUMPY = {
    "Add": (F, P, np.add), "AddV2": (F, P, np.add), "Sub": (F, P, np.subtract), "Mul": (F, P, np.multiply),
    "RealDiv": (F, P, np.divide), "Div": (I, J, lambda x, y: np.trunc(x / y).astype(np.int32)),
    "DivNoNan": (F, P * 0, lambda x, y: np.zeros_like(x)), "MulNoNan": (F, P, np.multiply),
    "FloorDiv": (I, J, np.floor_divide), "FloorMod": (I, J, np.mod),
    "TruncateDiv": (I, J, lambda x, y: np.trunc(x / y).astype(np.int32)), "TruncateMod": (I, J, np.fmod),
    "Maximum": (F, P - 2, np.maximum), "Minimum": (F, P - 2, np.minimum), "Pow": (P, F, np.power),
    "SquaredDifference": (F, P, lambda x, y: (x - y) ** 2), "Less": (F, P - 2, np.less),
    "LessEqual": (F, P - 2, np.less_equal), "Greater": (F, P - 2, np.greater),
    "GreaterEqual": (F, P - 2, np.greater_equal), "LogicalAnd": (F > 0, P > 2, np.logical_and),
    "LogicalOr": (F > 0, P > 2, np.logical_or), "Xdivy": (F, P, lambda x, y: x / y),
    "Xlogy": (F, P, lambda x, y: x * np.log(y)),
    "Equal": (I, J, np.equal), "NotEqual": (I, J, np.not_equal), "Mod": (I, J, np.fmod),
}


def close(got, want, rtol=1e-5):
    if isinstance(got, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            close(g, w, rtol)
        return
    got = np.asarray(got.numpy() if hasattr(got, "numpy") else got)
    want = np.asarray(want.numpy() if hasattr(want, "numpy") else want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if got.dtype == object or want.dtype == object or got.dtype.kind in "biuS":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)


# name: (keyword arguments, the high-level call). Every table entry not checked by NumPy above.
CALLS = {
    "LeakyRelu": (dict(features=F, alpha=0.3), lambda: tf.nn.leaky_relu(F, 0.3)),
    "ApproximateEqual": (dict(x=F, y=F + 1e-6), lambda: np.ones(F.shape, bool)),
    "Complex": (dict(real=F[0, :2], imag=P[0, :2]), lambda: F[0, :2] + 1j * P[0, :2]),
    "Real": (dict(input=C), lambda: C.real), "Imag": (dict(input=C), lambda: C.imag),
    "Angle": (dict(input=C), lambda: np.angle(C)), "Conj": (dict(input=C), lambda: np.conj(C)),
    "ComplexAbs": (dict(x=C), lambda: np.abs(C)),
    "Sum": (dict(input=F, axis=1, keep_dims=True), lambda: F.sum(1, keepdims=True)),
    "Prod": (dict(input=F, axis=0), lambda: F.prod(0)), "Max": (dict(input=F, axis=[0, 1]), lambda: F.max()),
    "Min": (dict(input=F, axis=1), lambda: F.min(1)), "Mean": (dict(input=F, axis=0), lambda: F.mean(0)),
    "All": (dict(input=F > -1, axis=1), lambda: (F > -1).all(1)),
    "Any": (dict(input=F > 0.4, axis=0), lambda: (F > 0.4).any(0)),
    "EuclideanNorm": (dict(input=F, axis=1), lambda: np.sqrt((F ** 2).sum(1))),
    "ArgMax": (dict(input=F, dimension=1), lambda: F.argmax(1)),
    "ArgMin": (dict(input=F, dimension=0, output_type=tf.int32), lambda: F.argmin(0).astype(np.int32)),
    "Cumsum": (dict(x=F, axis=1, exclusive=True, reverse=True), lambda: tf.math.cumsum(F, 1, True, True)),
    "Cumprod": (dict(x=F, axis=1), lambda: np.cumprod(F, 1)),
    "CumulativeLogsumexp": (dict(x=F, axis=1), lambda: np.logaddexp.accumulate(F, 1)),
    "AddN": (dict(inputs=[F, P, F]), lambda: F + P + F),
    "AccumulateNV2": (dict(inputs=[F, P], shape=[2, 3]), lambda: F + P),
    "L2Loss": (dict(t=F), lambda: (F ** 2).sum() / 2),
    "ClipByValue": (dict(t=F, clip_value_min=-0.2, clip_value_max=0.35), lambda: np.clip(F, -0.2, 0.35)),
    "SegmentSum": (dict(data=F, segment_ids=[0, 0]), lambda: F.sum(0, keepdims=True)),
    "SegmentMean": (dict(data=F, segment_ids=[0, 1]), lambda: F),
    "UnsortedSegmentSum": (dict(data=F, segment_ids=[1, 1], num_segments=2),
                           lambda: np.stack([np.zeros(3, np.float32), F.sum(0)])),
    "UnsortedSegmentMax": (dict(data=F, segment_ids=[0, 0], num_segments=1), lambda: F.max(0, keepdims=True)),
    "UnsortedSegmentMin": (dict(data=F, segment_ids=[0, 0], num_segments=1), lambda: F.min(0, keepdims=True)),
    "MatMul": (dict(a=F, b=P, transpose_b=True), lambda: F @ P.T),
    "BatchMatMul": (dict(x=F[None], y=P[None], adj_y=True), lambda: (F @ P.T)[None]),
    "BatchMatMulV2": (dict(x=F.T[None], y=P[None], adj_x=False), lambda: (F.T @ P)[None]),
    "BatchMatMulV3": (dict(x=F, y=P.T, Tout=tf.float32), lambda: F @ P.T),
    "Einsum": (dict(inputs=[F, P], equation="ij,kj->ik"), lambda: F @ P.T),
    "Cross": (dict(a=F, b=P), lambda: np.cross(F, P)),
    "Reshape": (dict(tensor=F, shape=[3, 2]), lambda: F.reshape(3, 2)),
    "Transpose": (dict(x=F, perm=[1, 0]), lambda: F.T),
    "ConjugateTranspose": (dict(x=C[None], perm=[1, 0]), lambda: np.conj(C[None]).T),
    "ExpandDims": (dict(input=F, axis=1), lambda: F[:, None]),
    "Squeeze": (dict(input=F[None, :, None]), lambda: F),
    "Shape": (dict(input=F), lambda: np.array([2, 3], np.int32)),
    "Size": (dict(input=F, out_type=tf.int64), lambda: np.int64(6)),
    "Rank": (dict(input=F), lambda: np.int32(2)),
    "Cast": (dict(x=F * 10, DstT=tf.int32), lambda: (F * 10).astype(np.int32)),
    "BroadcastTo": (dict(input=F[0], shape=[2, 3]), lambda: np.broadcast_to(F[0], (2, 3))),
    "BroadcastArgs": (dict(s0=[2, 1], s1=[3]), lambda: np.array([2, 3], np.int32)),
    "Fill": (dict(dims=[2, 2], value=7), lambda: np.full((2, 2), 7, np.int32)),
    "Range": (dict(start=1, limit=10, delta=3), lambda: np.arange(1, 10, 3, dtype=np.int32)),
    "LinSpace": (dict(start=0.0, stop=1.0, num=5), lambda: np.linspace(0, 1, 5, dtype=np.float32)),
    "ConcatV2": (dict(values=[F, P], axis=1), lambda: np.concatenate([F, P], 1)),
    "Concat": (dict(concat_dim=0, values=[F, P]), lambda: np.concatenate([F, P], 0)),
    "Pack": (dict(values=[F, P], axis=1), lambda: np.stack([F, P], 1)),
    "Unpack": (dict(value=F, num=2), lambda: [F[0], F[1]]),
    "Split": (dict(axis=1, value=F, num_split=3), lambda: np.split(F, 3, 1)),
    "SplitV": (dict(value=F, size_splits=[1, 2], axis=1, num_split=2), lambda: [F[:, :1], F[:, 1:]]),
    "Slice": (dict(input=F, begin=[0, 1], size=[2, -1]), lambda: F[:, 1:]),
    "StridedSlice": (dict(input=F, begin=[0, 2], end=[2, 0], strides=[1, -1], shrink_axis_mask=0),
                     lambda: F[0:2, 2:0:-1]),
    "Tile": (dict(input=F, multiples=[2, 1]), lambda: np.tile(F, (2, 1))),
    "Pad": (dict(input=F, paddings=[[1, 0], [0, 2]]), lambda: np.pad(F, [[1, 0], [0, 2]])),
    "PadV2": (dict(input=F, paddings=[[1, 0], [0, 2]], constant_values=5.0),
              lambda: np.pad(F, [[1, 0], [0, 2]], constant_values=5)),
    "ReverseV2": (dict(tensor=F, axis=[1]), lambda: F[:, ::-1]),
    "Roll": (dict(input=F, shift=1, axis=1), lambda: np.roll(F, 1, 1)),
    "SpaceToDepth": (dict(input=IMG, block_size=2), lambda: tf.nn.space_to_depth(IMG, 2)),
    "DepthToSpace": (dict(input=tf.nn.space_to_depth(IMG, 2), block_size=2), lambda: IMG),
    "GatherV2": (dict(params=F, indices=[2, 0], axis=1), lambda: F[:, [2, 0]]),
    "Gather": (dict(params=F, indices=[1, 1]), lambda: F[[1, 1]]),
    "GatherNd": (dict(params=F, indices=[[1, 2], [0, 0]]), lambda: F[[1, 0], [2, 0]]),
    "ScatterNd": (dict(indices=[[1], [0]], updates=[5, 6], shape=[3]), lambda: np.array([6, 5, 0], np.int32)),
    "TensorScatterUpdate": (dict(tensor=F, indices=[[0, 0]], updates=[9.0]),
                            lambda: np.where(np.arange(6).reshape(2, 3) == 0, 9.0, F)),
    "TensorScatterAdd": (dict(tensor=F, indices=[[1]], updates=[P[1]]), lambda: F + np.stack([0 * P[1], P[1]])),
    "TensorScatterSub": (dict(tensor=F, indices=[[1]], updates=[P[1]]), lambda: F - np.stack([0 * P[1], P[1]])),
    "TensorScatterMax": (dict(tensor=F, indices=[[0]], updates=[np.zeros(3, np.float32)]),
                         lambda: np.stack([np.maximum(F[0], 0), F[1]])),
    "TensorScatterMin": (dict(tensor=F, indices=[[0]], updates=[np.zeros(3, np.float32)]),
                         lambda: np.stack([np.minimum(F[0], 0), F[1]])),
    "Where": (dict(input=F > 0.2), lambda: np.argwhere(F > 0.2)),
    "SelectV2": (dict(condition=F > 0, t=F, e=P), lambda: np.where(F > 0, F, P)),
    "Select": (dict(condition=[True, False], t=F, e=P), lambda: np.stack([F[0], P[1]])),
    "OneHot": (dict(indices=[2, 0], depth=3, on_value=5.0, off_value=-1.0),
               lambda: np.array([[-1, -1, 5], [5, -1, -1]], np.float32)),
    "TopKV2": (dict(input=F, k=2), lambda: tf.math.top_k(F, 2)),
    "InTopKV2": (dict(predictions=F, targets=[1, 1], k=2), lambda: np.array([False, True])),
    "Unique": (dict(x=[3, 1, 3, 2]), lambda: tf.unique([3, 1, 3, 2])),
    "UniqueWithCounts": (dict(x=[3, 1, 3]), lambda: tf.unique_with_counts([3, 1, 3])),
    "LowerBound": (dict(sorted_inputs=[[1.0, 2.0, 2.0, 3.0]], values=[[2.0, 2.5]]),
                   lambda: np.array([[1, 3]], np.int32)),
    "UpperBound": (dict(sorted_inputs=[[1.0, 2.0, 2.0, 3.0]], values=[[2.0, 2.5]]),
                   lambda: np.array([[3, 3]], np.int32)),
    "Bucketize": (dict(input=[[-5, 10000], [150, 10]], boundaries=[0.0, 10.0, 100.0]),
                  lambda: np.array([[0, 3], [3, 2]], np.int32)),  # TF's documented example
    "Identity": (dict(input=F), lambda: F), "Snapshot": (dict(input=F), lambda: F),
    "IdentityN": (dict(input=[F, P]), lambda: [F, P]), "StopGradient": (dict(input=F), lambda: F),
    "PreventGradient": (dict(input=F), lambda: F),
    "EnsureShape": (dict(input=F, shape=[2, None]), lambda: F),
    "MatrixInverse": (dict(input=M), lambda: np.linalg.inv(M)),
    "MatrixDeterminant": (dict(input=M), lambda: np.linalg.det(M)),
    "LogMatrixDeterminant": (dict(input=M), lambda: list(np.linalg.slogdet(M))),
    "Cholesky": (dict(input=M), lambda: np.linalg.cholesky(M)),
    "MatrixSolve": (dict(matrix=M, rhs=M[:, :1]), lambda: np.linalg.solve(M, M[:, :1])),
    "MatrixTriangularSolve": (dict(matrix=np.tril(M), rhs=M[:, :1]), lambda: np.linalg.solve(np.tril(M), M[:, :1])),
    "MatrixBandPart": (dict(input=M, num_lower=0, num_upper=-1), lambda: np.triu(M)),
    "MatrixDiag": (dict(diagonal=F), lambda: np.stack([np.diag(r) for r in F])),
    "MatrixDiagPart": (dict(input=M), lambda: np.diag(M)),
    "MatrixSetDiag": (dict(input=M, diagonal=[1.0, 2.0, 3.0]),
                      lambda: M - np.diag(np.diag(M)) + np.diag([1.0, 2.0, 3.0])),
    "Softmax": (dict(logits=F), lambda: scipy.special.softmax(F, 1)),
    "LogSoftmax": (dict(logits=F), lambda: scipy.special.log_softmax(F, 1)),
    "SoftmaxCrossEntropyWithLogits": (
        dict(features=F, labels=np.eye(3, dtype=np.float32)[[0, 2]]),
        lambda: [-(np.eye(3)[[0, 2]] * scipy.special.log_softmax(F, 1)).sum(1),
                 scipy.special.softmax(F, 1) - np.eye(3)[[0, 2]]]),
    "SparseSoftmaxCrossEntropyWithLogits": (
        dict(features=F, labels=[0, 2]),
        lambda: [-(np.eye(3)[[0, 2]] * scipy.special.log_softmax(F, 1)).sum(1),
                 scipy.special.softmax(F, 1) - np.eye(3)[[0, 2]]]),
    "BiasAdd": (dict(value=F, bias=P[0]), lambda: F + P[0]),
    "BiasAddV1": (dict(value=F, bias=P[0]), lambda: F + P[0]),
    "Conv2D": (dict(input=IMG, filter=np.ones((2, 2, 2, 1), np.float32), strides=[1, 1, 1, 1], padding="EXPLICIT",
                    explicit_paddings=[0, 0, 1, 0, 0, 1, 0, 0]),
               lambda: tf.nn.conv2d(IMG, np.ones((2, 2, 2, 1), np.float32), 1, [[0, 0], [1, 0], [0, 1], [0, 0]])),
    "DepthwiseConv2dNative": (dict(input=IMG, filter=np.ones((2, 2, 2, 1), np.float32), strides=[1, 1, 1, 1],
                                   padding="VALID"),
                              lambda: tf.nn.depthwise_conv2d(IMG, np.ones((2, 2, 2, 1), np.float32), [1, 1, 1, 1],
                                                             "VALID")),
    "MaxPool": (dict(input=IMG, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
                lambda: IMG.reshape(1, 2, 2, 2, 2, 2).max(axis=(2, 4))),
    "AvgPool": (dict(value=IMG, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID"),
                lambda: IMG.reshape(1, 2, 2, 2, 2, 2).mean(axis=(2, 4))),
    "LRN": (dict(input=IMG, depth_radius=1), lambda: tf.nn.local_response_normalization(IMG, 1)),
    "FFT": (dict(input=C), lambda: np.fft.fft(C)), "IFFT": (dict(input=C), lambda: np.fft.ifft(C)),
    "FFT2D": (dict(input=C[None]), lambda: np.fft.fft2(C[None])),
    "IFFT2D": (dict(input=C[None]), lambda: np.fft.ifft2(C[None])),
    "FFT3D": (dict(input=C[None, None]), lambda: np.fft.fftn(C[None, None])),
    "IFFT3D": (dict(input=C[None, None]), lambda: np.fft.ifftn(C[None, None])),
    "RFFT": (dict(input=F, fft_length=[3]), lambda: np.fft.rfft(F)),
    "IRFFT": (dict(input=np.fft.rfft(F).astype(np.complex64), fft_length=[3]), lambda: F),
    "RFFT2D": (dict(input=F, fft_length=[2, 3]), lambda: np.fft.rfft2(F)),
    "IRFFT2D": (dict(input=np.fft.rfft2(F).astype(np.complex64), fft_length=[2, 3]), lambda: F),
    "RFFT3D": (dict(input=F[None], fft_length=[1, 2, 3]), lambda: np.fft.rfftn(F[None])),
    "IRFFT3D": (dict(input=np.fft.rfftn(F[None]).astype(np.complex64), fft_length=[1, 2, 3]), lambda: F[None]),
    "StringJoin": (dict(inputs=[S, S], separator="-"), lambda: np.array([b"Hello-Hello", b" Kiln - Kiln "], object)),
    "StringLength": (dict(input=S), lambda: np.array([5, 6], np.int32)),
    "Substr": (dict(input=S, pos=1, len=2), lambda: np.array([b"el", b"Ki"], object)),
    "StringToNumber": (dict(string_tensor=["1.5", "-2"]), lambda: np.float32([1.5, -2])),
    "StringUpper": (dict(input=S), lambda: np.array([b"HELLO", b" KILN "], object)),
    "StringLower": (dict(input=S), lambda: np.array([b"hello", b" kiln "], object)),
    "StringStrip": (dict(input=S), lambda: np.array([b"Hello", b"Kiln"], object)),
    "RegexReplace": (dict(input=S, pattern="l+", rewrite="L"), lambda: np.array([b"HeLo", b" KiLn "], object)),
    "StaticRegexReplace": (dict(input=S, pattern="l", rewrite="_", replace_global=False),
                           lambda: np.array([b"He_lo", b" Ki_n "], object)),
    "RegexFullMatch": (dict(input=S, pattern="H.*"), lambda: np.array([True, False])),
    "StaticRegexFullMatch": (dict(input=S, pattern=".*n.*"), lambda: np.array([False, True])),
    "EncodeBase64": (dict(input=S), lambda: tf.io.encode_base64(S)),
    "DecodeBase64": (dict(input=tf.io.encode_base64(S)), lambda: S),
    "AsString": (dict(input=[1.5, 2.0], precision=2), lambda: np.array([b"1.50", b"2.00"], object)),
    "ReduceJoin": (dict(inputs=[["a", "b"], ["c", "d"]], reduction_indices=1, separator=","),
                   lambda: np.array([b"a,b", b"c,d"], object)),
    "StringToHashBucketFast": (dict(input=S, num_buckets=10), lambda: tf.strings.to_hash_bucket_fast(S, 10)),
    "StatelessRandomUniform": (dict(shape=[3], seed=[1, 2]), lambda: tf.random.stateless_uniform([3], [1, 2])),
    "StatelessRandomNormal": (dict(shape=[3], seed=[1, 2]), lambda: tf.random.stateless_normal([3], [1, 2])),
    "StatelessTruncatedNormal": (dict(shape=[3], seed=[1, 2]),
                                 lambda: tf.random.stateless_truncated_normal([3], [1, 2])),
    "Qr": (dict(input=M), lambda: list(np.linalg.qr(M))),
    "NoOp": (dict(), lambda: None),
    "Conv3D": (dict(input=VOL, filter=np.ones((2, 2, 2, 1, 1), np.float32), strides=[1, 1, 1, 1, 1], padding="VALID"),
               lambda: np.stack([VOL[0, i:i + 2, j:j + 2, k:k + 2, 0].sum() for i in range(1) for j in range(2)
                                 for k in range(2)]).reshape(1, 1, 2, 2, 1)),
    "MaxPool3D": (dict(input=VOL, ksize=[1, 2, 3, 3, 1], strides=[1, 1, 1, 1, 1], padding="VALID"),
                  lambda: VOL.max(axis=(1, 2, 3), keepdims=True)),
    "AvgPool3D": (dict(input=VOL, ksize=[1, 2, 3, 3, 1], strides=[1, 1, 1, 1, 1], padding="VALID"),
                  lambda: VOL.mean(axis=(1, 2, 3), keepdims=True)),
    "Conv2DBackpropInput": (dict(input_sizes=[1, 4, 4, 2], filter=np.ones((2, 2, 2, 3), np.float32),
                                 out_backprop=np.ones((1, 2, 2, 3), np.float32), strides=[1, 2, 2, 1],
                                 padding="VALID"),
                            lambda: np.full((1, 4, 4, 2), 3.0, np.float32)),  # each input pixel in one window
    "Bincount": (dict(arr=[1, 1, 3], size=5, weights=np.array([], np.float32)),
                 lambda: np.float32([0, 2, 0, 1, 0])),
    "MatrixSolveLs": (dict(matrix=M, rhs=M[:, :1], l2_regularizer=0.0), lambda: np.linalg.solve(M, M[:, :1])),
    "MatrixExponential": (dict(input=np.diag([1.0, 2.0])), lambda: np.diag(np.exp([1.0, 2.0]))),
    "Lu": (dict(input=M), lambda: tf.linalg.lu(M)),
    "AdjustContrastv2": (dict(images=IMG, contrast_factor=2.0),
                         lambda: (IMG - IMG.mean(axis=(1, 2), keepdims=True)) * 2 + IMG.mean(axis=(1, 2), keepdims=True)),
    "AdjustHue": (dict(images=RGB, delta=0.0), lambda: RGB),
    "AdjustSaturation": (dict(images=RGB, scale=1.0), lambda: RGB),
    "RGBToHSV": (dict(images=np.float32([[1, 0, 0], [0, 0.5, 0]])), lambda: np.float32([[0, 1, 1], [1 / 3, 1, 0.5]])),
    "HSVToRGB": (dict(images=np.float32([[0, 1, 1], [1 / 3, 1, 0.5]])), lambda: np.float32([[1, 0, 0], [0, 0.5, 0]])),
    "ExtractImagePatches": (dict(images=IMG, ksizes=[1, 2, 2, 1], strides=[1, 2, 2, 1], rates=[1, 1, 1, 1],
                                 padding="VALID"),
                            lambda: IMG.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 2, 8)),
    "DecodePng": (dict(contents=tf.image.encode_png(PIXELS)), lambda: PIXELS),
    "EncodePng": (dict(image=PIXELS, compression=9), lambda: tf.image.encode_png(PIXELS, 9)),
    "DecodeRaw": (dict(bytes=[np.int32([1, 2]).tobytes()], out_type=tf.int32), lambda: np.int32([[1, 2]])),
    "SerializeTensor": (dict(tensor=F), lambda: tf.io.serialize_tensor(F)),
    "ParseTensor": (dict(serialized=tf.io.serialize_tensor(F), out_type=tf.float32), lambda: F),
    "StringToHashBucket": (dict(string_tensor=S, num_buckets=7), lambda: tf.strings.to_hash_bucket(S, 7)),
    "StringToHashBucketStrong": (dict(input=S, num_buckets=7, key=[1, 2]),
                                 lambda: tf.strings.to_hash_bucket_strong(S, 7, [1, 2])),
}
# Results checked by a property rather than a value.
PROPERTIES = {
    "Svd": (dict(input=M), lambda out: close(out.u @ np.diag(out.s.numpy()) @ out.v.numpy().T, M)),
    "SelfAdjointEigV2": (dict(input=M), lambda out: close(out.v @ np.diag(out.e.numpy()) @ out.v.numpy().T, M)),
    "RandomUniform": (dict(shape=[500], dtype=tf.float32, seed=3),
                      lambda out: (out.shape == [500]) and 0 <= out.numpy().min() and out.numpy().max() < 1),
    "RandomStandardNormal": (dict(shape=[500], dtype=tf.float64, seed=3),
                             lambda out: out.dtype == tf.float64 and abs(out.numpy().mean()) < 0.2),
    "TruncatedNormal": (dict(shape=[500], dtype=tf.float32, seed=3), lambda out: np.abs(out.numpy()).max() <= 2),
    "Eig": (dict(input=M, Tout=tf.complex128),
            lambda out: close(out.v @ np.diag(out.e.numpy()) @ np.linalg.inv(out.v.numpy()), M.astype(complex))),
    "Multinomial": (dict(logits=[[0.0, 30.0, 0.0]], num_samples=20, seed=4),
                    lambda out: out.dtype == tf.int64 and set(out.numpy().ravel()) == {1}),
    "RandomShuffle": (dict(value=np.arange(10), seed=4), lambda out: sorted(out.numpy()) == list(range(10))),
    "RandomGamma": (dict(shape=[400], alpha=np.float32([2.0]), seed=4),
                    lambda out: out.shape == [400, 1] and abs(out.numpy().mean() - 2.0) < 0.4),
}


def test_every_entry_has_a_check():
    checked = set(UNARY_NUMPY) | set(FEATURES_NUMPY) | set(BINARY_NUMPY) | set(CALLS) | set(PROPERTIES) | {
        "ReadFile", "WriteFile"}  # test_files
    assert sorted(set(raw_ops.__all__) - checked) == []
    assert sorted(checked - set(raw_ops.__all__)) == []


@pytest.mark.parametrize("op", sorted(UNARY_NUMPY))
def test_unary(op):
    x, ref = UNARY_NUMPY[op]
    close(getattr(raw_ops, op)(x=x), ref(x), rtol=2e-5)


@pytest.mark.parametrize("op", sorted(FEATURES_NUMPY))
def test_activation(op):
    close(getattr(raw_ops, op)(features=F), FEATURES_NUMPY[op](F))


@pytest.mark.parametrize("op", sorted(BINARY_NUMPY))
def test_binary(op):
    x, y, ref = BINARY_NUMPY[op]
    close(getattr(raw_ops, op)(x=x, y=y), ref(x, y))


@pytest.mark.parametrize("op", sorted(CALLS))
def test_call_matches_the_high_level_function(op):
    kwargs, want = CALLS[op]
    got = getattr(raw_ops, op)(**kwargs, name="raw")
    if got is None:
        assert want() is None
        return
    close(list(got) if isinstance(got, tuple) else got, want(), rtol=2e-5)


@pytest.mark.parametrize("op", sorted(PROPERTIES))
def test_property(op):
    kwargs, check = PROPERTIES[op]
    assert check(getattr(raw_ops, op)(**kwargs)) is not False


def test_files(tmp_path):
    path = str(tmp_path / "raw.bin")
    assert raw_ops.WriteFile(filename=path, contents=b"kiln\x00bytes") is None
    assert raw_ops.ReadFile(filename=path).numpy() == b"kiln\x00bytes"


def test_keyword_only_and_argument_errors():
    with pytest.raises(TypeError, match="only takes keyword args"):
        raw_ops.MatMul(F, P)
    with pytest.raises(TypeError, match="missing required argument: 'b'"):
        raw_ops.MatMul(a=F)
    with pytest.raises(TypeError, match="unexpected keyword argument 'transpose'"):
        raw_ops.MatMul(a=F, b=P, transpose=True)
    assert raw_ops.MatMul._kiln_arguments == ("a", "b", "transpose_a", "transpose_b", "grad_a", "grad_b")


def test_multi_output_ops_are_named_tuples():
    out = raw_ops.TopKV2(input=F, k=1)
    assert type(out).__name__ == "TopKV2" and out._fields == ("values", "indices")
    assert raw_ops.Unique(x=[1, 1])._fields == ("y", "idx")


def test_in_a_function():
    @tf.function
    def f(a, b):
        return raw_ops.MatMul(a=a, b=b, transpose_a=True)

    close(f(tf.constant(F), tf.constant(F)), F.T @ F)


def test_count_against_tf():
    # TF's API golden file (tensorflow.raw_ops.pbtxt) lists about 1,300 raw ops; Kiln maps the ones its
    # tf.* functions compute (236 when written).
    assert len(raw_ops.__all__) >= 236
