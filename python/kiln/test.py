"""kiln.test (tf.test): TestCase with TF's array assertions, tf.test.main, the build queries (Kiln runs on the
CPU: no CUDA, ROCm, XLA or GPU) and compute_gradient (a function's Jacobians, by the tape and by central
differences)."""
import contextlib
import tempfile
import unittest

import numpy as np

from . import _C


def _value(x):
    """A tensor, variable, composite or nest of them as NumPy values (what TestCase.evaluate returns)."""
    from .ragged_tensor import RaggedTensor
    from .sparse_tensor import SparseTensor
    if isinstance(x, (_C.Tensor, _C.Variable)):
        return x.numpy()
    if isinstance(x, RaggedTensor):
        return x.to_list()
    if isinstance(x, SparseTensor):
        return _SparseValue(x.indices.numpy(), x.values.numpy(), x.dense_shape.numpy())
    if isinstance(x, dict):
        return {k: _value(v) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_value(v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(_value(v) for v in x)
    return x


class _SparseValue(tuple):
    """TF's SparseTensorValue: (indices, values, dense_shape)."""
    def __new__(cls, indices, values, dense_shape):
        return super().__new__(cls, (indices, values, dense_shape))

    indices = property(lambda self: self[0])
    values = property(lambda self: self[1])
    dense_shape = property(lambda self: self[2])


def _array(x):
    x = _value(x)
    return x if isinstance(x, np.ndarray) else np.array(x)


class TestCase(unittest.TestCase):
    """unittest.TestCase with TF's assertions on tensors, arrays and nests of them."""

    def evaluate(self, tensors):
        return _value(tensors)

    def get_temp_dir(self):
        if not hasattr(self, "_kiln_temp_dir"):
            self._kiln_temp_dir = tempfile.mkdtemp(prefix="kiln_test_")
        return self._kiln_temp_dir

    @contextlib.contextmanager
    def cached_session(self, *args, **kwargs):
        """TF 2 runs eagerly: the block runs as it is, with no session to hand (TF's yields one)."""
        yield None

    session = cached_session

    def _nested(self, a, b, check, path=""):
        a, b = _value(a), _value(b)
        if isinstance(a, dict) and isinstance(b, dict):
            self.assertEqual(sorted(a), sorted(b), f"mismatched keys at {path or 'top'}")
            for key in a:
                self._nested(a[key], b[key], check, f"{path}[{key!r}]")
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and (
                any(isinstance(v, (dict, list, tuple, _C.Tensor)) for v in list(a) + list(b))):
            self.assertEqual(len(a), len(b), f"mismatched lengths at {path or 'top'}")
            for i, (x, y) in enumerate(zip(a, b)):
                self._nested(x, y, check, f"{path}[{i}]")
        else:
            check(np.asarray(a), np.asarray(b), path)

    def assertAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802 - TF's names
        def check(x, y, path):
            self.assertEqual(x.shape, y.shape, f"Shape mismatch{' at ' + path if path else ''}: expected "
                                               f"{x.shape}, got {y.shape}. {msg or ''}")
            np.testing.assert_allclose(y, x, rtol=rtol, atol=atol, err_msg=msg or "", equal_nan=True)
        self._nested(a, b, check)

    def assertAllCloseAccordingToType(self, a, b, rtol=1e-6, atol=1e-6, float_rtol=1e-6, float_atol=1e-6,  # noqa
                                      half_rtol=1e-3, half_atol=1e-3, bfloat16_rtol=1e-2, bfloat16_atol=1e-2,
                                      msg=None):
        x, y = _array(a), _array(b)
        if np.float32 in (x.dtype, y.dtype) or np.complex64 in (x.dtype, y.dtype):
            rtol, atol = max(rtol, float_rtol), max(atol, float_atol)
        if np.float16 in (x.dtype, y.dtype):
            rtol, atol = max(rtol, half_rtol), max(atol, half_atol)
        self.assertAllClose(x, y, rtol=rtol, atol=atol, msg=msg)

    def assertNotAllClose(self, a, b, rtol=1e-6, atol=1e-6, msg=None):  # noqa: N802
        try:
            self.assertAllClose(a, b, rtol=rtol, atol=atol, msg=msg)
        except AssertionError:
            return
        raise AssertionError(msg or "The two values are close at all elements.")

    def assertAllEqual(self, a, b, msg=None):  # noqa: N802
        def check(x, y, path):
            self.assertEqual(x.shape, y.shape, f"Shape mismatch{' at ' + path if path else ''}: expected "
                                               f"{x.shape}, got {y.shape}. {msg or ''}")
            np.testing.assert_array_equal(x, y, err_msg=msg or "")
        self._nested(a, b, check)

    def assertNotAllEqual(self, a, b, msg=None):  # noqa: N802
        try:
            self.assertAllEqual(a, b, msg=msg)
        except AssertionError:
            return
        raise AssertionError(msg or "Expected unequal values, got equal ones at every element.")

    def assertAllGreater(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_array(a) > comparison_target), f"{_array(a)} not all > {comparison_target}")

    def assertAllGreaterEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_array(a) >= comparison_target), f"{_array(a)} not all >= {comparison_target}")

    def assertAllLess(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_array(a) < comparison_target), f"{_array(a)} not all < {comparison_target}")

    def assertAllLessEqual(self, a, comparison_target):  # noqa: N802
        self.assertTrue(np.all(_array(a) <= comparison_target), f"{_array(a)} not all <= {comparison_target}")

    def assertAllInRange(self, target, lower_bound, upper_bound, open_lower_bound=False,  # noqa: N802
                         open_upper_bound=False):
        x = _array(target)
        low = x > lower_bound if open_lower_bound else x >= lower_bound
        high = x < upper_bound if open_upper_bound else x <= upper_bound
        self.assertTrue(np.all(low & high), f"{x} not all in range [{lower_bound}, {upper_bound}]")

    def assertAllInSet(self, target, expected_set):  # noqa: N802
        values = set(_array(target).ravel().tolist())
        self.assertTrue(values <= set(expected_set), f"{sorted(values - set(expected_set))} not in {expected_set}")

    def assertArrayNear(self, farray1, farray2, err, msg=None):  # noqa: N802
        self.assertEqual(len(farray1), len(farray2), msg)
        for f1, f2 in zip(farray1, farray2):
            self.assertNear(float(f1), float(f2), err, msg)

    def assertNear(self, f1, f2, err, msg=None):  # noqa: N802
        self.assertTrue(f1 == f2 or abs(f1 - f2) <= err, f"{f1} != {f2} +/- {err}{' (' + msg + ')' if msg else ''}")

    def assertShapeEqual(self, input_a, input_b, msg=None):  # noqa: N802
        self.assertEqual(tuple(_array(input_a).shape), tuple(input_b.shape.as_list()), msg)

    def assertDTypeEqual(self, target, expected_dtype):  # noqa: N802
        from . import dtypes
        expected = dtypes.as_dtype(expected_dtype).as_numpy_dtype
        self.assertEqual(_array(target).dtype, np.dtype(expected))

    def assertRaisesWithPredicateMatch(self, exception_type, expected_err_re_or_predicate):  # noqa: N802
        if callable(expected_err_re_or_predicate):
            predicate = expected_err_re_or_predicate
            return self._raises_matching(exception_type, predicate)
        return self.assertRaisesRegex(exception_type, expected_err_re_or_predicate)

    @contextlib.contextmanager
    def _raises_matching(self, exception_type, predicate):
        try:
            yield
        except exception_type as e:
            if not predicate(e):
                raise AssertionError(f"Exception of type {type(e)}: {e}") from e
        else:
            raise AssertionError(f"{exception_type.__name__} not raised")

    def assertRaisesOpError(self, expected_err_re_or_predicate):  # noqa: N802
        return self.assertRaisesWithPredicateMatch(_C.OpError, expected_err_re_or_predicate)


def main(argv=None):
    """Runs the TestCases of the __main__ module (unittest's runner; TF's uses absltest)."""
    return unittest.main(argv=argv)


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    return False


def is_built_with_cuda():
    return False


def is_built_with_rocm():
    return False


def is_built_with_gpu_support():
    return False


def is_built_with_xla():
    return False


def gpu_device_name():
    """The name of a GPU device, or "" when there is none (Kiln: always "")."""
    return ""


def disable_with_predicate(pred, skip_message):
    """A test method decorator: the test is skipped when `pred()` is true."""
    def decorator(func):
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)
        wrapper.__name__ = func.__name__
        return wrapper
    return decorator


def with_eager_op_as_function(cls=None, only_as_function=False):
    """TF runs the class's tests once more with ops run as functions; Kiln has one way to run an op, so the
    class is returned as it is."""
    if cls is None:
        return lambda c: c
    return cls


def compute_gradient(f, x, delta=None):
    """The theoretical (tape) and numerical (central differences) Jacobians of f at x, one 2-D array per input,
    shaped [x size, f(x) size] as TF's gradient checker gives them."""
    from .gradient import GradientTape
    from ._ops import convert_to_tensor, reduce_sum, cast
    xs = [convert_to_tensor(v) for v in x]
    delta = 1.0 / 1024 if delta is None else delta
    y0 = convert_to_tensor(f(*xs))
    y_size = int(np.prod(y0.shape.as_list()))
    theoretical, numerical = [], []
    for i, xi in enumerate(xs):
        x_size = int(np.prod(xi.shape.as_list()))
        jt = np.zeros((x_size, y_size), dtype=np.float64)
        for j in range(y_size):
            picker = np.zeros(y_size)
            picker[j] = 1
            with GradientTape() as tape:
                tape.watch(xi)
                args = list(xs)
                args[i] = xi
                y = convert_to_tensor(f(*args))
                chosen = reduce_sum(y * cast(convert_to_tensor(picker.reshape(y0.shape.as_list())), y.dtype))
            g = tape.gradient(chosen, xi)
            jt[:, j] = 0 if g is None else np.asarray(g.numpy(), np.float64).ravel()
        jn = np.zeros((x_size, y_size), dtype=np.float64)
        base = xi.numpy()
        for k in range(x_size):
            shifted = []
            for sign in (1, -1):
                moved = base.copy().ravel()
                moved[k] += sign * delta
                args = list(xs)
                args[i] = convert_to_tensor(moved.reshape(base.shape).astype(base.dtype))
                shifted.append(np.asarray(convert_to_tensor(f(*args)).numpy(), np.float64).ravel())
            jn[k] = (shifted[0] - shifted[1]) / (2 * delta)
        theoretical.append(jt.astype(base.dtype))
        numerical.append(jn.astype(base.dtype))
    return theoretical, numerical

