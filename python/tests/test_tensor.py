"""Tensors from Python: TF's literal rules, NumPy in and out without copies, printing, operators, indexing."""
import gc
import sys

import numpy as np
import pytest

import kiln as tf


def test_literal_rules_are_tensorflows():
    assert tf.constant(2.0).dtype == tf.float32
    assert tf.constant(1).dtype == tf.int32
    assert tf.constant(2**40).dtype == tf.int64
    assert tf.constant(True).dtype == tf.bool
    assert tf.constant("a").dtype == tf.string
    assert tf.constant([1.5, 2.5]).dtype == tf.float32
    assert tf.constant(np.array([1.5])).dtype == tf.float64  # a NumPy float64 array stays float64
    assert tf.constant(1, dtype=tf.float32).numpy() == np.float32(1.0)
    x = tf.constant([1.0, 2.0])
    assert (x * 2).dtype == tf.float32  # a Python number takes the tensor's dtype
    assert (x + np.array([1.0, 1.0])).dtype == tf.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_])
def test_numpy_round_trip_every_dtype(dtype):
    a = (np.arange(12).reshape(3, 4) % 7).astype(dtype)
    t = tf.constant(a)
    assert t.dtype == tf.as_dtype(dtype)
    assert t.shape == (3, 4)
    out = t.numpy()
    assert out.dtype == a.dtype and np.array_equal(out, a)
    assert not np.shares_memory(out, a)  # a writable array is copied in: the tensor never changes
    out[...] = 0  # TF's numpy() is a writable copy
    view = np.asarray(t)  # out without a copy, read-only: tensors are immutable
    assert np.array_equal(view, a) and not view.flags.writeable and not np.shares_memory(view, out)
    assert np.shares_memory(np.asarray(tf.constant(view)), view)  # a tensor's own memory goes back in shared


def test_strings_round_trip():
    t = tf.constant([["a", "bc"], ["", "d"]])
    assert t.dtype == tf.string and t.shape == (2, 2)
    assert t.numpy().tolist() == [[b"a", b"bc"], [b"", b"d"]]


def test_numpy_view_outlives_the_tensor():
    t = tf.constant([1.0, 2.0, 3.0]) * 2
    view = t.numpy()
    del t
    gc.collect()
    assert view.tolist() == [2.0, 4.0, 6.0]


def test_array_outlives_its_python_name_inside_a_tensor():
    a = np.array([1.0, 2.0], dtype=np.float32)
    refs = sys.getrefcount(a)
    t = tf.constant(a)
    assert sys.getrefcount(a) == refs  # copied: the tensor keeps no reference to the array
    del a
    gc.collect()
    assert t.numpy().tolist() == [1.0, 2.0]
    del t
    gc.collect()


def test_in_place_kernels_never_write_over_a_shared_array():
    a = np.ones(1000, dtype=np.float32)
    t = tf.exp(tf.constant(a))
    assert np.all(a == 1.0)
    assert np.allclose(t.numpy(), np.e)


def test_non_contiguous_and_big_endian_arrays_are_copied():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]
    t = tf.constant(a)
    assert np.array_equal(t.numpy(), a) and not np.shares_memory(t.numpy(), a)
    b = np.arange(4, dtype=">i4")
    assert tf.constant(b).numpy().tolist() == [0, 1, 2, 3]


def test_bad_inputs_give_clear_errors():
    with pytest.raises(ValueError, match="non-rectangular"):
        tf.constant([[1, 2], [3]])
    with pytest.raises(TypeError, match="float128"):
        tf.constant(np.zeros(2, dtype=np.longdouble))
    with pytest.raises(TypeError, match="not a str or bytes"):
        tf.constant(np.array([object()], dtype=object))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1, 2]) + tf.constant([1.0, 2.0])


def test_hostile_sizes_are_tensorflows_errors():
    # More memory than any machine has: TF's ResourceExhaustedError naming op, shape and bytes.
    with pytest.raises(tf.errors.ResourceExhaustedError, match=r"Range.*\(1000000000000,\).*8000000000000 bytes"):
        tf.range(10**12, dtype=tf.int64)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="OOM when allocating"):
        tf.zeros([2**40])
    assert issubclass(tf.errors.ResourceExhaustedError, tf.errors.OpError)
    # Counts that overflow, and float bounds no int64 counts: InvalidArgumentError.
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Fill.*\(4611686018427387904,\)"):
        tf.zeros([2**62])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Range"):
        tf.range(0.0, 1e300)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Range"):
        tf.range(0.0, float("inf"))


def test_dlpack_both_ways():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    a = np.from_dlpack(t)
    assert np.shares_memory(a, np.asarray(t)) and a.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    src = np.arange(6, dtype=np.int64).reshape(2, 3)
    back = tf.experimental.dlpack.from_dlpack(src)
    # NumPy may still write `src`: copied, so the tensor never changes.
    assert back.dtype == tf.int64 and not np.shares_memory(np.asarray(back), src)
    src[0, 0] = 99
    assert back.numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert np.shares_memory(np.asarray(tf.experimental.dlpack.from_dlpack(t)), np.asarray(t))


def test_printing_is_tensorflows():
    t = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert str(t) == "kiln.Tensor(\n[[1. 2.]\n [3. 4.]], shape=(2, 2), dtype=float32)"
    assert repr(t) == ("<kiln.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[1., 2.],\n       [3., 4.]], "
                       "dtype=float32)>").replace("numpy=\narray", "numpy=array")
    assert str(tf.constant("aa")) == "kiln.Tensor(b'aa', shape=(), dtype=string)"
    assert repr(tf.constant(4)) == "<kiln.Tensor: shape=(), dtype=int32, numpy=4>"


def test_operators():
    x = tf.constant([7, -7])
    assert (x // 2).numpy().tolist() == [3, -4]
    assert (x % 3).numpy().tolist() == [1, 2]
    assert (-x).numpy().tolist() == [-7, 7]
    assert abs(x).numpy().tolist() == [7, 7]
    assert (2 ** tf.constant([1.0, 3.0])).numpy().tolist() == [2.0, 8.0]
    assert (1 - tf.constant(3.0)).numpy() == -2.0
    m = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    assert (m @ m).numpy().tolist() == [[7.0, 10.0], [15.0, 22.0]]
    assert (x > 0).numpy().tolist() == [True, False]
    assert ((x > 0) & (x < 10)).numpy().tolist() == [True, False]
    assert (~(x > 0)).numpy().tolist() == [False, True]


def test_operator_slots_convert_reflect_and_raise_as_the_methods():
    # `a + b` goes through kiln.Tensor's number slots, not the __add__ methods:
    # both must give the same values and errors, in either operand order.
    t = tf.constant([1.0, 2.0])
    assert (2 - t).numpy().tolist() == (t.__rsub__(2)).numpy().tolist() == [1.0, 0.0]
    assert (t / 2).dtype == tf.float32 and (2 / t).numpy().tolist() == [2.0, 1.0]
    r = np.array([1.0, 1.0], np.float32) + t  # NumPy defers to the tensor (__array_priority__)
    assert isinstance(r, tf.Tensor) and r.numpy().tolist() == [2.0, 3.0]
    assert (t * tf.Variable([2.0, 3.0])).numpy().tolist() == [2.0, 6.0]
    assert (tf.Variable([2.0, 3.0]) - t).numpy().tolist() == [1.0, 1.0]
    assert (t + [1, 2]).numpy().tolist() == [2.0, 4.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="FloorDiv: integer division by zero"):
        tf.constant([1]) // tf.constant([0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="x has dtype float32 but y has dtype int32"):
        t % tf.constant([1, 2])
    with pytest.raises(ValueError, match="non-rectangular"):
        t + [1, [2]]
    assert t.numpy().tolist() == [1.0, 2.0]


def test_tensorflows_numerics():
    assert tf.math.floordiv(tf.constant(1.0), 0.1).numpy() == 10.0  # floor(x / y), as TF
    assert np.isinf(tf.math.floordiv(tf.constant(np.inf), 8.0).numpy())
    assert np.signbit(tf.math.floormod(tf.constant(-0.0), 1.0).numpy())
    assert np.signbit(tf.negative(tf.constant(0.0)).numpy())
    np.testing.assert_array_equal(tf.round(tf.constant([0.5, 1.5, 2.5, -2.5])).numpy(), [0.0, 2.0, 2.0, -2.0])
    np.testing.assert_array_equal(tf.math.rint(tf.constant([0.5, 1.5])).numpy(), [0.0, 2.0])
    np.testing.assert_array_equal(tf.math.floor(tf.constant([-0.5, 1.5])).numpy(), [-1.0, 1.0])
    np.testing.assert_array_equal(tf.math.ceil(tf.constant([-0.5, 1.5])).numpy(), [-0.0, 2.0])
    np.testing.assert_array_equal(tf.math.squared_difference(tf.constant([3, 1]), 1).numpy(), [4, 0])
    np.testing.assert_array_equal(tf.math.truncatediv(tf.constant([-7, 7]), 2).numpy(), [-3, 3])
    np.testing.assert_array_equal(tf.math.truncatemod(tf.constant([-7, 7]), 2).numpy(), [-1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="integer division by zero"):
        tf.constant([1, 2]) // 0
    assert tf.cast(tf.constant(np.nan), tf.int32).numpy() == np.iinfo(np.int32).min


def test_python_conversions_and_len():
    assert float(tf.constant(2.5)) == 2.5
    assert int(tf.constant(3)) == 3
    assert [10, 20, 30][tf.constant(1)] == 20
    assert bool(tf.constant(True)) and not bool(tf.constant(0.0))
    assert len(tf.zeros([4, 2])) == 4
    assert [r.numpy().tolist() for r in tf.constant([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    with pytest.raises(TypeError, match="unhashable"):
        hash(tf.constant(1))


def test_indexing_is_numpys():
    a = np.arange(24).reshape(2, 3, 4).astype(np.int32)
    t = tf.constant(a)
    for key in [0, -1, (1, 2), (slice(None), 1), (..., 2), (slice(None, None, -1),), (0, slice(1, None, 2)),
                (None, 0), (Ellipsis, None), (1, Ellipsis, slice(0, 3, 2))]:
        assert np.array_equal(t[key].numpy(), a[key]), key
    assert np.array_equal(t[tf.constant(1)].numpy(), a[1])


def test_a_whole_key_of_bools_masks_as_tf_boolean_mask():
    a = np.arange(6).reshape(3, 2).astype(np.int32)
    t, v = tf.constant(a), tf.Variable(a.astype(np.float32))
    rows = np.array([True, False, True])
    assert np.array_equal(t[rows].numpy(), a[rows])  # TF's data_performance guide indexes so
    assert np.array_equal(t[tf.constant(rows)].numpy(), a[rows])
    assert np.array_equal(t[t > 2].numpy(), a[a > 2])
    assert np.array_equal(v[v > 2.0].numpy(), a[a > 2])
    assert np.array_equal(tf.function(lambda x: x[x > 2])(t).numpy(), a[a > 2])
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        t[True]


def test_graph_tensor_as_bool_raises_tfs_error():
    @tf.function(autograph=False)
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(tf.errors.OperatorNotAllowedInGraphError, match="Python `bool`"):
        f(tf.constant(1.0))
    assert issubclass(tf.errors.OperatorNotAllowedInGraphError, TypeError)


def test_shape_has_none_dims_while_tracing():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3])])
    def f(x):
        seen.append((x.shape.as_list(), x.shape.rank, x.ndim))
        return x

    f(tf.zeros([2, 3]))
    assert seen == [([None, 3], 2, 2)]


def test_ref_makes_tensors_and_variables_usable_as_keys():
    v, t = tf.Variable(1.0), tf.constant(1.0)
    table = {v.ref(): "v", t.ref(): "t"}
    assert table[v.ref()] == "v" and table[t.ref()] == "t"
    assert v.ref().deref() is v and t.ref() != tf.constant(1.0).ref()
    with pytest.raises(TypeError, match="unhashable"):
        hash(v)


def test_split_is_tfs():
    x = tf.reshape(tf.range(12.0), [2, 6])
    a, b, c = tf.split(x, [1, -1, 2], axis=1)
    np.testing.assert_array_equal(a.numpy(), [[0.0], [6.0]])
    np.testing.assert_array_equal(b.numpy(), [[1.0, 2.0, 3.0], [7.0, 8.0, 9.0]])
    np.testing.assert_array_equal(c.numpy(), [[4.0, 5.0], [10.0, 11.0]])
    halves = tf.split(x, 2, axis=-1)
    assert [h.shape for h in halves] == [(2, 3), (2, 3)]
    np.testing.assert_array_equal(tf.split(x, tf.constant([4, 2]), 1)[1].numpy(), [[4.0, 5.0], [10.0, 11.0]])
    assert len(tf.split(x, np.int64(3), 1)) == 3 and len(tf.split(x, tf.constant(2), 1)) == 2
    assert [p.shape for p in tf.split(x, np.array([5, 1]), 1)] == [(2, 5), (2, 1)]
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not split evenly into 4 parts"):
        tf.split(x, 4, axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="add up to 5"):
        tf.split(x, [2, 3], axis=1)
    with pytest.raises(ValueError, match="num=3"):
        tf.split(x, [2, 4], axis=1, num=3)


def test_split_gradient_and_trace_agree():
    x = tf.reshape(tf.range(8.0), [2, 4])

    def grad(v):
        with tf.GradientTape() as tape:
            tape.watch(v)
            p = tf.split(v, 4, axis=1)
            loss = tf.reduce_sum(p[0]) + 2.0 * tf.reduce_sum(p[1]) + 4.0 * tf.reduce_sum(p[3])
        return tape.gradient(loss, v)

    want = [[1.0, 2.0, 0.0, 4.0], [1.0, 2.0, 0.0, 4.0]]
    np.testing.assert_array_equal(grad(x).numpy(), want)
    np.testing.assert_array_equal(tf.function(grad)(x).numpy(), want)


def test_copy_deepcopy_and_pickle_follow_tf():
    import copy
    import pickle
    x = tf.constant([1.0, 2.0])
    assert copy.copy(x) is x and copy.deepcopy(x) is x  # tensors never change: the copy is the tensor
    back = pickle.loads(pickle.dumps(x))
    assert back.dtype == tf.float32 and back.numpy().tolist() == [1.0, 2.0]
    v = tf.Variable([1.0, 2.0], name="w", trainable=False)
    copies = [copy.copy(v), copy.deepcopy(v), pickle.loads(pickle.dumps(v))]
    v.assign([5.0, 5.0])
    for c in copies:  # new variables with the value at the time of the copy
        assert c.numpy().tolist() == [1.0, 2.0] and c.name == "w:0" and not c.trainable
    assert copy.deepcopy({"w": v})["w"].numpy().tolist() == [5.0, 5.0]


def test_buffer_protocol_refuses_without_crashing():
    import numpy as np
    assert np.asarray(tf.constant(["a"])).tolist() == [b"a"]  # NumPy falls back to __array__
    for t in (tf.constant(["a"]), tf.constant([1.0], tf.bfloat16)):
        with pytest.raises(BufferError):
            memoryview(t)

    @tf.function
    def f(x):
        with pytest.raises(BufferError):
            memoryview(x)
        return x
    f(tf.constant([1.0]))
