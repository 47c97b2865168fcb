"""tf.* creation, shape, selection and math composites (issue #42) against NumPy float64
references, eagerly and inside kiln.function, with gradients against central differences."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients

rng = np.random.default_rng(42)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 5))
V = rng.normal(size=(6,))


def run_both(fn, *args):
    """fn(*args) eagerly and through kiln.function; both results as NumPy (nested lists kept)."""
    eager = fn(*args)
    traced = tf.function(fn)(*args)

    def to_np(r):
        if isinstance(r, (list, tuple)):
            return [to_np(x) for x in r]
        return r.numpy()
    return to_np(eager), to_np(traced)


def assert_both(fn, args, expected, rtol=1e-7, atol=1e-9, dtype=None):
    for got in run_both(fn, *args):
        if isinstance(expected, list):
            for g, e in zip(got, expected):
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
            if dtype is not None:
                assert got.dtype == dtype


def c(x):
    return tf.constant(np.asarray(x))


# ---- creation and broadcasting ----------------------------------------------------------

def test_linspace_values_axis_and_endpoints():
    assert_both(lambda a, b: tf.linspace(a, b, 7), [c(-1.5), c(2.25)], np.linspace(-1.5, 2.25, 7))
    starts, stops = np.array([0.0, 1.0]), np.array([1.0, -3.0])
    assert_both(lambda a, b: tf.linspace(a, b, 4, axis=-1), [c(starts), c(stops)],
                np.linspace(starts, stops, 4, axis=-1))
    assert_both(lambda a, b: tf.linspace(a, b, 4), [c(starts), c(stops)], np.linspace(starts, stops, 4))
    assert tf.linspace(0, 1, 3).dtype == tf.float32  # integers become float32, as TF
    assert tf.linspace(2.0, 5.0, 1).numpy().tolist() == [2.0]
    check_gradients(lambda a, b: tf.reduce_sum(tf.linspace(a[0], b[0], 5) * c([1.0, 2.0, 3.0, 4.0, 5.0])),
                    [c([0.5]), c([2.0])])


def test_eye():
    assert_both(lambda: tf.eye(3, dtype=tf.float64), [], np.eye(3))
    assert_both(lambda: tf.eye(2, 4, batch_shape=[3], dtype=tf.int32), [], np.broadcast_to(np.eye(2, 4), (3, 2, 4)))


def test_broadcast_to_and_shapes():
    assert_both(lambda x: tf.broadcast_to(x, [3, 2, 4]), [c(A[:1, :1] * np.ones((2, 4)))],
                np.broadcast_to(A[:1, :1] * np.ones((2, 4)), (3, 2, 4)))
    assert tf.broadcast_to(tf.constant([True, False]), [2, 2]).numpy().tolist() == [[True, False]] * 2
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.broadcast_to(tf.constant([1, 2, 3]), [2, 4])
    check_gradients(lambda x: tf.reduce_sum(tf.broadcast_to(x, [4, 3]) * c(np.arange(12.0).reshape(4, 3))), [c(V[:3])])
    assert_both(lambda x, y: tf.broadcast_to(x, tf.shape(y)), [c(V[:3]), c(A[:, :3])], np.broadcast_to(V[:3], (3, 3)))
    assert tf.broadcast_static_shape(tf.TensorShape([5, 1, 3]), tf.TensorShape([4, 1])).as_list() == [5, 4, 3]
    with pytest.raises(ValueError):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))
    assert_both(lambda a, b: tf.broadcast_dynamic_shape(a, b), [c(np.int32([5, 1, 3])), c(np.int32([4, 1]))], [5, 4, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.broadcast_dynamic_shape([2], [3])


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    x, y, z = np.arange(3.0), np.arange(2.0) + 10, np.arange(4.0) - 5
    expected = np.meshgrid(x, y, z, indexing=indexing)
    assert_both(lambda a, b, d: tf.meshgrid(a, b, d, indexing=indexing), [c(x), c(y), c(z)], list(expected))
    weights = c(rng.normal(size=expected[0].shape))
    check_gradients(lambda a: tf.reduce_sum(tf.meshgrid(a, c(y), c(z), indexing=indexing)[0] * weights), [c(x)])


@pytest.mark.parametrize("axes", [1, 0, [[1], [0]], ([0, 1], [1, 0])])
def test_tensordot(axes):
    a, b = (A, B) if axes != ([0, 1], [1, 0]) else (A, A.T.copy())
    assert_both(lambda x, y: tf.tensordot(x, y, axes), [c(a), c(b)], np.tensordot(a, b, axes))
    check_gradients(lambda x, y: tf.reduce_sum(tf.square(tf.tensordot(x, y, axes))), [c(a), c(b)])


def test_tensordot_bad_axes():
    with pytest.raises(ValueError):
        tf.tensordot(c(A), c(B), [[0, 1], [0]])


# ---- reordering ----------------------------------------------------------------------------

def test_roll_and_reverse():
    assert_both(lambda x: tf.roll(x, 2, 1), [c(A)], np.roll(A, 2, 1))
    assert_both(lambda x: tf.roll(x, [-1, 5], [0, 1]), [c(A)], np.roll(A, (-1, 5), (0, 1)))
    assert_both(lambda x: tf.roll(x, [1, 1], [1, 1]), [c(A)], np.roll(A, 2, 1))
    assert_both(lambda x, s: tf.roll(x, s, 0), [c(V), tf.constant(4)], np.roll(V, 4))
    assert_both(lambda x: tf.reverse(x, [0, -1]), [c(A)], A[::-1, ::-1])
    weights = c(rng.normal(size=A.shape))
    check_gradients(lambda x: tf.reduce_sum(tf.roll(x, [1, -2], [0, 1]) * weights), [c(A)])
    check_gradients(lambda x: tf.reduce_sum(tf.reverse(x, [1]) * weights), [c(A)])


def test_repeat_and_tile():
    assert_both(lambda x: tf.repeat(x, 2), [c(A)], np.repeat(A, 2))
    assert_both(lambda x: tf.repeat(x, [1, 0, 3], axis=0), [c(A)], np.repeat(A, [1, 0, 3], axis=0))
    assert_both(lambda x, r: tf.repeat(x, r, axis=1), [c(A), tf.constant([2, 1, 1, 0])],
                np.repeat(A, [2, 1, 1, 0], axis=1))
    assert_both(lambda x, m: tf.tile(x, m), [c(A), tf.constant([2, 3])], np.tile(A, (2, 3)))
    assert_both(lambda x: tf.tile(x, tf.shape(x)[::-1]), [c(A[:2, :3])], np.tile(A[:2, :3], (3, 2)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.tile(c(A), [2])
    weights = c(rng.normal(size=(6, 4)))
    check_gradients(lambda x: tf.reduce_sum(tf.repeat(x, [2, 1, 3], axis=0) * weights), [c(A)])
    check_gradients(lambda x: tf.reduce_sum(tf.tile(x, tf.constant([2, 1])) * weights), [c(A)])


def test_static_counts_in_a_trace_need_no_host_function():
    @tf.function
    def f(x):
        return tf.repeat(x, [1, 2, 0], axis=0), tf.tile(x, tf.shape(x)[::-1]), tf.boolean_mask(x, [True, False, True])
    graph = str(f.get_concrete_function(c(A[:3, :2])).graph)
    assert "Host" not in graph and "PyFunc" not in graph and "py_function" not in graph.lower()
    r, t, m = f(c(A[:3, :2]))
    np.testing.assert_array_equal(r.numpy(), np.repeat(A[:3, :2], [1, 2, 0], axis=0))
    np.testing.assert_array_equal(t.numpy(), np.tile(A[:3, :2], (2, 3)))
    np.testing.assert_array_equal(m.numpy(), A[:3, :2][[True, False, True]])


def test_unstack_num_checked():
    assert len(tf.unstack(c(A), num=4, axis=1)) == 4
    with pytest.raises(ValueError):
        tf.unstack(c(A), num=5)


# ---- selection --------------------------------------------------------------------------

def test_boolean_mask():
    x = rng.normal(size=(2, 3, 4))
    m = np.array([[True, False, True], [False, False, True]])
    assert_both(lambda a, b: tf.boolean_mask(a, b), [c(x), c(m)], x[m])
    m1 = np.array([True, False, False, True])
    assert_both(lambda a, b: tf.boolean_mask(a, b, axis=2), [c(x), c(m1)], x[:, :, m1])
    assert_both(lambda a, b: tf.boolean_mask(a, b), [c(x), c(np.zeros((2, 3), bool))], x[np.zeros((2, 3), bool)])
    with pytest.raises(ValueError):
        tf.boolean_mask(c(x), c(np.array([True, False, True])))
    weights = c(rng.normal(size=(3, 4)))
    check_gradients(lambda a: tf.reduce_sum(tf.boolean_mask(a, c(m)) * weights), [c(x)])

    @tf.function
    def grad_in_graph(a, b):
        with tf.GradientTape() as tape:
            tape.watch(a)
            y = tf.reduce_sum(tf.boolean_mask(a, b) * 2.0)
        return tape.gradient(y, a)
    np.testing.assert_allclose(grad_in_graph(c(x), c(m)).numpy(), 2.0 * np.broadcast_to(m[..., None], x.shape))


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    seq = np.sort(rng.integers(0, 5, size=(3, 8)).astype(np.float64), axis=-1)
    vals = rng.integers(-1, 7, size=(3, 5)).astype(np.float64)
    expected = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seq, vals)])
    assert_both(lambda s, v: tf.searchsorted(s, v, side=side), [c(seq), c(vals)], expected, dtype=np.int32)
    assert tf.searchsorted([1, 3, 5], [3], side=side, out_type=tf.int64).dtype == tf.int64
    with pytest.raises(ValueError):
        tf.searchsorted([1.0], [1.0], side="middle")


def test_histogram_and_bincount():
    values = np.array([-1.0, 0.0, 1.5, 2.0, 5.0, 12.0, 4.99])
    expected = np.histogram(np.clip(values, 0, 4.999), bins=5, range=(0, 5))[0]
    assert_both(lambda v: tf.histogram_fixed_width(v, [0.0, 5.0], nbins=5), [c(values)], expected, dtype=np.int32)
    arr = np.array([1, 1, 4, 0, 4, 4])
    np.testing.assert_array_equal(tf.bincount(c(np.int32(arr))).numpy(), np.bincount(arr))
    np.testing.assert_array_equal(tf.bincount(c(np.int32(arr)), minlength=8).numpy(), np.bincount(arr, minlength=8))
    np.testing.assert_array_equal(tf.bincount(c(np.int32(arr)), maxlength=3).numpy(), np.bincount(arr)[:3])
    w = rng.normal(size=6)
    np.testing.assert_allclose(tf.bincount(c(np.int32(arr)), weights=c(w)).numpy(), np.bincount(arr, w))
    np.testing.assert_array_equal(tf.bincount(c(np.int32(arr)), binary_output=True, dtype=tf.float32).numpy(),
                                  np.bincount(arr) > 0)
    traced = tf.function(lambda a: tf.bincount(a, minlength=6, maxlength=6))
    np.testing.assert_array_equal(traced(c(np.int32(arr))).numpy(), np.bincount(arr, minlength=6))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.bincount(tf.constant([-1, 2]))


def test_unique_and_counts():
    x = np.array([4, 1, 4, 7, 1, 1, 9])
    y, idx, count = [4, 1, 7, 9], [0, 1, 0, 2, 1, 1, 3], [2, 3, 1, 1]
    for got in run_both(lambda a: tf.unique_with_counts(a), c(np.int32(x))):
        assert [g.tolist() for g in got] == [y, idx, count]
    for got in run_both(lambda a: tf.unique(a, out_idx=tf.int64), c(x.astype(np.float64))):
        assert got[0].tolist() == y and got[1].tolist() == idx and got[1].dtype == np.int64
    assert tf.unique(c(x)).y.numpy().tolist() == y  # a namedtuple, as TF's


# ---- math -------------------------------------------------------------------------------

def test_confusion_matrix_and_in_top_k():
    labels, preds = np.array([0, 2, 1, 2, 2]), np.array([0, 1, 1, 2, 0])
    expected = np.zeros((4, 4), np.int32)
    np.add.at(expected, (labels, preds), 1)
    assert_both(lambda a, b: tf.math.confusion_matrix(a, b, num_classes=4), [c(labels), c(preds)], expected)
    np.testing.assert_array_equal(tf.math.confusion_matrix(labels, preds).numpy(), expected[:3, :3])
    w = np.array([0.5, 1.0, 2.0, 1.0, 3.0])
    weighted = np.zeros((3, 3))
    np.add.at(weighted, (labels, preds), w)
    np.testing.assert_allclose(tf.math.confusion_matrix(labels, preds, weights=w, dtype=tf.float64).numpy(), weighted)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.math.confusion_matrix([0, 5], [0, 1], num_classes=3)

    predictions = np.array([[0.1, 0.3, 0.2, 0.4], [0.5, 0.5, 0.0, 0.0], [0.9, 0.05, 0.05, 0.0], [0.2, np.nan, 0.1, 0.0]])
    targets = np.array([2, 1, 1, 1])
    expected_k2 = [False, True, True, False]  # ties count in; a NaN target score does not
    assert_both(lambda t, p: tf.math.in_top_k(t, p, 2), [c(np.int32(targets)), c(predictions)], expected_k2)
    assert tf.math.in_top_k(c(np.int32([0])), c(np.array([[0.1, 0.9]])), 1).numpy().tolist() == [False]


@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (-1, False), ([0, 1], False)])
def test_reduce_variance_and_std(axis, keepdims):
    np_axis = tuple(axis) if isinstance(axis, list) else axis
    assert_both(lambda x: tf.math.reduce_variance(x, axis=axis, keepdims=keepdims), [c(A)],
                np.var(A, axis=np_axis, keepdims=keepdims))
    assert_both(lambda x: tf.math.reduce_std(x, axis=axis, keepdims=keepdims), [c(A)],
                np.std(A, axis=np_axis, keepdims=keepdims))
    check_gradients(lambda x: tf.reduce_sum(tf.math.reduce_std(x, axis=axis)), [c(A)])
    with pytest.raises(TypeError):
        tf.math.reduce_variance(tf.constant([1, 2]))


def _np_cumulative_logsumexp(x, axis, exclusive, reverse):
    x = np.moveaxis(x, axis, -1)
    if reverse:
        x = x[..., ::-1]
    out = np.logaddexp.accumulate(x, axis=-1)
    if exclusive:
        out = np.concatenate([np.full(out.shape[:-1] + (1,), -np.inf), out[..., :-1]], -1)
    if reverse:
        out = out[..., ::-1]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_cumulative_logsumexp(axis, exclusive, reverse):
    x = A * 3
    assert_both(lambda t: tf.math.cumulative_logsumexp(t, axis=axis, exclusive=exclusive, reverse=reverse), [c(x)],
                _np_cumulative_logsumexp(x, axis, exclusive, reverse))
    weights = c(rng.normal(size=x.shape))
    if not exclusive:  # exclusive has -inf entries, whose products with weights are not differentiable
        check_gradients(lambda t: tf.reduce_sum(
            tf.math.cumulative_logsumexp(t, axis=axis, exclusive=exclusive, reverse=reverse) * weights), [c(x)])


def test_cumulative_logsumexp_wide_range_is_exact():
    x = np.array([-1000.0, 0.0, 1000.0, 999.0])
    np.testing.assert_allclose(tf.math.cumulative_logsumexp(c(x)).numpy(), np.logaddexp.accumulate(x))


NORMS = [("euclidean", None), (1, None), (2, 0), (np.inf, 1), (3, -1), ("fro", None), (1.5, 0),
         ("fro", (0, 1)), ("euclidean", [0, 1]), (1, (0, 1)), (np.inf, (0, 1)), (1, (1, 0)), (np.inf, (-1, -2))]


def _np_norm(x, ord, axis):  # noqa: A002
    if axis is None:
        return np.linalg.norm(x.reshape(-1), 2 if ord in ("euclidean", "fro") else ord)
    if isinstance(axis, (tuple, list)):
        return np.linalg.norm(x, "fro" if ord in ("euclidean", "fro") else ord, axis=tuple(axis))
    return np.linalg.norm(x, ord, axis=axis)


@pytest.mark.parametrize("ord,axis", NORMS)
def test_norm(ord, axis):  # noqa: A002
    assert_both(lambda x: tf.norm(x, ord=ord, axis=axis), [c(A)], _np_norm(A, ord, axis))
    kept = tf.norm(c(A), ord=ord, axis=axis, keepdims=True)
    assert kept.ndim == 2
    check_gradients(lambda x: tf.reduce_sum(tf.norm(x, ord=ord, axis=axis)), [c(A)])
    assert tf.linalg.norm is tf.norm


def test_norm_errors():
    with pytest.raises(ValueError):
        tf.norm(c(A), ord=-1)
    with pytest.raises(ValueError):
        tf.norm(c(A), ord=3, axis=(0, 1))
    with pytest.raises(NotImplementedError):
        tf.norm(c(A), ord=2, axis=(0, 1))


def test_elementwise_safe_math():
    x, y = np.array([1.0, 0.0, -2.0, 3.0]), np.array([0.0, 0.0, 4.0, 0.5])
    assert_both(lambda a, b: tf.math.divide_no_nan(a, b), [c(x), c(y)], np.where(y == 0, 0, x / np.where(y == 0, 1, y)))
    assert_both(lambda a, b: tf.math.xlogy(a, b), [c(y), c(np.abs(x))],
                np.where(y == 0, 0, y * np.log(np.where(y == 0, 1, np.abs(x)))))
    assert_both(lambda a, b: tf.math.xdivy(a, b), [c(y), c(x)], np.where(y == 0, 0, y / np.where(y == 0, 1, x)))
    assert_both(lambda a, b: tf.math.multiply_no_nan(a, b), [c(np.array([np.inf, np.nan, 2.0])), c(np.array([0.0, 0.0, 3.0]))],
                [0.0, 0.0, 6.0])
    with tf.GradientTape() as tape:
        a, b = c(x), c(y)
        tape.watch([a, b])
        z = tf.reduce_sum(tf.math.divide_no_nan(a, b))
    ga, gb = tape.gradient(z, [a, b])
    assert np.isfinite(ga.numpy()).all() and np.isfinite(gb.numpy()).all()
    check_gradients(lambda a, b: tf.reduce_sum(tf.math.divide_no_nan(a, b)), [c(x), c(np.array([1.0, 2.0, 4.0, 0.5]))])
    check_gradients(lambda a, b: tf.reduce_sum(tf.math.xlogy(a, b)), [c(np.array([1.0, 2.0])), c(np.array([0.5, 3.0]))])
    z = np.array([1.0, np.nan, np.inf, -np.inf])
    assert tf.math.is_nan(c(z)).numpy().tolist() == [False, True, False, False]
    assert tf.math.is_inf(c(z)).numpy().tolist() == [False, False, True, True]
    assert tf.math.is_finite(c(z)).numpy().tolist() == [True, False, False, False]


def test_small_surface():
    assert tf.rank(np.zeros((2, 3, 1))).numpy() == 3
    assert tf.function(lambda x: tf.rank(x))(c(A)).numpy() == 2
    assert tf.size(c(A)).numpy() == 12 and tf.size(c(A), out_type=tf.int64).dtype == tf.int64
    a, b = tf.identity_n([c(A), tf.constant(1)])
    np.testing.assert_array_equal(a.numpy(), A)
    assert tf.zeros_like(c(A), dtype=tf.int32).dtype == tf.int32
    assert tf.clip_by_value(tf.constant([1, 5, 9]), 2, 6).numpy().tolist() == [2, 5, 6]
    assert tf.math.reduce_euclidean_norm(tf.constant([3, 4])).numpy() == 5
