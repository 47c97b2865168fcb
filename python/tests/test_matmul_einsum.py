"""Batched matmul with broadcasting and tf.einsum (issue #18): values against NumPy, gradients against
central differences (the broadcast batch dims summed back), traced equal to eager, TF's errors."""
import numpy as np
import pytest

import kiln as tf

RNG = np.random.default_rng(18)


def rand(*shape):
    return RNG.standard_normal(shape)


def numeric_gradient(f, x, eps=1e-6):
    """d sum(f(x) * w) / dx by central differences, w fixed random weights."""
    w = RNG.standard_normal(np.shape(f(x)))
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = ((f(up) * w).sum() - (f(down) * w).sum()) / (2 * eps)
    return w, grad


def check_gradients(kiln_f, numpy_f, *arrays):
    """Each input's gradient of sum(f * w) against NumPy central differences."""
    for k in range(len(arrays)):
        def numpy_of_k(x, k=k):
            return numpy_f(*arrays[:k], x, *arrays[k + 1:])
        w, expected = numeric_gradient(numpy_of_k, arrays[k])
        tensors = [tf.constant(a) for a in arrays]
        with tf.GradientTape() as tape:
            tape.watch(tensors[k])
            loss = tf.reduce_sum(kiln_f(*tensors) * tf.constant(w))
        np.testing.assert_allclose(tape.gradient(loss, tensors[k]).numpy(), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("a_shape,b_shape", [((4, 2, 3), (4, 3, 5)), ((2, 1, 2, 3), (3, 3, 2)),
                                             ((2, 3), (5, 3, 4)), ((1, 2, 3), (4, 1, 3, 2))])
def test_batched_matmul_broadcasts_like_numpy(a_shape, b_shape):
    a, b = rand(*a_shape), rand(*b_shape)
    np.testing.assert_allclose(tf.matmul(a, b).numpy(), a @ b, rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.matmul(tf.constant(a, tf.float32), tf.constant(b, tf.float32)).numpy(),
                               (a @ b).astype(np.float32), rtol=2e-5, atol=1e-5)
    # The gradients sum over the batch dims each operand was broadcast along.
    check_gradients(tf.matmul, np.matmul, a, b)
    traced = tf.function(tf.matmul)
    np.testing.assert_array_equal(traced(tf.constant(a), tf.constant(b)).numpy(), tf.matmul(a, b).numpy())


def test_batched_matmul_transpose_and_adjoint():
    a, b = rand(3, 4, 2), rand(3, 5, 4)
    expected = np.swapaxes(a, -1, -2) @ np.swapaxes(b, -1, -2)
    np.testing.assert_allclose(tf.matmul(a, b, transpose_a=True, transpose_b=True).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(tf.matmul(a, b, adjoint_a=True, adjoint_b=True).numpy(), expected, rtol=1e-12)
    check_gradients(lambda x, y: tf.matmul(x, y, transpose_a=True, transpose_b=True),
                    lambda x, y: np.swapaxes(x, -1, -2) @ np.swapaxes(y, -1, -2), a, b)
    ints = np.arange(12).reshape(2, 2, 3)
    np.testing.assert_array_equal(tf.matmul(ints, ints, transpose_b=True).numpy(), ints @ ints.transpose(0, 2, 1))
    np.testing.assert_allclose((tf.constant(a) @ tf.constant(rand(2, 6))).shape, (3, 4, 6))


def test_batched_matmul_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch dimensions cannot be broadcast"):
        tf.matmul(rand(2, 3, 4), rand(3, 4, 5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="inner dimensions do not match"):
        tf.matmul(rand(2, 3, 4), rand(2, 3, 4))
    with pytest.raises(tf.errors.InvalidArgumentError, match="a must have rank >= 2"):
        tf.matmul(rand(3), rand(3, 4))


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk", [(2, 3), (3, 4)]),                       # implicit output: ik
    ("ba,ca", [(2, 3), (4, 3)]),                       # implicit output sorted: bc
    ("i,i->", [(5,), (5,)]),                           # dot
    ("i,j->ij", [(3,), (4,)]),                         # outer
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ii->i", [(3, 3)]),                               # diagonal
    ("ii", [(3, 3)]),                                  # trace
    ("bii->b", [(2, 3, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),      # ellipsis broadcasts
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("b...d,bd->b...", [(2, 3, 4, 5), (2, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention scores
    ("bqhd,bkhd->bhqk", [(2, 4, 3, 5), (2, 6, 3, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ij,ij->ij", [(2, 3), (2, 3)]),                   # elementwise product
    ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]),
]


@pytest.mark.parametrize("equation,shapes", EINSUMS)
def test_einsum_against_numpy(equation, shapes):
    arrays = [rand(*s) for s in shapes]
    expected = np.einsum(equation, *arrays)
    np.testing.assert_allclose(tf.einsum(equation, *arrays).numpy(), expected, rtol=1e-12, atol=1e-12)
    check_gradients(lambda *ts: tf.einsum(equation, *ts), lambda *xs: np.einsum(equation, *xs), *arrays)
    traced = tf.function(lambda *ts: tf.einsum(equation, *ts))
    np.testing.assert_array_equal(traced(*[tf.constant(a) for a in arrays]).numpy(),
                                  tf.einsum(equation, *arrays).numpy())


def test_einsum_traced_with_unknown_batch():
    f = tf.function(lambda x, y: tf.linalg.einsum("bij,jk->bik", x, y),
                    input_signature=[tf.TensorSpec([None, 3, 4], tf.float64), tf.TensorSpec([4, 2], tf.float64)])
    a, b = rand(5, 3, 4), rand(4, 2)
    np.testing.assert_allclose(f(a, b).numpy(), np.einsum("bij,jk->bik", a, b), rtol=1e-12)


def test_einsum_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="2 input subscripts but 1 inputs"):
        tf.einsum("ij,jk->ik", rand(2, 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"input 0 has shape \(2, 3\) but its subscripts 'ijk'"):
        tf.einsum("ijk->i", rand(2, 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="'j' has size 4 in input 1"):
        tf.einsum("ij,jk->ik", rand(2, 3), rand(4, 5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="the output's 'z' is in no input"):
        tf.einsum("ij->iz", rand(2, 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="the character '1'"):
        tf.einsum("i1->i", rand(2, 3))
    with pytest.raises(tf.errors.InvalidArgumentError, match="names 'i' more than once"):
        tf.einsum("ij->ii", rand(2, 3))
    with pytest.raises(TypeError, match="unexpected keyword"):
        tf.einsum("ij->ji", rand(2, 3), bad=1)
