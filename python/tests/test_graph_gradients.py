"""tf.gradients, tf.hessians and keras.backend.gradients: the symbolic gradient of the graph being
traced, checked against GradientTape and central differences (float64), with TF's documented
stop_gradients example, grad_ys, unconnected_gradients, variables, intermediate tensors and
control flow."""
import numpy as np
import pytest

import kiln as tf
from numeric_grad import central_differences
from test_surface_autodiff import log1pexp

RNG = np.random.default_rng(7)
X = RNG.normal(size=(3, 4))
W = RNG.normal(size=(4, 2))


def loss(x, w):
    return tf.reduce_sum(tf.tanh(tf.matmul(x, w)) * tf.sin(tf.reduce_sum(x)))


def test_eager_call_raises_tfs_runtime_error():
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution is enabled. "
                                           "Use tf.GradientTape instead."):
        tf.gradients(tf.constant(1.0), tf.constant(2.0))


def test_matches_tape_and_central_differences():
    @tf.function
    def grads(x, w):
        return tf.gradients(loss(x, w), [x, w])

    x, w = tf.constant(X), tf.constant(W)
    gx, gw = grads(x, w)
    with tf.GradientTape() as tape:
        tape.watch([x, w])
        value = loss(x, w)
    tx, tw = tape.gradient(value, [x, w])
    np.testing.assert_allclose(gx.numpy(), tx.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), tw.numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), central_differences(loss, [x, w], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw.numpy(), central_differences(loss, [x, w], 1), rtol=1e-6, atol=1e-8)


def test_single_x_gives_a_list_and_ys_are_summed():
    @tf.function
    def grads(x):
        return tf.gradients([x * x, 3.0 * x], x)

    out = grads(tf.constant([1.0, 2.0], tf.float64))
    assert isinstance(out, list) and len(out) == 1
    np.testing.assert_allclose(out[0].numpy(), [5.0, 7.0])


def test_intermediate_tensors_as_xs():
    @tf.function
    def grads(x):
        y = x * x
        z = tf.sin(y)
        return tf.gradients(z, [y, x])

    x = np.array([0.3, -1.2, 2.0])
    gy, gx = grads(tf.constant(x))
    np.testing.assert_allclose(gy.numpy(), np.cos(x * x), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), np.cos(x * x) * 2 * x, rtol=1e-12)


def test_tfs_stop_gradients_example():
    # TF's docstring: a = 0; b = 2 * a; tf.gradients(a + b, [a, b], stop_gradients=[a, b]) is [1.0, 1.0]
    # (without stop_gradients, [3.0, 1.0]).
    @tf.function
    def grads(stop):
        a = tf.constant(0.0)
        b = 2 * a
        if stop:
            return tf.gradients(a + b, [a, b], stop_gradients=[a, b])
        return tf.gradients(a + b, [a, b])

    assert [g.numpy() for g in grads(True)] == [1.0, 1.0]
    assert [g.numpy() for g in grads(False)] == [3.0, 1.0]


def test_stop_gradients_cut_what_computes_them():
    @tf.function
    def grads(x):
        h = tf.exp(x)
        y = h * x
        return tf.gradients(y, x, stop_gradients=[h])

    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(grads(tf.constant(x))[0].numpy(), np.exp(x), rtol=1e-12)  # h held constant


def test_grad_ys_weight_each_y():
    @tf.function
    def grads(x, u, v):
        return tf.gradients([x * x, tf.sin(x)], x, grad_ys=[u, v])

    x, u, v = np.array([1.0, 2.0]), np.array([0.5, -1.0]), np.array([2.0, 3.0])
    out = grads(tf.constant(x), tf.constant(u), tf.constant(v))[0]
    np.testing.assert_allclose(out.numpy(), u * 2 * x + v * np.cos(x), rtol=1e-12)

    @tf.function
    def partial(x, v):
        return tf.gradients([x * x, tf.sin(x)], x, grad_ys=[None, v])  # None: ones

    np.testing.assert_allclose(partial(tf.constant(x), tf.constant(v))[0].numpy(), 2 * x + v * np.cos(x), rtol=1e-12)

    @tf.function
    def wrong_count(x):
        return tf.gradients([x, x], x, grad_ys=[x])

    with pytest.raises(ValueError, match="Passed 1 grad_ys for 2 ys"):
        wrong_count(tf.constant(x))


def test_unconnected_gradients():
    @tf.function
    def grads(x, z):
        none = tf.gradients(x * 2.0, [x, z])
        zero = tf.gradients(x * 2.0, [x, z], unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return none[1] is None, zero

    was_none, (gx, gz) = grads(tf.constant([1.0, 2.0]), tf.constant([[3.0, 4.0, 5.0]]))
    assert bool(was_none)
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(gz.numpy(), [[0.0, 0.0, 0.0]])

    @tf.function
    def bad(x):
        return tf.gradients(x, x, unconnected_gradients="sometimes")

    with pytest.raises(ValueError, match="Unknown value for unconnected_gradients"):
        bad(tf.constant(1.0))


def test_variables_as_xs():
    w = tf.Variable(W)
    b = tf.Variable(np.zeros(2))
    unused = tf.Variable(1.0)

    @tf.function
    def grads(x):
        y = tf.reduce_sum(tf.square(tf.matmul(x, w) + b))
        return tf.gradients(y, [w, b, unused])

    gw, gb, gu = grads(tf.constant(X))
    assert gu is None
    pre = X @ W
    np.testing.assert_allclose(gw.numpy(), X.T @ (2 * pre), rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), (2 * pre).sum(0), rtol=1e-12)


def test_integer_ys_carry_no_gradient():
    @tf.function
    def grads(x):
        return tf.gradients(tf.cast(x, tf.int32) * 2, x)[0] is None

    assert bool(grads(tf.constant(1.5)))


def test_second_order():
    @tf.function
    def second(x):
        g = tf.gradients(x ** 3, x)[0]
        return tf.gradients(g, x)[0]

    np.testing.assert_allclose(second(tf.constant([1.0, -2.0], tf.float64)).numpy(), [6.0, -12.0])


def test_through_cond_and_while_loop():
    @tf.function
    def grads(x):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: tf.sin(x) * x, lambda: tf.cos(x))
        _, z = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), (0, tf.ones_like(x)))
        return tf.gradients(tf.reduce_sum(y) + tf.reduce_sum(z), x)[0]

    x = np.array([0.4, 0.9])
    np.testing.assert_allclose(grads(tf.constant(x)).numpy(), np.cos(x) * x + np.sin(x) + 3 * x ** 2, rtol=1e-12)


def test_inside_a_cond_branch():
    @tf.function
    def grads(x):
        return tf.cond(x > 0, lambda: tf.gradients(x * x, x)[0], lambda: tf.zeros_like(x))

    assert grads(tf.constant(3.0)).numpy() == 6.0


def test_hessians_against_numpy():
    a = RNG.normal(size=(3, 3))

    @tf.function
    def hess(x):
        quad = tf.reduce_sum(x * tf.linalg.matvec(tf.constant(a), x))
        return tf.hessians(quad, x)[0], tf.hessians(tf.reduce_sum(x ** 3), x)[0]

    x = np.array([0.5, -1.0, 2.0])
    h_quad, h_cube = hess(tf.constant(x))
    np.testing.assert_allclose(h_quad.numpy(), a + a.T, rtol=1e-12)
    np.testing.assert_allclose(h_cube.numpy(), np.diag(6 * x), rtol=1e-12)

    @tf.function
    def hess_matrix(m):
        return tf.hessians(tf.reduce_sum(m * m * m), m)[0]

    m = np.arange(4.0).reshape(2, 2)
    out = hess_matrix(tf.constant(m)).numpy()
    assert out.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(out.reshape(4, 4), np.diag(6 * m.ravel()), rtol=1e-12)


def test_keras_backend_gradients():
    K = tf.keras.backend

    @tf.function
    def grads(x):
        return K.gradients(K.sum(K.square(x)), [x])

    np.testing.assert_allclose(grads(tf.constant([1.0, -3.0]))[0].numpy(), [2.0, -6.0])
    with pytest.raises(RuntimeError, match="tf.gradients is not supported when eager execution is enabled"):
        K.gradients(tf.constant(1.0), [tf.constant(1.0)])


@tf.custom_gradient
def clipped_identity(x):
    def grad(dy):
        return tf.clip_by_value(dy, -0.5, 0.5)
    return tf.identity(x) * 1.0, grad


def test_custom_gradient_functions_use_their_grad_fn():
    @tf.function
    def grads(x):
        y = clipped_identity(x * 3.0)
        return tf.gradients(tf.reduce_sum(y * 2.0), x)[0], tf.gradients(log1pexp(x * 100.0), x)[0]

    g_clip, g_stable = grads(tf.constant([1.0]))
    np.testing.assert_allclose(g_clip.numpy(), [1.5])  # 2 clipped to 0.5, times 3
    np.testing.assert_allclose(g_stable.numpy(), [100.0])  # the natural gradient would be nan at x = 100


def test_custom_gradient_in_a_graph_called_under_an_outer_tape_keeps_its_ops():
    @tf.function
    def f(x):
        return clipped_identity(x) * 2.0

    x = tf.constant([1.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [2.0])  # the graph's own ops, as before


def test_custom_gradient_called_under_a_tape_in_the_trace():
    @tf.function
    def grads(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(clipped_identity(x * 3.0) * 2.0)
        return tape.gradient(y, x), tf.gradients(y, x)[0]

    by_tape, by_graph = grads(tf.constant([1.0]))
    np.testing.assert_allclose(by_tape.numpy(), [1.5])
    np.testing.assert_allclose(by_graph.numpy(), [1.5])


def test_keras_model_weights_match_the_tape():
    tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh"), tf.keras.layers.Dense(1)])
    x = tf.constant(RNG.normal(size=(5, 3)), tf.float32)
    y = tf.constant(RNG.normal(size=(5, 1)), tf.float32)
    model(x)

    @tf.function
    def both():
        loss = tf.reduce_mean(tf.square(model(x) - y))
        with tf.GradientTape() as tape:
            again = tf.reduce_mean(tf.square(model(x) - y))
        return tf.gradients(loss, model.trainable_variables), tape.gradient(again, model.trainable_variables)

    by_graph, by_tape = both()
    assert len(by_graph) == 4
    for g, t in zip(by_graph, by_tape):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-5, atol=1e-7)
