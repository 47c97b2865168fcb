"""tf.bitwise (src/ops/bitwise_ops.cpp) against NumPy for every integer dtype: and, or, xor, invert, and the
shifts with counts below 0, at and past the width clamped as TF's kernels clamp them; broadcasting, Python
values, eager == traced, and the Tensor operators & | ^ ~ as TF's Tensor has them (logical on bools, bitwise on
integers; no << or >>)."""
import numpy as np
import pytest

import kiln as tf

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
RNG = np.random.default_rng(7)


def values(dtype, shape):
    info = np.iinfo(dtype)
    v = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    flat = v.reshape(-1)
    flat[:3] = [info.min, info.max, 0][:flat.size]  # the edges
    return v


def numpy_shift(x, y, left):
    """TF's rule in NumPy: the count clamped to [0, width - 1]; left shifts on the unsigned bits."""
    bits = x.dtype.itemsize * 8
    count = np.minimum(y, bits - 1) if y.dtype.kind == "u" else np.clip(y, 0, bits - 1)
    unsigned = x.view(np.dtype(f"uint{bits}"))
    if left:
        return (unsigned << count.astype(unsigned.dtype)).view(x.dtype)
    return x >> count.astype(x.dtype)


def shift_counts(dtype, shape):
    bits = np.dtype(dtype).itemsize * 8
    edge = [-1, -bits, 0, 1, bits - 1, bits, bits + 1, 2 * bits, int(np.iinfo(dtype).max)]
    if np.dtype(dtype).kind == "u":
        edge = [e for e in edge if e >= 0]
    return np.array(edge, dtype)[RNG.integers(0, len(edge), shape)]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_and_or_xor_invert_match_numpy(dtype):
    x, y = values(dtype, (4, 5)), values(dtype, (5,))
    tx, ty = tf.constant(x), tf.constant(y)
    for fn, want in ((tf.bitwise.bitwise_and, x & y), (tf.bitwise.bitwise_or, x | y),
                     (tf.bitwise.bitwise_xor, x ^ y)):
        got = fn(tx, ty)
        assert got.dtype.name == dtype and got.shape == (4, 5)
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(tf.bitwise.invert(tx).numpy(), ~x)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_shifts_match_tfs_clamped_rule(dtype):
    x = values(dtype, (6, 9))
    y = shift_counts(dtype, (6, 9))
    for fn, left in ((tf.bitwise.left_shift, True), (tf.bitwise.right_shift, False)):
        got = fn(tf.constant(x), tf.constant(y))
        assert got.dtype.name == dtype
        np.testing.assert_array_equal(got.numpy(), numpy_shift(x, y, left))


def test_tfs_documented_examples():
    # tf.bitwise.left_shift's documented outputs (TF 2.15 API docs).
    for dtype, want in ((tf.int8, [-32, -5, -128, 0]), (tf.int16, [-32, -5, -384, -28672]),
                        (tf.int32, [-32, -5, -384, -28672]), (tf.int64, [-32, -5, -384, -28672])):
        lhs = tf.constant([-1, -5, -3, -14], dtype=dtype)
        rhs = tf.constant([5, 0, 7, 11], dtype=dtype)
        np.testing.assert_array_equal(tf.bitwise.left_shift(lhs, rhs).numpy(), want)
    lhs = np.array([-2, 64, 101, 32], dtype=np.int8)
    rhs = np.array([-1, -5, -3, -14], dtype=np.int8)
    np.testing.assert_array_equal(tf.bitwise.left_shift(lhs, rhs).numpy(), [-2, 64, 101, 32])
    # tf.bitwise.right_shift's: arithmetic for signed values.
    lhs = tf.constant([-1, -5, -3, -14], dtype=tf.int8)
    np.testing.assert_array_equal(tf.bitwise.right_shift(lhs, tf.constant([5, 0, 7, 11], tf.int8)).numpy(),
                                  [-1, -5, -1, -1])
    # tf.bitwise.invert's: unsigned 0 becomes the dtype's max.
    for dtype in (tf.uint8, tf.uint16, tf.uint32, tf.uint64):
        assert tf.bitwise.invert(tf.constant(0, dtype)).numpy() == np.iinfo(dtype.as_numpy_dtype).max


def test_eager_equals_traced():
    x, y = values("int16", (3, 4)), shift_counts("int16", (3, 4))

    @tf.function
    def all_ops(a, b):
        return (tf.bitwise.bitwise_and(a, b), tf.bitwise.bitwise_or(a, b), tf.bitwise.bitwise_xor(a, b),
                tf.bitwise.invert(a), tf.bitwise.left_shift(a, b), tf.bitwise.right_shift(a, b))

    traced = all_ops(tf.constant(x), tf.constant(y))
    eager = (tf.bitwise.bitwise_and(x, y), tf.bitwise.bitwise_or(x, y), tf.bitwise.bitwise_xor(x, y),
             tf.bitwise.invert(x), tf.bitwise.left_shift(x, y), tf.bitwise.right_shift(x, y))
    for t, e in zip(traced, eager):
        np.testing.assert_array_equal(t.numpy(), e.numpy())


def test_python_values_take_the_tensors_dtype():
    x = tf.constant([1, 2, 250], tf.uint8)
    assert tf.bitwise.bitwise_or(x, 4).dtype == tf.uint8
    np.testing.assert_array_equal(tf.bitwise.left_shift(1, tf.constant([0, 3, 70], tf.int64)).numpy(),
                                  [1, 8, -(2 ** 63)])
    assert tf.bitwise.bitwise_and(12, 10).dtype == tf.int32


def test_refusals():
    with pytest.raises(TypeError, match="Value passed to parameter 'x' has DataType float32 not in list of allowed "
                                        "values: int8, int16, int32, int64, uint8, uint16, uint32, uint64"):
        tf.bitwise.bitwise_and(tf.constant([1.0]), tf.constant([2.0]))
    with pytest.raises(TypeError, match="DataType bool"):
        tf.bitwise.invert(tf.constant([True]))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.bitwise.bitwise_or(tf.constant([1], tf.int32), tf.constant([1], tf.int64))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.bitwise.bitwise_xor(tf.constant([1, 2], tf.int32), tf.constant([1, 2, 3], tf.int32))


def test_not_differentiable():
    x = tf.Variable([3, 5])
    with tf.GradientTape() as tape:
        y = tf.bitwise.left_shift(x, 1)
    assert tape.gradient(y, x) is None


def test_tensor_operators_as_tf():
    a, b = values("int32", (5,)), values("int32", (5,))
    ta, tb = tf.constant(a), tf.constant(b)
    np.testing.assert_array_equal((ta & tb).numpy(), a & b)
    np.testing.assert_array_equal((ta | tb).numpy(), a | b)
    np.testing.assert_array_equal((ta ^ tb).numpy(), a ^ b)
    np.testing.assert_array_equal((~ta).numpy(), ~a)
    np.testing.assert_array_equal((ta & 0xFF).numpy(), a & 0xFF)
    np.testing.assert_array_equal((0xFF & ta).numpy(), a & 0xFF)
    np.testing.assert_array_equal((7 ^ ta).numpy(), a ^ 7)
    u = tf.constant([0, 1, 255], tf.uint8)
    np.testing.assert_array_equal((~u).numpy(), [255, 254, 0])
    # Bools stay logical.
    p, q = tf.constant([True, True, False, False]), tf.constant([True, False, True, False])
    np.testing.assert_array_equal((p & q).numpy(), [True, False, False, False])
    np.testing.assert_array_equal((p | q).numpy(), [True, True, True, False])
    np.testing.assert_array_equal((p ^ q).numpy(), [False, True, True, False])
    np.testing.assert_array_equal((~p).numpy(), [False, False, True, True])
    np.testing.assert_array_equal((True ^ p).numpy(), [False, False, True, True])
    # TF's Tensor has no shift operators.
    with pytest.raises(TypeError):
        ta << 1  # noqa: B015
    with pytest.raises(TypeError):
        ta >> 1  # noqa: B015
    # Variables forward them.
    v = tf.Variable([6, 3])
    np.testing.assert_array_equal((v & 2).numpy(), [2, 2])
    np.testing.assert_array_equal((v ^ 1).numpy(), [7, 2])
    np.testing.assert_array_equal((1 | v).numpy(), [7, 3])


def test_operators_inside_functions():
    @tf.function
    def f(a, b, p):
        return (a & b) | (a ^ 3), ~a, ~p ^ p
    a, b = tf.constant([5, -6], tf.int64), tf.constant([3, 12], tf.int64)
    x, inv, flags = f(a, b, tf.constant([True, False]))
    np.testing.assert_array_equal(x.numpy(), (np.array([5, -6]) & [3, 12]) | (np.array([5, -6]) ^ 3))
    np.testing.assert_array_equal(inv.numpy(), [-6, 5])
    np.testing.assert_array_equal(flags.numpy(), [True, True])


def test_float_operands_are_refused():
    with pytest.raises(tf.errors.InvalidArgumentError, match="BitwiseAnd does not support dtype float32"):
        tf.constant([1.0]) & tf.constant([2.0])
