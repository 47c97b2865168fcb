"""The dtypes beyond float32/float64/int32/int64/uint8/bool/string: TF's DType objects, NumPy in and out,
Cast, printing, per-op rounding of float16/bfloat16 arithmetic, wrapping integers, the mixed-dtype and
weak-scalar rules, reductions, matmul and gradients, eagerly and inside tf.function. References are
NumPy's float16 (which computes each op in float32 and rounds, as TF's Eigen::half) and float64."""
import numpy as np
import pytest

import kiln as tf

NEW = ["float16", "bfloat16", "int8", "int16", "uint16", "uint32", "uint64", "complex64", "complex128"]


def half(x):
    with np.errstate(over="ignore"):  # float16 overflows to inf, as the tests want
        return np.asarray(x, dtype=np.float32).astype(np.float16)


def bf16_round(x):
    """float32 -> the nearest bfloat16 (ties to even), as float32."""
    b = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("name,enum,size", [("float16", 19, 2), ("bfloat16", 14, 2), ("int8", 6, 1),
                                            ("int16", 5, 2), ("uint16", 17, 2), ("uint32", 22, 4),
                                            ("uint64", 23, 8), ("complex64", 8, 8), ("complex128", 18, 16)])
def test_dtype_objects_have_tensorflows_properties(name, enum, size):
    d = getattr(tf, name)
    assert d.name == name and d.as_datatype_enum == enum and d.size == size
    assert tf.as_dtype(enum) == d and tf.as_dtype(name) == d
    assert str(d) == f"<dtype: '{name}'>"
    assert d.is_floating == (name in ("float16", "bfloat16"))
    assert d.is_integer == (name.startswith("int") or name.startswith("uint"))
    assert d.is_complex == name.startswith("complex")
    assert d.is_unsigned == name.startswith("uint")


def test_dtype_limits_and_numpy_forms():
    assert tf.half is tf.float16 and tf.as_dtype(np.float16) == tf.float16
    assert tf.float16.min == -65504.0 and tf.float16.max == 65504.0
    assert tf.int8.min == -128 and tf.uint64.max == 2**64 - 1
    assert tf.complex64.real_dtype == tf.float32 and tf.complex128.real_dtype == tf.float64
    assert tf.as_dtype(np.complex64) == tf.complex64 and tf.as_dtype(complex) == tf.complex128
    assert tf.bfloat16.as_numpy_dtype == np.float32  # NumPy has no bfloat16 (Kiln's documented choice)
    assert float(tf.bfloat16.max) == pytest.approx(3.3895313892515355e38)
    with pytest.raises(TypeError):
        tf.complex64.min  # noqa: B018 - TF raises TypeError too


@pytest.mark.parametrize("np_type", [np.float16, np.int8, np.int16, np.uint16, np.uint32, np.uint64, np.complex64,
                                     np.complex128])
def test_numpy_arrays_round_trip(np_type):
    a = (np.arange(6) - 2).astype(np_type).reshape(2, 3) if np.dtype(np_type).kind != "u" else \
        np.arange(6).astype(np_type).reshape(2, 3)
    if np.dtype(np_type).kind == "c":
        a = a + 1j * a.astype(np_type)
    t = tf.constant(a)
    assert t.dtype == tf.as_dtype(np_type)
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.numpy().dtype == np.dtype(np_type)
    np.testing.assert_array_equal(np.asarray(t), a)


def test_bfloat16_reads_out_as_float32():
    x = np.array([1.1, -3.3, 1 + 2**-8, 1 + 3 * 2**-8, 3.4e38], dtype=np.float32)
    t = tf.constant(x, dtype=tf.bfloat16)
    assert t.dtype == tf.bfloat16 and t.numpy().dtype == np.float32
    np.testing.assert_array_equal(t.numpy(), bf16_round(x))  # ties to even; 3.4e38 rounds to inf
    assert np.isinf(t.numpy()[-1])


def test_cast_to_float16_matches_numpy_edge_values():
    x = np.array([0.0, -0.0, 1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504, 65519.99, 65520, 1e10, -1e10, 2**-24,
                  2**-25, 3 * 2**-25, 6.1e-5, np.inf, -np.inf, np.nan], dtype=np.float32)
    got = tf.cast(tf.constant(x), tf.float16).numpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16)[:-1], half(x).view(np.uint16)[:-1])
    assert np.isnan(got[-1]) and np.signbit(got[1])


def test_cast_from_float16_to_integers_truncates():
    x = tf.constant([-2.7, 2.7, 300.5, -0.5], dtype=tf.float16)
    assert tf.cast(x, tf.int32).numpy().tolist() == [-2, 2, 300, 0]
    assert tf.cast(x, tf.uint8).numpy().tolist() == [254, 2, 44, 0]  # low 8 bits, as TF's CPU kernel
    assert tf.cast(tf.constant([200, -129], tf.int32), tf.int8).numpy().tolist() == [-56, 127]


def test_guide_printing_of_float16():
    t = tf.constant([[1, 2], [3, 4], [5, 6]], dtype=tf.float16)
    assert str(t).endswith("[[1. 2.]\n [3. 4.]\n [5. 6.]], shape=(3, 2), dtype=float16)")
    assert str(tf.constant(0.1, tf.float16)).endswith("(0.1, shape=(), dtype=float16)")
    assert "numpy=array([1., 2.], dtype=float16)" in repr(tf.constant([1, 2], tf.float16))
    assert str(tf.constant([1 + 2j, -3.5 - 0.5j])).endswith("([ 1. +2.j  -3.5-0.5j], shape=(2,), dtype=complex128)")


@pytest.mark.parametrize("op", [np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum])
def test_float16_arithmetic_rounds_each_op_like_numpy(op):
    rng = np.random.default_rng(0)
    a = half(rng.normal(size=64) * 100)
    b = half(rng.normal(size=64) * 3)
    a[:4] = [60000, -60000, 2048, 6e-8]
    b[:4] = [2, 3, 1, 0.5]
    tf_op = {np.add: tf.add, np.subtract: tf.subtract, np.multiply: tf.multiply, np.divide: tf.divide,
             np.maximum: tf.maximum, np.minimum: tf.minimum}[op]
    with np.errstate(over="ignore", divide="ignore"):
        want = op(a, b)  # NumPy computes float16 ops in float32 and rounds once
    eager = tf_op(tf.constant(a), tf.constant(b)).numpy()
    traced = tf.function(tf_op)(tf.constant(a), tf.constant(b)).numpy()
    np.testing.assert_array_equal(eager.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(traced.view(np.uint16), want.view(np.uint16))


def test_float16_math_functions_round_the_float32_result():
    x = half(np.linspace(0.01, 8, 50))
    for tf_fn, np_fn in [(tf.sqrt, np.sqrt), (tf.exp, np.exp), (tf.math.log, np.log), (tf.tanh, np.tanh),
                         (tf.sin, np.sin)]:
        want = np_fn(x.astype(np.float32)).astype(np.float16)
        got = tf_fn(tf.constant(x)).numpy()
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3)
        assert got.dtype == np.float16


def test_fused_chains_keep_per_op_rounding():
    @tf.function
    def chain(x):
        return (x * 3.0 + 1.0) * 0.5 - x

    x = half([0.1, 1000.3, -7.7, 2049.0])
    want = (x * np.float16(3) + np.float16(1)) * np.float16(0.5) - x
    np.testing.assert_array_equal(chain(tf.constant(x)).numpy().view(np.uint16), want.view(np.uint16))


def test_bfloat16_arithmetic_rounds_to_bfloat16():
    a = tf.constant([256.0, 1.0, 3.0], tf.bfloat16)
    b = tf.constant([1.0, 2**-9, 7.0], tf.bfloat16)
    got = (a + b).numpy()
    np.testing.assert_array_equal(got, bf16_round(np.array([256.0, 1.0, 10.0], np.float32)))
    assert (a * b).dtype == tf.bfloat16


def test_integer_types_wrap_and_floor_divide_as_tensorflow():
    a = np.array([127, -128, -7, 7, 100], np.int8)
    b = np.array([1, -1, 2, -2, 3], np.int8)
    ta, tb = tf.constant(a), tf.constant(b)
    np.testing.assert_array_equal((ta + tb).numpy(), a + b)
    np.testing.assert_array_equal((ta * tb).numpy(), a * b)
    np.testing.assert_array_equal((ta // tb).numpy(), np.array([127, -128, -4, -4, 33], np.int8))
    np.testing.assert_array_equal((ta % tb).numpy(), np.mod(a, b))
    u = tf.constant(np.array([0, 5], np.uint16))
    np.testing.assert_array_equal((u - tf.constant(np.array([1, 1], np.uint16))).numpy(), [65535, 4])
    with pytest.raises(tf.errors.InvalidArgumentError):
        ta // tf.constant(np.zeros(5, np.int8))
    assert (tf.constant(np.array([3], np.uint64)) < tf.constant(np.array([2**63], np.uint64))).numpy().tolist() == [True]


def test_mixed_dtypes_are_refused_and_python_scalars_are_weak():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant(1, tf.int8) + tf.constant(1, tf.int16)
    assert (tf.constant([1.5], tf.float16) * 2).dtype == tf.float16
    assert (tf.constant([1.5], tf.float16) * 2.5).numpy().tolist() == [3.75]
    assert (tf.constant([1], tf.int8) + 1).dtype == tf.int8
    assert (2 * tf.constant([1.5], tf.bfloat16)).dtype == tf.bfloat16


def test_reductions_and_matmul_in_float16():
    rng = np.random.default_rng(1)
    a, b = half(rng.normal(size=(4, 5))), half(rng.normal(size=(5, 3)))
    got = tf.matmul(tf.constant(a), tf.constant(b))
    assert got.dtype == tf.float16
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want.astype(np.float64), rtol=2e-3, atol=2e-3)
    s = tf.reduce_sum(tf.constant(a), axis=1)
    np.testing.assert_allclose(s.numpy().astype(np.float64), a.astype(np.float64).sum(axis=1), rtol=2e-3, atol=2e-3)
    assert tf.reduce_max(tf.constant(a)).numpy() == a.max()
    assert tf.argmax(tf.constant(a), axis=0).numpy().tolist() == a.argmax(axis=0).tolist()
    assert tf.reduce_sum(tf.constant(np.array([30000, 30000], np.int16))).numpy() == -5536  # wraps


def test_float16_gradients():
    x = tf.Variable(np.array([0.5, -2.0, 3.0], np.float16))
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(x * x + tf.sin(x))
    g = tape.gradient(y, x)
    assert g.dtype == tf.float16
    xs = np.array([0.5, -2.0, 3.0])
    np.testing.assert_allclose(g.numpy().astype(np.float64), 2 * xs + np.cos(xs), rtol=2e-3)
    w = tf.Variable(tf.constant([[1.0, 2.0]], tf.bfloat16))
    with tf.GradientTape() as tape:
        z = tf.reduce_sum(tf.matmul(w, tf.constant([[3.0], [4.0]], tf.bfloat16)))
    assert tape.gradient(z, w).numpy().tolist() == [[3.0, 4.0]]


def test_storage_ops_on_every_new_dtype():
    for name in NEW:
        d = getattr(tf, name)
        x = tf.cast(tf.reshape(tf.range(6), (2, 3)), d)
        y = tf.concat([tf.transpose(x), tf.reverse(tf.transpose(x), [0])], axis=1)
        assert y.dtype == d and y.shape == (3, 4)
        g = tf.gather(tf.reshape(y, [-1]), [5, 0])
        assert tf.cast(g, tf.int32).numpy().tolist() == [4, 0]
        assert tf.zeros([2], d).dtype == d and tf.ones([2], d).dtype == d


def test_checkpoint_keeps_new_dtypes(tmp_path):
    v = tf.Variable(np.array([1.5, -2.25], np.float16))
    i = tf.Variable(np.array([-3, 4], np.int8))
    path = tf.train.Checkpoint(v=v, i=i).save(str(tmp_path / "ckpt"))
    v2 = tf.Variable(np.zeros(2, np.float16))
    i2 = tf.Variable(np.zeros(2, np.int8))
    tf.train.Checkpoint(v=v2, i=i2).restore(path)
    assert v2.numpy().tolist() == [1.5, -2.25] and i2.numpy().tolist() == [-3, 4]
    assert dict(tf.train.list_variables(path))["v/.ATTRIBUTES/VARIABLE_VALUE"] == [2]


def test_complex_arithmetic_and_parts_match_numpy():
    a = np.array([1 + 2j, -3.5 - 0.5j, 0j, 2 - 7j], np.complex64)
    b = np.array([0.5 - 1j, 2 + 2j, 1 + 0j, -1j], np.complex64)
    ta, tb = tf.constant(a), tf.constant(b)
    for got, want in [(ta + tb, a + b), (ta - tb, a - b), (ta * tb, a * b), (ta / tb, a / b), (-ta, -a)]:
        assert got.dtype == tf.complex64
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(tf.math.real(ta).numpy(), a.real)
    np.testing.assert_array_equal(tf.math.imag(ta).numpy(), a.imag)
    np.testing.assert_array_equal(tf.math.conj(ta).numpy(), np.conj(a))
    np.testing.assert_allclose(tf.abs(ta).numpy(), np.abs(a), rtol=1e-6)
    np.testing.assert_allclose(tf.math.angle(ta).numpy(), np.angle(a), rtol=1e-6)
    assert tf.abs(ta).dtype == tf.float32 and tf.math.real(tf.constant(a.astype(np.complex128))).dtype == tf.float64
    z = tf.complex(tf.constant([1.0, -2.0]), tf.constant([[0.5], [3.0]]))
    np.testing.assert_array_equal(z.numpy(), np.array([1.0, -2.0]) + 1j * np.array([[0.5], [3.0]]))
    assert z.dtype == tf.complex64
    assert (ta == tb).numpy().tolist() == [False, False, False, False]
    assert (ta * 2).dtype == tf.complex64  # a weak Python scalar


def test_complex_reductions_and_matmul():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    b = rng.normal(size=(4, 2)) + 1j * rng.normal(size=(4, 2))
    np.testing.assert_allclose(tf.reduce_sum(tf.constant(a), axis=0).numpy(), a.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(tf.reduce_mean(tf.constant(a)).numpy(), a.mean(), rtol=1e-12)
    np.testing.assert_allclose(tf.matmul(tf.constant(a), tf.constant(b)).numpy(), a @ b, rtol=1e-12)
    traced = tf.function(lambda x, y: tf.matmul(x, y) * 2 + 1)(tf.constant(a), tf.constant(b))
    np.testing.assert_allclose(traced.numpy(), (a @ b) * 2 + 1, rtol=1e-12)
    assert str(tf.constant(1 + 2j, tf.complex64)).endswith("((1+2j), shape=(), dtype=complex64)")


def test_bfloat16_repr_is_tensorflows():
    assert repr(tf.constant([1.1, 2.0, float("inf")], tf.bfloat16)).endswith(
        "numpy=array([1.10156, 2, inf], dtype=bfloat16)>")
    assert repr(tf.constant(1.5, tf.bfloat16)).endswith("numpy=1.5>")
    assert str(tf.constant([1.1, 2.0], tf.bfloat16)).endswith("([1.10156 2], shape=(2,), dtype=bfloat16)")


def test_complex_exp_log_sqrt():
    z = np.array([1 + 2j, -3.5 - 0.5j, -4 + 0j, 0.25j], np.complex128)
    for tf_fn, np_fn in [(tf.exp, np.exp), (tf.math.log, np.log), (tf.sqrt, np.sqrt)]:
        got = tf_fn(tf.constant(z))
        assert got.dtype == tf.complex128
        np.testing.assert_allclose(got.numpy(), np_fn(z), rtol=1e-14)
    np.testing.assert_allclose(tf.exp(tf.constant(z.astype(np.complex64))).numpy(), np.exp(z), rtol=1e-6)
