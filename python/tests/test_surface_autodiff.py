"""kiln.custom_gradient, GradientTape.jacobian / batch_jacobian, ForwardAccumulator,
recompute_grad, grad_pass_through and UnconnectedGradients (issue #42), eagerly and inside
kiln.function, against NumPy and central differences."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import central_differences

rng = np.random.default_rng(7)


@tf.custom_gradient
def log1pexp(x):
    e = tf.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))
    return tf.math.log(1 + e), grad


@tf.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tf.clip_by_norm(dy, 0.5)
    return y, backward


def test_custom_gradient_replaces_the_natural_one_eagerly():
    x = tf.constant(100.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = log1pexp(x)
    assert tape.gradient(y, x).numpy() == 1.0  # the natural gradient is NaN here (inf / inf)
    v = tf.constant([3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(v)
        z = tf.reduce_sum(clip_gradients(v) * 2.0)  # dy = [2, 2], clipped to norm 0.5
    np.testing.assert_allclose(tape.gradient(z, v).numpy(), [0.5 / np.sqrt(2)] * 2, rtol=1e-6)


def test_custom_gradient_inside_function_and_composition():
    @tf.function
    def grad_of(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.square(log1pexp(x * 2.0)))
        return y, tape.gradient(y, x)
    x = np.array([-3.0, 0.5, 2.0])
    y, g = grad_of(tf.constant(x))
    expected = 2 * np.log1p(np.exp(2 * x)) * (1 / (1 + np.exp(-2 * x))) * 2
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(y.numpy(), np.sum(np.log1p(np.exp(2 * x)) ** 2), rtol=1e-12)
    reference = central_differences(lambda t: tf.reduce_sum(tf.square(tf.math.log(1 + tf.exp(t * 2.0)))),
                                    [tf.constant(x)], 0)
    np.testing.assert_allclose(g.numpy(), reference, rtol=1e-6, atol=1e-8)


def test_custom_gradient_several_inputs_and_outputs():
    @tf.custom_gradient
    def pair(a, b):
        def grad(da, db):
            return da * 10.0 + db, db * 100.0
        return [a * b, a + b], grad
    a, b = tf.constant(2.0), tf.constant(3.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        p, s = pair(a, b)
        total = p * 1.0 + s * 2.0
    ga, gb = tape.gradient(total, [a, b])
    assert (ga.numpy(), gb.numpy()) == (12.0, 200.0)
    ga, gb = tape.gradient(p, [a, b])  # s unused: its gradient arrives as zeros
    assert (ga.numpy(), gb.numpy()) == (10.0, 0.0)


def test_custom_gradient_with_variables():
    v = tf.Variable(2.0)

    @tf.custom_gradient
    def scale(x):
        def grad(dy, variables=None):
            assert len(variables) == 1 and variables[0] is not None
            return dy * v * 10.0, [dy * x * 100.0]
        return x * v, grad
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = scale(x) * 2.0
    gx, gv = tape.gradient(y, [x, v])
    assert (gx.numpy(), gv.numpy()) == (40.0, 600.0)
    with tf.GradientTape() as tape:
        y = scale(x)
    assert [w.name for w in tape.watched_variables()] == [v.name]

    @tf.custom_gradient
    def forgets(x):
        return x * v, lambda dy: dy
    with pytest.raises(TypeError, match="variables"):
        with tf.GradientTape():
            forgets(x)


def test_custom_gradient_nested_and_chained():
    @tf.custom_gradient
    def double_grad(x):
        return x * 1.0, lambda dy: dy * 2.0

    @tf.custom_gradient
    def outer(x):
        y = double_grad(x) * 3.0  # inside f: replaced by outer's grad_fn
        return y, lambda dy: dy * 5.0
    x = tf.constant(1.5)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = double_grad(double_grad(x) * 4.0) + outer(x)
    assert tape.gradient(y, x).numpy() == 2 * 4 * 2 + 5


def test_custom_gradient_second_order():
    @tf.custom_gradient
    def cube(x):
        return x ** 3, lambda dy: dy * 3.0 * x ** 2
    x = tf.constant(2.0)
    with tf.GradientTape() as outer:
        outer.watch(x)
        with tf.GradientTape() as inner:
            inner.watch(x)
            y = cube(x)
        dy = inner.gradient(y, x)
    assert dy.numpy() == 12.0
    assert outer.gradient(dy, x).numpy() == 12.0  # d(3x^2)/dx through grad_fn's own ops


def test_custom_gradient_without_tape_just_computes():
    assert log1pexp(tf.constant(0.0)).numpy() == pytest.approx(np.log(2.0))
    assert tf.function(log1pexp)(tf.constant(0.0)).numpy() == pytest.approx(np.log(2.0))


def test_grad_pass_through_and_recompute_grad():
    x = tf.constant([0.4, 1.6])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.grad_pass_through(tf.round)(x) * 3.0)
    assert y.numpy() == 6.0
    assert tape.gradient(y, x).numpy().tolist() == [3.0, 3.0]
    f = tf.recompute_grad(lambda t: tf.sin(t) * t)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(f(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.cos([0.4, 1.6]) * [0.4, 1.6] + np.sin([0.4, 1.6]),
                               rtol=1e-6)


# ---- jacobians ---------------------------------------------------------------------------

def f_matrix(x, w):
    return tf.tanh(tf.matmul(x, w))


def test_jacobian_against_central_differences():
    x, w = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))

    def jac(xt, wt):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch([xt, wt])
            y = f_matrix(xt, wt)
        return tape.jacobian(y, [xt, wt])
    for jx, jw in (jac(tf.constant(x), tf.constant(w)), tf.function(jac)(tf.constant(x), tf.constant(w))):
        assert jx.shape == (2, 2, 2, 3) and jw.shape == (2, 2, 3, 2)
        for idx in np.ndindex(2, 2):
            def component(a, b, idx=idx):
                return f_matrix(a, b)[idx]
            args = [tf.constant(x), tf.constant(w)]
            np.testing.assert_allclose(jx.numpy()[idx], central_differences(component, args, 0), rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(jw.numpy()[idx], central_differences(component, args, 1), rtol=1e-6, atol=1e-8)


def test_jacobian_unconnected_and_variables():
    x, z = tf.constant([1.0, 2.0]), tf.constant(3.0)
    v = tf.Variable([[1.0, 2.0], [3.0, 4.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = tf.linalg.matvec(v, x)
    assert tape.jacobian(y, z) is None
    np.testing.assert_array_equal(tape.jacobian(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy(),
                                  [0.0, 0.0])
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), v.numpy())
    jv = tape.jacobian(y, v).numpy()
    expected = np.zeros((2, 2, 2))
    expected[0, 0], expected[1, 1] = [1.0, 2.0], [1.0, 2.0]
    np.testing.assert_array_equal(jv, expected)


def test_non_persistent_tape_allows_one_jacobian():
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), np.diag([2.0, 4.0]))
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)


def test_batch_jacobian():
    x = rng.normal(size=(4, 3))
    w = rng.normal(size=(3, 2))

    def bj(xt):
        with tf.GradientTape() as tape:
            tape.watch(xt)
            y = tf.sin(tf.matmul(xt, tf.constant(w)))
        return tape.batch_jacobian(y, xt)
    expected = np.einsum("bi,ji->bij", np.cos(x @ w), w)
    for got in (bj(tf.constant(x)), tf.function(bj)(tf.constant(x))):
        assert got.shape == (4, 2, 3)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    with tf.GradientTape() as tape:
        xt = tf.constant(x)
        tape.watch(xt)
        y = xt[:3] * 2.0
    with pytest.raises(ValueError, match="first dimension"):
        tape.batch_jacobian(y, xt)


def test_unconnected_gradients_enum():
    x, z = tf.constant([1.0, 2.0]), tf.constant([[5.0]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = tf.reduce_sum(x)
    assert tape.gradient(y, z) is None
    assert tape.gradient(y, z, unconnected_gradients=tf.UnconnectedGradients.NONE) is None
    assert tape.gradient(y, z, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy().tolist() == [[0.0]]
    assert tape.gradient(y, z, unconnected_gradients="zero").shape == (1, 1)
    assert tf.UnconnectedGradients.ZERO.value == "zero"


# ---- forward mode ------------------------------------------------------------------------

def test_forward_accumulator_matches_jacobian_times_tangent():
    x = rng.normal(size=(3,))
    w = rng.normal(size=(3, 3))
    tangent = rng.normal(size=(3,))

    def f(t):
        return tf.sin(tf.reshape(tf.matmul(tf.constant(w), t[:, None]), [3])) * t

    def jvp(xt, vt):
        with tf.autodiff.ForwardAccumulator(xt, vt) as acc:
            y = f(xt)
        return acc.jvp(y)
    jac = np.stack([central_differences(lambda t, i=i: f(t)[i], [tf.constant(x)], 0) for i in range(3)])
    for got in (jvp(tf.constant(x), tf.constant(tangent)), tf.function(jvp)(tf.constant(x), tf.constant(tangent))):
        np.testing.assert_allclose(got.numpy(), jac @ tangent, rtol=1e-6)


def test_forward_accumulator_variables_and_unconnected():
    v = tf.Variable([1.0, 2.0])
    with tf.autodiff.ForwardAccumulator(primals=v, tangents=tf.constant([1.0, 0.0])) as acc:
        loss = tf.reduce_sum(v ** 2)
        other = tf.constant(3.0) * 2.0
    assert acc.jvp(loss).numpy() == 2.0
    assert acc.jvp(other) is None
    assert acc.jvp(other, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy() == 0.0
    with pytest.raises(ValueError):
        tf.autodiff.ForwardAccumulator(tf.constant([1.0]), tf.constant([1.0, 2.0]))


def test_hessian_vector_product_forward_over_backward():
    x = tf.constant([1.0, -2.0])
    tangent = tf.constant([0.5, 1.0])
    with tf.autodiff.ForwardAccumulator(x, tangent) as acc:
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(x ** 3)
        g = tape.gradient(y, x)
    np.testing.assert_allclose(acc.jvp(g).numpy(), 6 * x.numpy() * tangent.numpy())


def test_custom_gradient_in_a_nested_graph_falls_back_with_a_warning(caplog):
    """A tape outside the graph the call is built in (an eager tape around a kiln.function, a function's
    tape around a cond branch) differentiates the graph's own ops: the natural gradient, never zeros."""
    @tf.custom_gradient
    def doubled_grad(x):
        return x * 1.0, lambda dy: dy * 2.0

    @tf.function
    def branchy(x, flag):
        with tf.GradientTape() as tape:
            tape.watch(x)
            if flag > 0:
                y = doubled_grad(x) * 3.0
            else:
                y = x * 5.0
        return tape.gradient(y, x)

    @tf.function
    def inner(x):
        return doubled_grad(x) * 3.0
    import kiln.autodiff as autodiff
    autodiff._warned_outer_tape.clear()
    with caplog.at_level("WARNING", logger="kiln"):
        assert branchy(tf.constant(1.0), tf.constant(1)).numpy() == 3.0
        assert branchy(tf.constant(1.0), tf.constant(0)).numpy() == 5.0
        x = tf.constant(1.0)
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = inner(x)
        assert tape.gradient(y, x).numpy() == 3.0
    assert any("same graph" in r.getMessage() for r in caplog.records)

    @tf.function
    def same_graph(x):  # the tape and the call in one branch: the custom gradient
        def branch():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = doubled_grad(x) * 3.0
            return tape.gradient(y, x)
        return tf.cond(x > 0, branch, lambda: x * 0.0)
    assert same_graph(tf.constant(1.0)).numpy() == 6.0


def test_reduce_prod_gradient_is_finite_at_zeros_as_tf():
    # TF's gradient is the product of the other elements (exclusive cumprods), so zeros give numbers, not 0/0.
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, -2.0, 4.0]], np.float64)
    for axis, keepdims in ((None, False), (0, False), (1, True), ([0, 1], False), (-1, False)):
        v = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.reduce_prod(v, axis=axis, keepdims=keepdims)
        got = tape.gradient(y, v).numpy()
        axes = tuple(range(2)) if axis is None else tuple(np.atleast_1d(axis) % 2)
        want = np.zeros_like(x)
        for idx in np.ndindex(*x.shape):  # d prod / d x[idx]: the product of the others in idx's group
            group = tuple(slice(None) if a in axes else idx[a] for a in range(2))
            others = x.copy()
            others[idx] = 1.0
            want[idx] = np.prod(others[group])
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=str(axis))
    traced = tf.function(lambda v: tf.gradients(tf.reduce_prod(v, 1), v)[0])(tf.constant(x))
    np.testing.assert_array_equal(traced.numpy()[1], [0.0, 0.0, 0.0])


def test_reduce_prod_gradient_at_zeros_along_one_axis_of_unknown_length():
    # One reduced axis needs no static shape: a batch dim unknown while tracing still gives the others' product.
    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float64)])
    def grad(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            y = tf.reduce_prod(v, axis=1)
        return tape.gradient(y, v)

    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]])
    np.testing.assert_array_equal(grad(tf.constant(x)).numpy(), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]])
