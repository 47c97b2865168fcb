"""The tf.* names the catalogue (test_tf_catalogue) found missing and Kiln now has: each against NumPy in
float64, central differences, or TF's documented outputs."""
import os

import numpy as np
import pytest

import kiln as tf
from numeric_grad import check_gradients


# ---- Variable settings, enums ---------------------------------------------------------------------------

def test_variable_synchronization_and_aggregation_are_recorded():
    v = tf.Variable(1.0)
    assert v.synchronization == tf.VariableSynchronization.AUTO
    assert v.aggregation == tf.VariableAggregation.NONE
    w = tf.Variable(2.0, synchronization=tf.VariableSynchronization.ON_READ, aggregation=tf.VariableAggregation.SUM)
    assert w.synchronization == tf.VariableSynchronization.ON_READ and w.aggregation == tf.VariableAggregation.SUM
    assert not w.trainable  # TF: an ON_READ variable is not trainable unless asked
    u = tf.Variable(3.0, aggregation=2, trainable=False, name="u")
    assert u.aggregation == tf.VariableAggregation.MEAN and not u.trainable and u.numpy() == 3.0


def test_variable_settings_are_checked_as_tf_checks_them():
    with pytest.raises(ValueError, match="ON_READ only for non-trainable"):
        tf.Variable(1.0, trainable=True, synchronization=tf.VariableSynchronization.ON_READ)
    with pytest.raises(ValueError, match="Invalid variable aggregation mode: 7"):
        tf.Variable(1.0, aggregation=7)


def test_enum_values_are_tfs():
    assert [m.value for m in tf.VariableSynchronization] == [0, 1, 2, 3]
    assert [m.name for m in tf.VariableAggregation] == ["NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA"]
    assert (tf.AggregationMethod.ADD_N, tf.AggregationMethod.DEFAULT, tf.AggregationMethod.EXPERIMENTAL_TREE,
            tf.AggregationMethod.EXPERIMENTAL_ACCUMULATE_N) == (0, 0, 1, 2)


# ---- TF's initializers and the Keras aliases -------------------------------------------------------------

def test_keras_modules_under_tfs_names():
    assert tf.initializers is tf.keras.initializers and tf.losses is tf.keras.losses
    assert tf.metrics is tf.keras.metrics and tf.optimizers is tf.keras.optimizers


def test_zeros_ones_and_constant_initializers():
    z = tf.zeros_initializer()((2, 3))
    assert z.dtype == tf.float32 and z.shape == (2, 3) and not z.numpy().any()
    o = tf.ones_initializer()([2], dtype=tf.int32)
    assert o.dtype == tf.int32 and o.numpy().tolist() == [1, 1]
    c = tf.constant_initializer([1, 2, 3, 4])((2, 2))  # TF: the value's dtype when none is given
    assert c.dtype == tf.int32 and c.numpy().tolist() == [[1, 2], [3, 4]]
    assert tf.constant_initializer(5.0)([3], dtype=tf.float64).numpy().tolist() == [5.0, 5.0, 5.0]
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        tf.constant_initializer({"a": 1})
    with pytest.raises(ValueError):
        tf.ones_initializer()([2], dtype=tf.string)


def test_random_initializers():
    init = tf.random_normal_initializer(mean=1.0, stddev=2.0, seed=3)
    a, b = init((200, 100)), init((200, 100))
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # seeded: the same values every call
    assert abs(a.numpy().mean() - 1.0) < 0.05 and abs(a.numpy().std() - 2.0) < 0.05
    u = tf.random_uniform_initializer(-1, 3)((20000,))
    assert u.numpy().min() >= -1 and u.numpy().max() < 3 and abs(u.numpy().mean() - 1) < 0.05
    i = tf.random_uniform_initializer(0, 5, seed=1)((1000,), dtype=tf.int32)
    assert i.dtype == tf.int32 and set(i.numpy().tolist()) == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError, match="floating point"):
        tf.random_normal_initializer()((2,), dtype=tf.int32)
    assert tf.random_normal_initializer(seed=4).get_config() == {"mean": 0.0, "stddev": 0.05, "seed": 4}


# ---- specs and devices -------------------------------------------------------------------------------------

def test_spec_classes_are_type_specs():
    assert isinstance(tf.TensorSpec([2], tf.float32), tf.TypeSpec)
    assert isinstance(tf.RaggedTensorSpec([2, None], tf.int32), tf.TypeSpec)
    assert isinstance(tf.SparseTensorSpec([2, 3], tf.float32), tf.TypeSpec)
    assert not isinstance(tf.constant(1.0), tf.TypeSpec)


def test_type_spec_from_value():
    assert tf.type_spec_from_value(tf.constant([[1.0, 2.0]])) == tf.TensorSpec([1, 2], tf.float32)
    assert tf.type_spec_from_value(np.int64(3)) == tf.TensorSpec([], tf.int64)
    rt = tf.ragged.constant([[1, 2], [3]])
    assert tf.type_spec_from_value(rt) == rt._type_spec
    with pytest.raises(TypeError, match="Could not build a TypeSpec"):
        tf.type_spec_from_value(object())


def test_device_spec_parses_and_prints_tfs_strings():
    spec = tf.DeviceSpec.from_string("/job:worker/replica:0/task:1/device:GPU:2")
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == ("worker", 0, 1, "GPU", 2)
    assert spec.to_string() == "/job:worker/replica:0/task:1/device:GPU:2"
    assert tf.DeviceSpec.from_string("/cpu:0").to_string() == "/device:CPU:0"
    assert tf.DeviceSpec(device_type="gpu").to_string() == "/device:GPU:*"
    merged = spec.make_merged_spec(tf.DeviceSpec(task=3, device_type="CPU"))
    assert merged.to_string() == "/job:worker/replica:0/task:3/device:CPU:2"
    assert spec.replace(job="ps").job == "ps" and spec.job == "worker"
    assert tf.DeviceSpec(job="a") == tf.DeviceSpec.from_string("/job:a")
    with pytest.raises(ValueError, match="Unknown attribute"):
        tf.DeviceSpec.from_string("/foo:bar")
    with tf.device(tf.DeviceSpec(device_type="CPU", device_index=0)):
        assert tf.constant(1.0).numpy() == 1.0


# ---- tf.sets --------------------------------------------------------------------------------------------

def _rows(sparse):
    dense_shape = sparse.dense_shape.numpy()
    rows = [[] for _ in range(int(np.prod(dense_shape[:-1])))]
    for index, value in zip(sparse.indices.numpy(), sparse.values.numpy()):
        rows[int(np.ravel_multi_index(index[:-1], dense_shape[:-1]))].append(value)
    return rows


A = np.array([[[1, 2, 2], [3, 4, 5]], [[6, 7, 8], [9, 9, 9]]], np.int32)
B = np.array([[[2, 3, 1], [5, 6, 7]], [[6, 6, 1], [0, 2, 4]]], np.int32)


@pytest.mark.parametrize("op,ref", [(tf.sets.intersection, np.intersect1d), (tf.sets.union, np.union1d),
                                    (tf.sets.difference, np.setdiff1d)])
def test_set_ops_against_numpy(op, ref):
    result = op(tf.constant(A), tf.constant(B))
    expected = [ref(a, b).tolist() for a, b in zip(A.reshape(4, 3), B.reshape(4, 3))]
    assert [list(r) for r in _rows(result)] == expected
    assert result.dense_shape.numpy().tolist() == [2, 2, max(len(e) for e in expected)]


def test_set_ops_take_sparse_input_and_run_in_functions():
    sparse = tf.sparse.from_dense(tf.constant([[1, 0, 3], [0, 5, 5]]))  # rows {1, 3} and {5}
    result = tf.sets.union(sparse, tf.constant([[3, 4], [6, 6]]))
    assert [list(r) for r in _rows(result)] == [[1, 3, 4], [5, 6]]
    assert tf.sets.size(sparse).numpy().tolist() == [2, 1]
    assert tf.sets.difference(tf.constant(A), tf.constant(B), aminusb=False).dense_shape.numpy().tolist() == [2, 2, 3]

    @tf.function
    def f(a, b):
        return tf.sparse.to_dense(tf.sets.intersection(a, b)), tf.sets.size(a)
    dense, size = f(tf.constant(A), tf.constant(B))
    assert dense.numpy().tolist() == [[[1, 2], [5, 0]], [[6, 0], [0, 0]]]
    assert size.numpy().tolist() == [[2, 3], [3, 1]]


def test_set_errors():
    with pytest.raises(TypeError, match="Invalid dtype"):
        tf.sets.union(tf.constant([[1.0]]), tf.constant([[2.0]]))
    with pytest.raises(ValueError, match="rank >= 2"):
        tf.sets.size(tf.constant([1, 2]))


# ---- tf.test ---------------------------------------------------------------------------------------------

class _Case(tf.test.TestCase):
    def runTest(self):  # noqa: N802 - unittest's name
        pass


def test_test_case_assertions():
    case = _Case()
    case.assertAllClose(tf.constant([1.0, 2.0]), [1.0, 2.0 + 1e-7])
    case.assertAllClose({"a": [tf.constant(1.0)]}, {"a": [1.0]})
    with pytest.raises(AssertionError):
        case.assertAllClose(tf.constant([1.0, 2.0]), [1.0, 2.1])
    case.assertAllEqual(tf.constant([[1, 2]]), np.array([[1, 2]]))
    with pytest.raises(AssertionError):
        case.assertAllEqual([1, 2], [[1, 2]])
    case.assertNotAllClose([1.0], [2.0])
    case.assertAllInRange(tf.constant([0.0, 0.5, 1.0]), 0.0, 1.0)
    case.assertAllGreater(tf.constant([2, 3]), 1)
    case.assertDTypeEqual(tf.constant([1], tf.int64), tf.int64)
    case.assertShapeEqual(np.zeros((2, 3)), tf.zeros([2, 3]))
    assert case.evaluate({"x": tf.constant(3)}) == {"x": 3}
    with case.assertRaisesOpError("must be"):
        raise tf.errors.InvalidArgumentError("x must be positive")
    assert os.path.isdir(case.get_temp_dir())


def test_test_build_queries():
    assert not tf.test.is_gpu_available() and not tf.test.is_built_with_cuda()
    assert not tf.test.is_built_with_gpu_support() and not tf.test.is_built_with_rocm()
    assert not tf.test.is_built_with_xla() and tf.test.gpu_device_name() == ""


def test_compute_gradient_jacobians():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]], tf.float64)
    theoretical, numerical = tf.test.compute_gradient(lambda a: a * a, [x])
    expected = np.diag(2 * x.numpy().ravel())  # d(x_i^2)/dx_j, [x size, y size]
    np.testing.assert_allclose(theoretical[0], expected)
    np.testing.assert_allclose(numerical[0], expected, atol=1e-6)
    y = tf.constant([1.0, -1.0], tf.float64)
    t, n = tf.test.compute_gradient(lambda a, b: tf.reduce_sum(a * b[0]), [tf.constant([2.0, 3.0], tf.float64), y])
    np.testing.assert_allclose(t[1], [[5.0], [0.0]])
    np.testing.assert_allclose(n[1], [[5.0], [0.0]], atol=1e-6)


def test_disable_with_predicate_skips():
    class Case(tf.test.TestCase):
        @tf.test.disable_with_predicate(lambda: True, "not here")
        def test_skipped(self):
            raise AssertionError("ran")
    import unittest
    result = unittest.TestResult()
    Case("test_skipped").run(result)
    assert result.skipped and not result.failures


# ---- tf.compat, tf.sysconfig, tf.types ----------------------------------------------------------------------

def test_compat_text_and_bytes():
    assert tf.compat.as_bytes("é") == "é".encode() and tf.compat.as_bytes(bytearray(b"a")) == b"a"
    assert tf.compat.as_text(b"caf\xc3\xa9") == "café" and tf.compat.as_str("x") == "x"
    assert tf.compat.as_str_any(3) == "3" and tf.compat.as_str_any(b"b") == "b"
    with pytest.raises(TypeError, match="Expected binary or unicode string"):
        tf.compat.as_bytes(3)
    import pathlib
    assert tf.compat.path_to_str(pathlib.Path("/a/b")) == "/a/b"
    assert isinstance(np.int8(1), tf.compat.integral_types) and isinstance(2.5, tf.compat.real_types)
    assert tf.compat.v2 is tf


def test_compat_dimensions_and_horizon():
    assert tf.compat.dimension_value(tf.TensorShape([3, None])[0]) == 3
    assert tf.compat.dimension_at_index(tf.TensorShape([3, 4]), 1) == 4
    assert tf.compat.dimension_at_index(tf.TensorShape(None), 1) is None
    assert tf.compat.forward_compatible(2021, 1, 1) and not tf.compat.forward_compatible(2031, 1, 1)
    with tf.compat.forward_compatibility_horizon(2032, 1, 1):
        assert tf.compat.forward_compatible(2031, 1, 1)
    assert not tf.compat.forward_compatible(2031, 1, 1)


def test_sysconfig_points_at_kilns_headers():
    assert os.path.isfile(os.path.join(tf.sysconfig.get_include(), "kiln", "tensor.h")) or \
        os.path.isdir(os.path.join(tf.sysconfig.get_include(), "kiln"))
    assert f"-I{tf.sysconfig.get_include()}" in tf.sysconfig.get_compile_flags()
    assert tf.sysconfig.get_build_info()["is_cuda_build"] is False


def test_types_experimental():
    f = tf.function(lambda x: x + 1)
    assert isinstance(f, tf.types.experimental.PolymorphicFunction)
    assert isinstance(f, tf.types.experimental.Callable)
    concrete = f.get_concrete_function(tf.TensorSpec([], tf.float32))
    assert isinstance(concrete, tf.types.experimental.ConcreteFunction)
    assert isinstance(concrete, tf.types.experimental.Callable)


# ---- tf.debugging -----------------------------------------------------------------------------------------

def test_binary_assertions_pass_and_fail_with_tfs_message():
    assert tf.debugging.assert_greater(tf.constant([2, 3]), 1) is None
    tf.debugging.assert_less_equal(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]))
    tf.debugging.assert_none_equal(tf.constant([1, 2]), tf.constant([2, 1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"Condition x > y did not hold element-wise:"):
        tf.assert_greater(tf.constant([1, 2, 3, 4, 5]), 2, message="too small")
    try:
        tf.debugging.assert_less(tf.constant([1, 2, 3, 4]), 2)
    except tf.errors.InvalidArgumentError as e:
        text = str(e)
    assert "x (shape=(4,) dtype=int32) = " in text and "['1', '2', '3', '...']" in text


def test_assertions_check_on_every_call_of_a_function():
    @tf.function
    def f(x):
        tf.debugging.assert_positive(x)
        return x * 2
    assert f(tf.constant([1.0])).numpy().tolist() == [2.0]
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant([-1.0]))


def test_unary_and_near_assertions():
    tf.debugging.assert_non_negative(tf.constant([0, 1]))
    tf.debugging.assert_non_positive(tf.constant([0, -1]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="x < 0"):
        tf.debugging.assert_negative(tf.constant([-1, 0]))
    tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.0 + 1e-7]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="not equal to tolerance"):
        tf.debugging.assert_near(tf.constant([1.0]), tf.constant([1.1]), rtol=1e-3, atol=1e-3)


def test_static_assertions_raise_python_errors():
    tf.assert_rank(tf.zeros([2, 3]), 2)
    with pytest.raises(ValueError, match="must have rank 1"):
        tf.debugging.assert_rank(tf.zeros([2, 3]), 1)
    tf.debugging.assert_rank_at_least(tf.zeros([2, 3]), 1)
    with pytest.raises(ValueError):
        tf.debugging.assert_rank_in(tf.zeros([2]), (0, 2))
    assert tf.debugging.assert_scalar(tf.constant(1.0)).numpy() == 1.0
    with pytest.raises(ValueError, match="Expected scalar"):
        tf.debugging.assert_scalar(tf.zeros([2]))
    with pytest.raises(TypeError):
        tf.debugging.assert_type(tf.constant(1), tf.float32)
    with pytest.raises(TypeError):
        tf.debugging.assert_integer(tf.constant(1.0))
    assert tf.debugging.assert_same_float_dtype([tf.constant(1.0, tf.float64)]) == tf.float64
    with pytest.raises(ValueError):
        tf.debugging.assert_same_float_dtype([tf.constant(1)])
    with pytest.raises(TypeError):
        tf.debugging.assert_proper_iterable("abc")
    assert tf.debugging.is_numeric_tensor(tf.constant(1)) and not tf.debugging.is_numeric_tensor(tf.constant("a"))


def test_check_numerics():
    x = tf.constant([1.0, 2.0])
    assert tf.debugging.check_numerics(x, "fine").numpy().tolist() == [1.0, 2.0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="bad : Tensor had NaN values"):
        tf.debugging.check_numerics(tf.constant([np.nan, 1.0]), "bad")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Tensor had Inf and NaN values"):
        tf.debugging.assert_all_finite(tf.constant([np.nan, np.inf]), "m")

    @tf.function
    def f(v):
        return tf.debugging.check_numerics(v * 2, "doubled")
    with pytest.raises(tf.errors.InvalidArgumentError, match="doubled : Tensor had Inf values"):
        f(tf.constant([np.inf]))


def test_error_classes_and_codes():
    assert issubclass(tf.errors.UnavailableError, tf.errors.OpError)
    for cls in (tf.errors.AbortedError, tf.errors.AlreadyExistsError, tf.errors.PermissionDeniedError,
                tf.errors.UnauthenticatedError, tf.errors.UnknownError):
        with pytest.raises(tf.errors.OpError):
            raise cls("x")
    assert (tf.errors.OK, tf.errors.INVALID_ARGUMENT, tf.errors.NOT_FOUND, tf.errors.UNAUTHENTICATED) == (0, 3, 5, 16)


# ---- tf.math composites -------------------------------------------------------------------------------------

X32 = np.array([-30., -3., -0.5, -1e-6, 0., 1e-6, 0.5, 3., 30., 89.], np.float32)


@pytest.mark.parametrize("name,ref,x", [
    ("sinh", np.sinh, X32), ("cosh", np.cosh, X32), ("asinh", np.arcsinh, X32),
    ("tan", np.tan, np.array([-1.5, -0.3, 0.0, 1e-7, 1.2], np.float32)),
    ("acosh", np.arccosh, np.array([1.0, 1.000001, 1.5, 10.0, 1e10, 3e38], np.float32)),
    ("atanh", np.arctanh, np.array([-0.99, -1e-6, 0.0, 1e-6, 0.5, 0.99], np.float32))])
def test_elementwise_composites_keep_float32_accuracy(name, ref, x):
    got = getattr(tf.math, name)(tf.constant(x)).numpy()
    expected = ref(x.astype(np.float64))
    np.testing.assert_allclose(got, expected, rtol=4e-7, atol=1e-30)
    assert getattr(tf, name) is getattr(tf.math, name)


def test_elementwise_composites_edges():
    assert np.isnan(tf.math.acosh(0.5).numpy()) and np.isnan(tf.math.atanh(1.5).numpy())
    assert tf.math.atanh(1.0).numpy() == np.inf
    assert tf.math.cosh(tf.constant(100.0)).numpy() == np.inf  # float32 overflows as TF's


@pytest.mark.parametrize("name,x", [("sinh", [-2.0, -0.3, 0.0, 0.7, 1.5]), ("cosh", [-2.0, 0.0, 0.9]),
                                    ("asinh", [-3.0, 0.0, 0.4, 1e9]), ("acosh", [1.2, 2.0, 50.0]),
                                    ("atanh", [-0.6, 0.0, 0.3]), ("tan", [-1.0, 0.2, 1.3])])
def test_elementwise_composite_gradients(name, x):
    check_gradients(lambda v: tf.reduce_sum(getattr(tf.math, name)(v)), [tf.constant(x, tf.float64)], rtol=1e-6)


def test_small_math_composites():
    assert tf.math.log_sigmoid(0.0).numpy() == pytest.approx(-np.log(2))
    assert tf.math.logical_xor([True, True, False], [True, False, False]).numpy().tolist() == [False, True, False]
    assert tf.math.reciprocal_no_nan([2.0, 0.0]).numpy().tolist() == [0.5, 0.0]
    assert tf.math.scalar_mul(2.0, tf.constant([1.0, 3.0])).numpy().tolist() == [2.0, 6.0]
    with pytest.raises(ValueError, match="Only scalar multiply"):
        tf.scalar_mul(tf.constant([1.0, 2.0]), tf.constant([1.0, 3.0]))
    assert tf.math.polyval([1.0, 2.0, 3.0], tf.constant([2.0, 0.0])).numpy().tolist() == [11.0, 3.0]
    assert tf.math.count_nonzero([[0, 1], [2, 3]], axis=1).numpy().tolist() == [1, 2]
    assert tf.math.count_nonzero([[0, 1], [2, 3]]).dtype == tf.int64
    assert tf.math.invert_permutation([3, 4, 0, 2, 1]).numpy().tolist() == [2, 4, 3, 0, 1]
    assert bool(tf.math.is_non_decreasing([1, 1, 2])) and not bool(tf.math.is_strictly_increasing([1, 1, 2]))
    assert tf.math.zero_fraction([0, 1, 0, 3]).numpy() == 0.5
    np.testing.assert_allclose(tf.math.xlog1py([0.0, 2.0], [-1.0, 1.0]).numpy(), [0.0, 2 * np.log(2)])
    assert tf.math.softmax is tf.nn.softmax and tf.math.log_softmax is tf.nn.log_softmax


def test_segment_reductions():
    # TF's documented example: segment_max([[1,2,3,4],[4,3,2,1],[5,6,7,8]], [0,0,1]) = [[4,3,3,4],[5,6,7,8]]
    c = tf.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    assert tf.math.segment_max(c, [0, 0, 1]).numpy().tolist() == [[4, 3, 3, 4], [5, 6, 7, 8]]
    assert tf.math.segment_min(c, [0, 0, 1]).numpy().tolist() == [[1, 2, 2, 1], [5, 6, 7, 8]]
    assert tf.math.segment_max([1.0, 5.0, 2.0], [0, 0, 2]).numpy().tolist() == [5.0, 0.0, 2.0]  # empty: 0
    data = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    got = tf.math.unsorted_segment_sqrt_n(tf.constant(data), [0, 0, 2], 3).numpy()
    np.testing.assert_allclose(got, [(data[0] + data[1]) / np.sqrt(2), [0, 0], data[2]])


def test_approx_top_k_is_exact_as_tfs_on_the_cpu():
    x = tf.constant([[1.0, 5.0, 2.0], [7.0, 0.0, 3.0]])
    values, indices = tf.math.approx_max_k(x, 2)
    assert values.numpy().tolist() == [[5.0, 2.0], [7.0, 3.0]] and indices.numpy().tolist() == [[1, 2], [0, 2]]
    values, indices = tf.math.approx_min_k(x, 1, reduction_dimension=0)
    assert values.numpy().tolist() == [[1.0, 0.0, 2.0]] and indices.numpy().tolist() == [[0, 1, 0]]
    assert tf.approx_top_k(x, 1, is_max_k=False)[0].numpy().tolist() == [[1.0], [0.0]]


# ---- top-level helpers ------------------------------------------------------------------------------------

def test_realdiv_saturate_cast_sequence_mask():
    assert tf.realdiv(tf.constant([7, -7]), 2).numpy().tolist() == [3, -3]
    assert tf.realdiv([7.0, 1.0], 2.0).numpy().tolist() == [3.5, 0.5]
    assert tf.saturate_cast([-300.0, 300.0, 5.5], tf.uint8).numpy().tolist() == [0, 255, 5]
    assert tf.dtypes.saturate_cast(tf.constant([70000], tf.int32), tf.int16).numpy().tolist() == [32767]
    # TF's documented example
    assert tf.sequence_mask([1, 3, 2], 5).numpy().tolist() == [
        [True, False, False, False, False], [True, True, True, False, False], [True, True, False, False, False]]
    assert tf.sequence_mask([[1, 3], [2, 0]]).numpy().astype(int).tolist() == [[[1, 0, 0], [1, 1, 1]],
                                                                              [[1, 1, 0], [0, 0, 0]]]
    assert tf.sequence_mask([2], 3, dtype=tf.float32).numpy().tolist() == [[1.0, 1.0, 0.0]]


def test_unravel_index_as_tfs_documented_example():
    assert tf.unravel_index([22, 41, 37], (7, 6)).numpy().tolist() == [[3, 6, 6], [4, 5, 1]]
    assert tf.unravel_index(1621, (6, 7, 8, 9)).numpy().tolist() == [3, 1, 4, 1]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.unravel_index([42], (7, 6))


def test_dynamic_partition_and_stitch_as_tfs_documented_examples():
    parts = tf.dynamic_partition([10, 20, 30, 40, 50], [0, 0, 1, 1, 0], 2)
    assert [p.numpy().tolist() for p in parts] == [[10, 20, 50], [30, 40]]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.dynamic_partition([1, 2], [0, 3], 2)
    indices = [[6], [4, 1], [[5, 2], [0, 3]]]
    data = [[[61.0, 62.0]], [[41.0, 42.0], [11.0, 12.0]], [[[51.0, 52.0], [21.0, 22.0]], [[1.0, 2.0], [31.0, 32.0]]]]
    merged = tf.dynamic_stitch(indices, data)
    assert merged.numpy().tolist() == [[1, 2], [11, 12], [21, 22], [31, 32], [41, 42], [51, 52], [61, 62]]
    assert tf.dynamic_stitch([[0, 1], [1]], [[1.0, 2.0], [9.0]]).numpy().tolist() == [1.0, 9.0]  # later wins
    x = tf.constant([1.0, 2.0, 3.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.dynamic_stitch([[2, 0, 1]], [x]) * tf.constant([1.0, 10.0, 100.0]))
    assert tape.gradient(y, x).numpy().tolist() == [100.0, 1.0, 10.0]


def test_reverse_sequence_as_tfs_documented_example():
    x = tf.reshape(tf.range(12), [3, 4])
    assert tf.reverse_sequence(x, [4, 2, 0], seq_axis=1, batch_axis=0).numpy().tolist() == [
        [3, 2, 1, 0], [5, 4, 6, 7], [8, 9, 10, 11]]
    y = tf.transpose(x)  # batch on axis 1
    assert tf.reverse_sequence(y, [1, 3, 2], seq_axis=0, batch_axis=1).numpy().T.tolist() == [
        [0, 1, 2, 3], [6, 5, 4, 7], [9, 8, 10, 11]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(1\) > input.dims\(1\)"):
        tf.reverse_sequence(x, [4, 5, 0], seq_axis=1, batch_axis=0)  # TF names the first entry too long


def test_space_to_batch_paddings():
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [0, 0]])
    assert paddings.numpy().tolist() == [[1, 0], [0, 2]] and crops.numpy().tolist() == [[0, 0], [0, 2]]
    assert tf.space_to_batch_nd is tf.space_to_batch


def test_switch_case_and_case_eager_and_traced():
    fns = [lambda: tf.constant(10), lambda: tf.constant(20), lambda: tf.constant(30)]
    assert tf.switch_case(tf.constant(1), fns).numpy() == 20
    assert tf.switch_case(7, fns).numpy() == 30  # out of range: the last branch, when no default

    @tf.function
    def f(i):
        return tf.switch_case(i, {0: fns[0], 1: fns[1]}, default=lambda: tf.constant(-1))
    assert [f(tf.constant(k)).numpy() for k in (0, 1, 5)] == [10, 20, -1]
    pairs = [(tf.constant(False), lambda: tf.constant(1)), (tf.constant(True), lambda: tf.constant(2))]
    assert tf.case(pairs, default=lambda: tf.constant(3)).numpy() == 2

    @tf.function
    def g(x):
        return tf.case([(x < 0, lambda: tf.constant(-1)), (x > 0, lambda: tf.constant(1))],
                       default=lambda: tf.constant(0))
    assert [g(tf.constant(v)).numpy() for v in (-5.0, 0.0, 2.0)] == [-1, 0, 1]
    with pytest.raises(tf.errors.InvalidArgumentError, match="exclusive"):
        tf.case([(tf.constant(True), lambda: 1), (tf.constant(True), lambda: 2)], default=lambda: 0, exclusive=True)


def test_graph_helpers_in_eager_and_traced_code():
    assert tf.no_op() is None and tf.group(tf.constant(1)) is None
    a, none = tf.tuple([tf.constant(1.0), None])
    assert a.numpy() == 1.0 and none is None
    calls = []
    with tf.control_dependencies([lambda: calls.append(1)]):
        pass
    assert calls == [1]

    @tf.function
    def f(x):
        assert tf.inside_function() and tf.is_symbolic_tensor(x)
        assert tf.get_static_value(x) is None
        with tf.control_dependencies([tf.debugging.assert_positive(x)]):
            return tf.identity(x)
    assert f(tf.constant(2.0)).numpy() == 2.0
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.constant(-2.0))
    assert not tf.inside_function() and not tf.is_symbolic_tensor(tf.constant(1))
    assert tf.get_static_value(tf.constant([1, 2])).tolist() == [1, 2]
    with tf.name_scope("outer"):
        with tf.name_scope("inner"):
            assert tf.get_current_name_scope() == "outer/inner"
    assert tf.get_current_name_scope() == ""


def test_small_top_level_helpers():
    assert [s.numpy().tolist() for s in tf.shape_n([tf.zeros([2, 3]), tf.zeros([4])])] == [[2, 3], [4]]
    assert tf.parallel_stack([tf.constant([1, 2]), tf.constant([3, 4])]).numpy().tolist() == [[1, 2], [3, 4]]
    assert tf.guarantee_const(tf.constant(5)).numpy() == 5
    import time
    assert abs(tf.timestamp().numpy() - time.time()) < 60 and tf.timestamp().dtype == tf.float64
    got = tf.numpy_function(lambda a: (a * 2).astype(np.float32), [tf.constant([1.0, 2.0])], tf.float32)
    assert got.numpy().tolist() == [2.0, 4.0]
    assert tf.as_string is tf.strings.as_string and tf.eig is tf.linalg.eig and tf.assert_equal


# ---- tf.saved_model, tf.io, tf.config, tf.autograph -------------------------------------------------------

def test_saved_model_names_and_contains(tmp_path):
    assert (tf.saved_model.SERVING, tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY) == ("serve", "serving_default")
    assert tf.saved_model.PREDICT_METHOD_NAME == "tensorflow/serving/predict"
    assert not tf.saved_model.contains_saved_model(str(tmp_path))
    module = tf.Module()
    module.v = tf.Variable(1.0)
    tf.saved_model.save(module, str(tmp_path / "m"))
    assert tf.saved_model.contains_saved_model(str(tmp_path / "m"))


def test_gfile_additions(tmp_path):
    src, dst = str(tmp_path / "a.txt"), str(tmp_path / "b.txt")
    tf.io.write_file(src, "hello")
    tf.io.gfile.copy(src, dst)
    with pytest.raises(tf.errors.AlreadyExistsError):
        tf.io.gfile.copy(src, dst)
    tf.io.gfile.copy("file://" + src, dst, overwrite=True)
    stat = tf.io.gfile.stat(dst)
    assert stat.length == 5 and not stat.is_directory and tf.io.gfile.stat(str(tmp_path)).is_directory
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.gfile.stat(str(tmp_path / "none"))
    assert tf.io.gfile.join(str(tmp_path), "x") == os.path.join(str(tmp_path), "x")
    walked = list(tf.io.gfile.walk(str(tmp_path)))
    assert walked[0][0] == str(tmp_path) and sorted(walked[0][2]) == ["a.txt", "b.txt"]
    png = tf.io.encode_png(tf.reshape(tf.range(12, dtype=tf.uint8), [2, 2, 3]))  # tf.io has tf.image's codecs
    assert tf.io.decode_png(png).numpy().ravel().tolist() == list(range(12)) and tf.io.is_jpeg(png).numpy() == False


def test_config_and_autograph_aliases(capsys):
    assert tf.config.experimental_run_functions_eagerly is tf.config.run_functions_eagerly
    assert tf.config.experimental_functions_run_eagerly() is False
    tf.autograph.set_verbosity(3)
    tf.autograph.trace("traced", 1)
    assert capsys.readouterr().out == "traced 1\n"


# ---- scan and folds ------------------------------------------------------------------------------------------

def test_scan_as_tfs_documented_examples():
    elems = tf.constant([1, 2, 3, 4, 5, 6])
    assert tf.scan(lambda a, x: a + x, elems).numpy().tolist() == [1, 3, 6, 10, 15, 21]
    assert tf.scan(lambda a, x: a + x, elems, reverse=True).numpy().tolist() == [21, 20, 18, 15, 11, 6]
    fib = tf.scan(lambda a, _: (a[1], a[0] + a[1]), elems, initializer=(tf.constant(0), tf.constant(1)))
    assert [f.numpy().tolist() for f in fib] == [[1, 1, 2, 3, 5, 8], [1, 2, 3, 5, 8, 13]]


def test_folds_as_tfs_documented_examples():
    elems = tf.constant([1, 2, 3, 4, 5, 6])
    assert tf.foldl(lambda a, x: a + x, elems).numpy() == 21
    assert tf.foldr(lambda a, x: a + x, elems).numpy() == 21
    assert tf.foldr(lambda a, x: a - x, tf.constant([1.0, 2.0, 3.0]), initializer=tf.constant(10.0)).numpy() == 4.0
    assert tf.foldl(lambda a, x: a - x, tf.constant([1.0, 2.0, 3.0]), initializer=tf.constant(10.0)).numpy() == 4.0


@pytest.mark.parametrize("signature", [[3], [None]])  # static length (unrolled) and dynamic (a while_loop)
def test_scan_and_folds_in_functions(signature):
    @tf.function(input_signature=[tf.TensorSpec(signature, tf.float32)])
    def f(x):
        return (tf.scan(lambda a, v: a * 0.5 + v, x, initializer=tf.constant(0.0)),
                tf.scan(lambda a, v: a + v, x, reverse=True),
                tf.foldl(lambda a, v: a + v * v, x),
                tf.foldr(lambda a, v: a * 2.0 + v, x, initializer=tf.constant(0.0)))
    s, r, fl, fr = f(tf.constant([1.0, 2.0, 3.0]))
    assert s.numpy().tolist() == [1.0, 2.5, 4.25] and r.numpy().tolist() == [6.0, 5.0, 3.0]
    assert fl.numpy() == 14.0 and fr.numpy() == 17.0


def test_scan_gradient():
    check_gradients(lambda x: tf.reduce_sum(tf.scan(lambda a, v: a * v, x)),
                    [tf.constant([1.5, 2.0, -3.0], tf.float64)])


# ---- linalg, signal, image, sparse, data ---------------------------------------------------------------------

def test_tensor_diag_and_part():
    d = np.array([[1.0, 2.0], [3.0, 4.0]])
    full = tf.linalg.tensor_diag(d).numpy()
    expected = np.zeros((2, 2, 2, 2))
    for i, j in np.ndindex(2, 2):
        expected[i, j, i, j] = d[i, j]
    np.testing.assert_array_equal(full, expected)
    np.testing.assert_array_equal(tf.linalg.tensor_diag_part(full).numpy(), d)
    with pytest.raises(ValueError):
        tf.linalg.tensor_diag_part(np.zeros((2, 3)))


def test_matrix_rank_against_numpy():
    rng = np.random.default_rng(0)
    mats = [rng.normal(size=(4, 3)) @ rng.normal(size=(3, 5)), np.eye(4, 5), np.zeros((4, 5))]
    assert tf.linalg.matrix_rank(np.stack(mats)).numpy().tolist() == [np.linalg.matrix_rank(m) for m in mats]


def _tridiagonal(m, seed):
    rng = np.random.default_rng(seed)
    sup, main, sub = rng.normal(size=(3, m))
    main = main + 4
    return sup, main, sub, np.diag(main) + np.diag(sup[:-1], 1) + np.diag(sub[1:], -1)


def test_tridiagonal_matmul_and_solve_against_numpy():
    sup, main, sub, a = _tridiagonal(5, 1)
    rhs = np.random.default_rng(2).normal(size=(5, 2))
    compact = np.stack([sup, main, sub])
    np.testing.assert_allclose(tf.linalg.tridiagonal_matmul(compact, rhs).numpy(), a @ rhs, rtol=1e-12)
    np.testing.assert_allclose(tf.linalg.tridiagonal_solve(compact, rhs).numpy(), np.linalg.solve(a, rhs), rtol=1e-10)
    np.testing.assert_allclose(
        tf.linalg.tridiagonal_solve((sup, main, sub), rhs[:, 0], diagonals_format="sequence").numpy(),
        np.linalg.solve(a, rhs[:, 0]), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.tridiagonal_solve(compact, rhs.T, transpose_rhs=True).numpy(),
                               np.linalg.solve(a, rhs).T, rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.tridiagonal_solve(a, rhs, diagonals_format="matrix").numpy(),
                               np.linalg.solve(a, rhs), rtol=1e-10)


def test_tridiagonal_solve_gradient():
    sup, main, sub, _ = _tridiagonal(4, 3)
    rhs = tf.constant(np.random.default_rng(4).normal(size=(4, 1)))
    check_gradients(lambda d, b: tf.reduce_sum(tf.linalg.tridiagonal_solve(d, b) ** 2),
                    [tf.constant(np.stack([sup, main, sub])), rhs], rtol=1e-5)


def test_windows_against_numpy():
    np.testing.assert_allclose(tf.signal.kaiser_window(9, 3.0).numpy(), np.kaiser(9, 3.0), rtol=1e-6)
    assert tf.signal.kaiser_window(1).numpy().tolist() == [1.0]
    n = np.arange(8)
    np.testing.assert_allclose(tf.signal.vorbis_window(8, dtype=tf.float64).numpy(),
                               np.sin(np.pi / 2 * np.sin(np.pi * (n + 0.5) / 8) ** 2), rtol=1e-12)
    kbd = tf.signal.kaiser_bessel_derived_window(8, 4.0, dtype=tf.float64).numpy()
    np.testing.assert_allclose(kbd[:4] ** 2 + kbd[4:] ** 2, np.ones(4), rtol=1e-12)  # Princen-Bradley
    np.testing.assert_allclose(kbd, kbd[::-1])


def test_yiq_conversions():
    rgb = np.random.default_rng(5).uniform(size=(2, 3, 3)).astype(np.float32)
    yiq = tf.image.rgb_to_yiq(rgb).numpy()
    np.testing.assert_allclose(yiq[..., 0], rgb @ np.array([0.299, 0.587, 0.114]), rtol=1e-5)
    np.testing.assert_allclose(tf.image.yiq_to_rgb(yiq).numpy(), rgb, atol=2e-4)


def _dense(sp):
    return tf.sparse.to_dense(sp).numpy().tolist()


def test_sparse_additions_as_tfs_documented_examples():
    assert _dense(tf.sparse.eye(2, 3)) == [[1, 0, 0], [0, 1, 0]]
    c = tf.constant([[1, 2, 3, 4], [-1, -2, -3, -4], [5, 6, 7, 8]])
    assert tf.sparse.segment_sum(c, tf.constant([0, 1]), tf.constant([0, 0])).numpy().tolist() == [[0, 0, 0, 0]]
    assert tf.sparse.segment_sum(c, [0, 1, 2], [0, 0, 1]).numpy().tolist() == [[0, 0, 0, 0], [5, 6, 7, 8]]
    assert tf.sparse.segment_sum(c, [0, 1], [0, 2], num_segments=4).numpy().tolist() == [
        [1, 2, 3, 4], [0, 0, 0, 0], [-1, -2, -3, -4], [0, 0, 0, 0]]
    f = tf.cast(c, tf.float32)
    assert tf.sparse.segment_mean(f, [0, 2], [0, 0]).numpy().tolist() == [[3.0, 4.0, 5.0, 6.0]]
    np.testing.assert_allclose(tf.sparse.segment_sqrt_n(f, [0, 2], [0, 0]).numpy(),
                               [[6 / np.sqrt(2), 8 / np.sqrt(2), 10 / np.sqrt(2), 12 / np.sqrt(2)]])
    result = tf.sparse.maximum(tf.sparse.SparseTensor([[0]], [0], [7]), tf.sparse.SparseTensor([[1]], [1], [7]))
    assert result.indices.numpy().tolist() == [[0], [1]] and result.values.numpy().tolist() == [0, 1]
    low = tf.sparse.minimum(tf.sparse.SparseTensor([[0], [2]], [3.0, -1.0], [4]),
                            tf.sparse.SparseTensor([[2]], [5.0], [4]))
    assert low.values.numpy().tolist() == [0.0, -1.0]  # an absent entry reads as 0


def test_sparse_softmax_split_reset_and_indicator():
    sp = tf.sparse.SparseTensor([[0, 0], [0, 2], [1, 1]], [1.0, 2.0, 3.0], [2, 3])
    np.testing.assert_allclose(tf.sparse.softmax(sp).values.numpy(),
                               [1 / (1 + np.e), np.e / (1 + np.e), 1.0], rtol=1e-6)
    pieces = tf.sparse.split(sp_input=sp, num_split=2, axis=1)
    assert [_dense(p) for p in pieces] == [[[1.0, 0.0], [0.0, 3.0]], [[2.0], [0.0]]]
    assert tf.sparse.reset_shape(sp).dense_shape.numpy().tolist() == [2, 3]
    assert tf.sparse.reset_shape(sp, [3, 4]).dense_shape.numpy().tolist() == [3, 4]
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.sparse.reset_shape(sp, [1, 4])
    ids = tf.sparse.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 3, 2], tf.int64), [2, 2])
    assert tf.sparse.to_indicator(ids, 4).numpy().tolist() == [[False, True, False, True],
                                                                [False, False, True, False]]


def test_data_experimental_transformations():
    ds = tf.data.Dataset.range(10)
    assert list(ds.apply(tf.data.experimental.take_while(lambda x: x < 3)).as_numpy_iterator()) == [0, 1, 2]
    rows = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4]]).apply(tf.data.experimental.unbatch())
    assert list(rows.as_numpy_iterator()) == [1, 2, 3, 4]
    batches = ds.apply(tf.data.experimental.map_and_batch(lambda x: x * 2, 4)).as_numpy_iterator()
    assert [b.tolist() for b in batches] == [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
    assert sorted(ds.apply(tf.data.experimental.shuffle_and_repeat(5, 2, seed=1)).as_numpy_iterator()) == \
        sorted(list(range(10)) * 2)
    assert tf.data.experimental.at(ds, 4).numpy() == 4
    with pytest.raises(tf.errors.OutOfRangeError):
        tf.data.experimental.at(ds, 20)
    assert list(tf.data.experimental.from_list([(1, "a"), (2, "b")]).as_numpy_iterator()) == [(1, b"a"), (2, b"b")]
    assert tf.data.experimental.get_structure(ds) == tf.TensorSpec([], tf.int64)
    woven = ds.take(4).apply(tf.data.experimental.parallel_interleave(lambda x: tf.data.Dataset.range(x), 2))
    assert list(woven.as_numpy_iterator()) == [0, 0, 1, 0, 1, 2]


# ---- boxes, JPEG helpers, and the rest ------------------------------------------------------------------------

# TF's non_max_suppression tests: three clusters of boxes.
CLUSTER_BOXES = [[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11], [0, 10.1, 1, 11.1],
                 [0, 100, 1, 101]]
CLUSTER_SCORES = [0.9, 0.75, 0.6, 0.95, 0.5, 0.3]


def test_non_max_suppression_as_tfs_tests():
    assert tf.image.non_max_suppression(CLUSTER_BOXES, CLUSTER_SCORES, 3, 0.5).numpy().tolist() == [3, 0, 5]
    assert tf.image.non_max_suppression(CLUSTER_BOXES, CLUSTER_SCORES, 3, 0.5, score_threshold=0.4).numpy().tolist() \
        == [3, 0]
    flipped = [[1, 1, 0, 0], [0, 0.1, 1, 1.1], [0, 0.9, 1, -0.1], [0, 10, 1, 11], [1, 10.1, 0, 11.1], [1, 101, 0, 100]]
    assert tf.image.non_max_suppression(flipped, CLUSTER_SCORES, 3, 0.5).numpy().tolist() == [3, 0, 5]
    selected, scores = tf.image.non_max_suppression_with_scores(CLUSTER_BOXES, CLUSTER_SCORES, 6, 1.0,
                                                                soft_nms_sigma=0.5)
    assert selected.numpy().tolist() == [3, 0, 1, 5, 4, 2]
    np.testing.assert_allclose(scores.numpy(), [0.95, 0.9, 0.384, 0.3, 0.256, 0.197], atol=1e-3)
    indices, valid = tf.image.non_max_suppression_padded(CLUSTER_BOXES, CLUSTER_SCORES, 5, 0.5,
                                                         pad_to_max_output_size=True)
    assert indices.numpy().tolist() == [3, 0, 5, 0, 0] and valid.numpy() == 3
    overlaps = [[1.0, 0.9, 0.0], [0.9, 1.0, 0.0], [0.0, 0.0, 1.0]]
    assert tf.image.non_max_suppression_overlaps(overlaps, [0.5, 0.9, 0.1], 3, 0.5).numpy().tolist() == [1, 2]

    @tf.function
    def f(b, s):
        return tf.image.non_max_suppression(b, s, 3, 0.5)
    assert f(tf.constant(CLUSTER_BOXES), tf.constant(CLUSTER_SCORES)).numpy().tolist() == [3, 0, 5]


def test_combined_non_max_suppression():
    boxes = tf.constant([[[[0, 0, 1, 1]], [[0, 0.1, 1, 1.1]], [[0, 5, 1, 6]]]], tf.float32)
    scores = tf.constant([[[0.9, 0.1], [0.8, 0.7], [0.2, 0.85]]])
    nb, ns, nc, valid = tf.image.combined_non_max_suppression(boxes, scores, 2, 4, 0.5, clip_boxes=False)
    np.testing.assert_allclose(ns.numpy(), [[0.9, 0.85, 0.7, 0.2]])
    assert nc.numpy().tolist() == [[0, 1, 1, 0]] and valid.numpy().tolist() == [4]
    np.testing.assert_allclose(nb.numpy()[0, 1], [0, 5, 1, 6])


def test_crop_and_resize_samples_as_tf_does():
    image = np.arange(2 * 4 * 5, dtype=np.float32).reshape(2, 4, 5, 1)
    crops = tf.image.crop_and_resize(image, [[0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75], [0, 0, 2, 2]], [0, 1, 0],
                                     [3, 3], extrapolation_value=-1.0).numpy()[..., 0]
    # y = y1 (h-1) + i (y2 - y1)(h-1)/(crop_h-1); bilinear between pixels; outside: extrapolation_value
    np.testing.assert_allclose(crops[0], [[0, 2, 4], [7.5, 9.5, 11.5], [15, 17, 19]])
    np.testing.assert_allclose(crops[1], 20 + np.array([[4.75, 5.75, 6.75], [8.5, 9.5, 10.5], [12.25, 13.25, 14.25]]))
    np.testing.assert_allclose(crops[2], [[0, 4, -1], [15, 19, -1], [-1, -1, -1]])
    nearest = tf.image.crop_and_resize(image, [[0, 0, 1, 1]], [0], [2, 2], method="nearest").numpy()[0, ..., 0]
    assert nearest.tolist() == [[0, 4], [15, 19]]
    halves = tf.image.crop_and_resize(image, [[0, 0.125, 0, 0.625]], [0], [1, 2], method="nearest")
    assert halves.numpy()[0, ..., 0].tolist() == [[1, 3]]  # x = 0.5, 2.5 round up (TF's roundf), not to even
    x = tf.constant(image)
    with tf.GradientTape() as tape:
        tape.watch(x)
        total = tf.reduce_sum(tf.image.crop_and_resize(x, [[0, 0, 1, 1]], [1], [4, 5]))
    grad = tape.gradient(total, x).numpy()
    assert grad[0].sum() == 0 and np.allclose(grad[1], 1.0)  # the box covers image 1's pixels exactly


def test_draw_bounding_boxes_and_jpeg_helpers():
    two = tf.image.draw_bounding_boxes(tf.zeros([1, 5, 5, 3]), [[[0, 0, 1, 1], [0.25, 0.25, 0.75, 0.75]]], None)
    assert two.numpy()[0, 0, 0].tolist() == [1, 1, 0] and two.numpy()[0, 1, 1].tolist() == [0, 0, 1]  # TF's table
    with pytest.raises(tf.errors.InvalidArgumentError, match="colors must have equal or more channels"):
        tf.image.draw_bounding_boxes(tf.zeros([1, 5, 5, 3]), [[[0, 0, 1, 0.5]]], [[1.0, 0.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Channel depth should be either 1"):
        tf.image.draw_bounding_boxes(tf.zeros([1, 5, 5, 2]), [[[0, 0, 1, 0.5]]], [[1.0, 0.0]])
    drawn = tf.image.draw_bounding_boxes(tf.zeros([1, 5, 5, 3]), [[[0, 0, 1, 0.5]]], [[1.0, 0.0, 0.0]]).numpy()
    assert drawn[0, ..., 0].tolist() == [[1, 1, 1, 0, 0], [1, 0, 1, 0, 0], [1, 0, 1, 0, 0], [1, 0, 1, 0, 0],
                                         [1, 1, 1, 0, 0]]
    assert not drawn[..., 1:].any()
    pixels = tf.cast(tf.reshape(tf.range(7 * 9 * 3) % 200, [7, 9, 3]), tf.uint8)
    jpeg = tf.image.encode_jpeg(pixels, quality=100)
    assert tf.image.extract_jpeg_shape(jpeg).numpy().tolist() == [7, 9, 3]
    assert tf.io.extract_jpeg_shape(jpeg, output_type=tf.int64).dtype == tf.int64
    cropped = tf.io.decode_and_crop_jpeg(jpeg, [1, 2, 3, 4])
    np.testing.assert_array_equal(cropped.numpy(), tf.image.decode_jpeg(jpeg).numpy()[1:4, 2:6])
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.decode_and_crop_jpeg(jpeg, [5, 5, 5, 5])


def test_batch_to_space_inverts_space_to_batch():
    x = np.arange(1, 5, dtype=np.float32).reshape(4, 1, 1, 1)  # TF's documented example
    assert tf.batch_to_space(x, [2, 2], [[0, 0], [0, 0]]).numpy()[..., 0].tolist() == [[[1, 2], [3, 4]]]
    image = np.arange(2 * 4 * 6 * 3, dtype=np.float32).reshape(2, 4, 6, 3)
    for paddings in ([[0, 0], [0, 0]], [[1, 1], [0, 3]]):
        batched = tf.space_to_batch(image, [2, 3], paddings)
        np.testing.assert_array_equal(tf.batch_to_space(batched, [2, 3], paddings).numpy(), image)


def test_edit_distance_as_tfs_documented_example():
    hypothesis = tf.SparseTensor([[0, 0, 0], [1, 0, 0]], ["a", "b"], (2, 1, 1))
    truth = tf.SparseTensor([[0, 1, 0], [1, 0, 0], [1, 0, 1], [1, 1, 0]], ["a", "b", "c", "a"], (2, 2, 2))
    assert tf.edit_distance(hypothesis, truth).numpy().tolist() == [[np.inf, 1.0], [0.5, 1.0]]
    assert tf.edit_distance(hypothesis, truth, normalize=False).numpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    kitten = tf.SparseTensor([[0, i] for i in range(6)], list("kitten"), (1, 6))
    sitting = tf.SparseTensor([[0, i] for i in range(7)], list("sitting"), (1, 7))
    assert tf.edit_distance(kitten, sitting, normalize=False).numpy().tolist() == [3.0]


def test_strings_ragged_math_io_additions(tmp_path):
    joined = tf.strings.unsorted_segment_join(["this", "is", "a", "test"], [0, 0, 1, 0], 3, separator=":")
    assert joined.numpy().tolist() == [b"this:is:test", b"a", b""]
    grid = tf.strings.unsorted_segment_join([["Y", "q", "c"], ["Y", "6", "6"], ["p", "G", "a"]], [1, 0, 1], 2)
    assert grid.numpy().tolist() == [[b"Y", b"6", b"6"], [b"Yp", b"qG", b"ca"]]
    stacked = tf.ragged.stack_dynamic_partitions(["a", "b", "c", "d", "e"], [3, 0, 2, 2, 3], 5)
    assert stacked.to_list() == [[b"b"], [], [b"c", b"d"], [b"a", b"e"], []]
    assert tf.math.accumulate_n([tf.constant([1, 2]), tf.constant([3, 4])]).numpy().tolist() == [4, 6]
    with pytest.raises(ValueError):
        tf.math.accumulate_n([tf.constant([1]), tf.constant([1, 2])])
    for name in ("b.txt", "a.txt", "c.bin"):
        tf.io.write_file(str(tmp_path / name), "x")
    found = tf.io.matching_files(str(tmp_path / "*.txt")).numpy().tolist()
    assert found == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.matching_files(str(tmp_path / "*.none"))
    once = tf.io.match_filenames_once(str(tmp_path / "*.txt"))
    assert not once.trainable and once.numpy().tolist() == found


def test_exponential_moving_average():
    v = tf.Variable([1.0, 2.0])
    ema = tf.train.ExponentialMovingAverage(0.9)
    ema.apply([v])
    assert ema.average(v).numpy().tolist() == [1.0, 2.0] and ema.average_name(v) == "Variable/ExponentialMovingAverage"
    v.assign([3.0, 4.0])
    ema.apply([v])
    np.testing.assert_allclose(ema.average(v).numpy(), [1.2, 2.2])  # shadow -= (1 - 0.9)(shadow - var)
    step, w = tf.Variable(0), tf.Variable(0.0)
    counted = tf.train.ExponentialMovingAverage(0.99, num_updates=step)
    counted.apply([w])
    w.assign(10.0)
    counted.apply([w])  # decay min(0.99, (1 + 0) / (10 + 0)) = 0.1
    np.testing.assert_allclose(counted.average(w).numpy(), 9.0)
    assert ema.average(w) is None


def test_checkpoints_iterator(tmp_path):
    checkpoint = tf.train.Checkpoint(v=tf.Variable(1.0))
    checkpoint.save(str(tmp_path / "ckpt"))
    seen = [os.path.basename(p) for p in tf.train.checkpoints_iterator(str(tmp_path), timeout=0.2)]
    assert seen == ["ckpt-1"]


def test_assert_shapes_static_and_at_run_time():
    x, y, z = tf.zeros([2, 3]), tf.zeros([3]), tf.zeros([4, 2, 3])
    tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("Q",)), (z, ("...", "N", "Q")), (tf.constant(1.0), [])])
    tf.debugging.assert_shapes([(x, (2, ".")), (z, ("...", 3))])
    with pytest.raises(ValueError, match="must have size 2"):
        tf.debugging.assert_shapes([(x, ("N", "Q")), (y, ("N",))])
    with pytest.raises(ValueError, match="rank"):
        tf.debugging.assert_shapes([(x, ("N",))])

    @tf.function(input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None])])
    def f(a, b):
        tf.debugging.assert_shapes([(a, ("N", 3)), (b, ("N",))])
        return a
    assert f(tf.zeros([2, 3]), tf.zeros([2])).shape == (2, 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must match N"):
        f(tf.zeros([2, 3]), tf.zeros([5]))


def test_expm1_keeps_float32_accuracy_and_its_gradient():
    x = np.array([-100.0, -20.0, -1.0, -1e-3, -1e-8, 0.0, 1e-10, 1e-5, 0.3, 1.0, 10.0, 88.0], np.float32)
    np.testing.assert_allclose(tf.math.expm1(x).numpy(), np.expm1(x.astype(np.float64)), rtol=2e-7, atol=0)
    samples = np.random.default_rng(0).uniform(-5, 5, 2000).astype(np.float32)
    np.testing.assert_allclose(tf.math.expm1(samples).numpy(), np.expm1(samples.astype(np.float64)), rtol=2e-7)
    assert tf.math.expm1(np.float32(89.0)).numpy() == np.inf  # past float32's range, as TF's
    check_gradients(lambda v: tf.reduce_sum(tf.math.expm1(v)), [tf.constant([-2.0, 1e-7, 0.5, 3.0], tf.float64)])

    @tf.function
    def f(v):
        return tf.math.expm1(v)
    np.testing.assert_allclose(f(tf.constant([1e-7, 2.0])).numpy(), np.expm1([1e-7, 2.0]), rtol=2e-7)


def test_nextafter():
    got = tf.math.nextafter(tf.constant([1.0, 1.0, 0.0]), [2.0, 0.0, 1.0]).numpy()
    np.testing.assert_array_equal(got, np.nextafter(np.float32([1, 1, 0]), np.float32([2, 0, 1])))
    assert tf.math.nextafter(tf.constant(1.0, tf.float64), 2.0).numpy() == 1 + 2.0 ** -52


def test_tensor_protos():
    proto = tf.make_tensor_proto([[1.0, 2.0], [3.0, 4.0]])
    assert proto.dtype == 1 and [d.size for d in proto.tensor_shape.dim] == [2, 2] and len(proto.tensor_content) == 16
    assert tf.make_ndarray(proto).tolist() == [[1.0, 2.0], [3.0, 4.0]]
    filled = tf.make_tensor_proto(7, shape=[2, 3])
    assert list(filled.int_val) == [7] and tf.make_ndarray(filled).tolist() == [[7] * 3] * 2  # TF writes it once
    assert tf.make_ndarray(tf.make_tensor_proto(["a", b"b"])).tolist() == [b"a", b"b"]
    assert tf.make_ndarray(tf.make_tensor_proto(np.float16(1.5))) == np.float16(1.5)
    assert tf.make_tensor_proto(1.0, dtype=tf.float64).dtype == 2
    assert tf.io.parse_tensor(proto.SerializeToString(), tf.float32).numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError):
        tf.make_tensor_proto([1, 2, 3], shape=[2], verify_shape=True)


def test_banded_triangular_solve_in_tfs_layout():
    rng = np.random.default_rng(0)
    m, k = 5, 3
    lower_bands = rng.normal(size=(k, m))
    lower_bands[0] += 4
    lower = np.zeros((m, m))
    for band in range(k):
        for i in range(band, m):
            lower[i, i - band] = lower_bands[band, i]  # row band: the band-th subdiagonal, padded on the left
    upper_bands = rng.normal(size=(k, m))
    upper_bands[k - 1] += 4
    upper = np.zeros((m, m))
    for band in range(k):
        for i in range(m - band):
            upper[i, i + band] = upper_bands[k - 1 - band, i]  # the diagonal last, superdiagonals padded right
    rhs = rng.normal(size=(m, 2))
    np.testing.assert_allclose(tf.linalg.banded_triangular_solve(lower_bands, rhs).numpy(),
                               np.linalg.solve(lower, rhs), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.banded_triangular_solve(upper_bands, rhs, lower=False).numpy(),
                               np.linalg.solve(upper, rhs), rtol=1e-10)
    np.testing.assert_allclose(tf.linalg.banded_triangular_solve(upper_bands, rhs, lower=False, adjoint=True).numpy(),
                               np.linalg.solve(upper.T, rhs), rtol=1e-10)


def test_eigh_tridiagonal_against_numpy():
    rng = np.random.default_rng(1)
    alpha, beta = rng.normal(size=6), rng.normal(size=5)
    dense = np.diag(alpha) + np.diag(beta, 1) + np.diag(beta, -1)
    expected = np.linalg.eigvalsh(dense)
    np.testing.assert_allclose(tf.linalg.eigh_tridiagonal(alpha, beta).numpy(), expected, atol=1e-12)
    values, vectors = tf.linalg.eigh_tridiagonal(alpha, beta, eigvals_only=False)
    np.testing.assert_allclose(dense @ vectors.numpy(), vectors.numpy() * values.numpy(), atol=1e-12)
    np.testing.assert_allclose(tf.linalg.eigh_tridiagonal(alpha, beta, select="i", select_range=(1, 3)).numpy(),
                               expected[1:4], atol=1e-12)
    inside = tf.linalg.eigh_tridiagonal(alpha, beta, select="v", select_range=(-1.0, 1.0)).numpy()
    np.testing.assert_allclose(inside, expected[(expected > -1) & (expected <= 1)], atol=1e-12)


def test_inverse_trig_keeps_float32_accuracy():
    rng = np.random.default_rng(0)
    u = np.concatenate([rng.uniform(-1, 1, 5000), [-1, -0.9999999, -1e-20, 0, 1e-8, 0.5, 0.99999, 1]]).astype(
        np.float32)
    for name, ref in (("asin", np.arcsin), ("acos", np.arccos)):
        np.testing.assert_allclose(getattr(tf.math, name)(u).numpy(), ref(u.astype(np.float64)), rtol=2.5e-7,
                                   atol=1e-37)
    wide = np.concatenate([rng.uniform(-50, 50, 5000), [0, 1e-30, 1e30, np.inf, -np.inf]]).astype(np.float32)
    np.testing.assert_allclose(tf.atan(wide).numpy(), np.arctan(wide.astype(np.float64)), rtol=2e-7, atol=1e-37)
    assert np.isnan(tf.math.asin([1.5, -2.0]).numpy()).all() and np.isnan(tf.math.acos(1.0001).numpy())
    y = np.float32([0.0, -0.0, 1.0, -1.0, 0.0, -0.0, 2.0])
    x = np.float32([0.0, 0.0, 0.0, 0.0, -1.0, -1.0, -3.0])
    got = tf.math.atan2(y, x).numpy()
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=2e-7)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.arctan2(y, x)))  # signed zeros as TF's
    assert tf.atan(tf.constant([1.0], tf.float16)).dtype == tf.float16
    with pytest.raises(TypeError):
        tf.math.atan(tf.constant([1]))


@pytest.mark.parametrize("name,x", [("atan", [-3.0, 0.0, 0.4, 20.0]), ("asin", [-0.9, 0.0, 0.3]),
                                    ("acos", [-0.7, 0.0, 0.95])])
def test_inverse_trig_gradients(name, x):
    check_gradients(lambda v: tf.reduce_sum(getattr(tf.math, name)(v)), [tf.constant(x, tf.float64)])


def test_atan2_gradient():
    check_gradients(lambda y, x: tf.reduce_sum(tf.math.atan2(y, x)),
                    [tf.constant([1.0, -2.0, 0.5], tf.float64), tf.constant([-1.0, 3.0, 0.2], tf.float64)])


def test_lgamma_against_pythons_math():
    import math
    xs = np.concatenate([np.linspace(0.01, 30, 301), -np.linspace(0.01, 20.5, 205) + 1e-7, [1e5, 1e300, 0.5, 3.0]])
    np.testing.assert_allclose(tf.math.lgamma(xs).numpy(), [math.lgamma(v) for v in xs], rtol=1e-13, atol=1e-15)
    near = np.array([1 + 1e-10, 2 - 1e-9, 1.1, 1.95])  # near lgamma's zeros: its Taylor series (exact relatively)
    series = [sum(c * (v - 1) ** (k + 1) for k, c in enumerate(_lgamma_series())) for v in near[:1]]
    np.testing.assert_allclose(tf.math.lgamma(near[:1]).numpy(), series, rtol=1e-14)
    np.testing.assert_allclose(tf.math.lgamma(near).numpy(), [math.lgamma(v) for v in near], rtol=0, atol=1e-15)
    assert tf.math.lgamma([0.0, -1.0, -2.0, np.inf, -np.inf]).numpy().tolist() == [np.inf] * 5
    x32 = np.float32([0.1, 0.5, 1.5, 2.5, 7.3, 30.0, -0.5, -3.7, 1e4])
    got = tf.math.lgamma(x32)
    assert got.dtype == tf.float32
    np.testing.assert_allclose(got.numpy(), [math.lgamma(float(v)) for v in x32], rtol=1e-7)


def _lgamma_series():
    from kiln._gamma import _SERIES
    return _SERIES


def test_digamma_identities_and_lgammas_gradient():
    import math
    euler = 0.5772156649015329
    n = np.arange(1.0, 20.0)
    harmonic = np.array([sum(1 / k for k in range(1, int(m))) for m in n])
    np.testing.assert_allclose(tf.math.digamma(n).numpy(), -euler + harmonic, rtol=1e-14, atol=1e-15)
    assert tf.math.digamma(tf.constant(0.5, tf.float64)).numpy() == pytest.approx(-euler - 2 * math.log(2), abs=1e-15)
    x = np.array([-3.3, -0.7, 0.2, 1.7, 9.3, 12.6])
    np.testing.assert_allclose(tf.math.digamma(x + 1).numpy() - tf.math.digamma(x).numpy(), 1 / x, rtol=1e-12)
    np.testing.assert_allclose(tf.math.digamma(1 - x).numpy() - tf.math.digamma(x).numpy(), np.pi / np.tan(np.pi * x),
                               rtol=1e-11)
    check_gradients(lambda v: tf.reduce_sum(tf.math.lgamma(v)), [tf.constant([0.3, 2.5, -1.5, 7.0], tf.float64)])
    check_gradients(lambda v: tf.reduce_sum(tf.math.digamma(v)), [tf.constant([0.3, 2.5, 7.0], tf.float64)], rtol=1e-5)


def test_lbeta():
    import math
    got = tf.math.lbeta([[1.0, 2.0], [3.0, 4.0]]).numpy()
    np.testing.assert_allclose(got, [math.lgamma(1) + math.lgamma(2) - math.lgamma(3),
                                     math.lgamma(3) + math.lgamma(4) - math.lgamma(7)], rtol=1e-6)
    assert tf.math.lbeta(tf.zeros([2, 0])).numpy().tolist() == [-np.inf, -np.inf]


def _ssim_terms_reference(x, y, size, sigma, max_val=1.0, k1=0.01, k2=0.03):
    """TF's per-channel SSIM and contrast-structure terms of [h, w, c] images, in NumPy float64."""
    coords = np.arange(size) - (size - 1) / 2
    g = np.exp(-(coords[:, None] ** 2 + coords[None] ** 2) / (2 * sigma ** 2))
    g /= g.sum()

    def blur(t):
        h, w = t.shape[0] - size + 1, t.shape[1] - size + 1
        return np.stack([[np.tensordot(g, t[i:i + size, j:j + size], axes=([0, 1], [0, 1])) for j in range(w)]
                         for i in range(h)])
    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mx, my = blur(x), blur(y)
    luminance = (2 * mx * my + c1) / (mx ** 2 + my ** 2 + c1)
    cs = (2 * blur(x * y) - 2 * mx * my + c2) / (blur(x * x + y * y) - mx ** 2 - my ** 2 + c2)
    return (luminance * cs).mean(axis=(0, 1)), cs.mean(axis=(0, 1))


def test_ssim_multiscale_against_a_numpy_reference():
    rng = np.random.default_rng(0)
    a = rng.uniform(size=(12, 11, 2))
    b = np.clip(a + rng.normal(scale=0.1, size=a.shape), 0, 1)
    weights = (0.3, 0.7)
    _, cs0 = _ssim_terms_reference(a, b, 3, 1.5)
    pooled = []
    for img in (a, b):
        img = np.concatenate([img, img[:, -1:]], axis=1)  # width 11 is odd: the last column repeated
        pooled.append(img.reshape(6, 2, 6, 2, 2).mean(axis=(1, 3)))
    ssim1, _ = _ssim_terms_reference(pooled[0], pooled[1], 3, 1.5)
    expected = np.mean(np.maximum(cs0, 0) ** weights[0] * np.maximum(ssim1, 0) ** weights[1])
    got = tf.image.ssim_multiscale(a.astype(np.float32), b.astype(np.float32), 1.0, power_factors=weights,
                                   filter_size=3).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert tf.image.ssim_multiscale(a, a, 1.0, power_factors=weights, filter_size=3).numpy() == pytest.approx(1.0)
    np.testing.assert_allclose(tf.image.ssim_multiscale(a, b, 1.0, power_factors=(1.0,), filter_size=3).numpy(),
                               tf.image.ssim(a, b, 1.0, filter_size=3).numpy(), rtol=1e-5)


def test_vectorized_map_as_map_fn():
    assert tf.vectorized_map(lambda x: tf.reduce_sum(x) * 2, tf.constant([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist() \
        == [6.0, 14.0]
    total, first = tf.vectorized_map(lambda t: (t[0] + t[1], tf.cast(t[0], tf.int32)),
                                     (tf.constant([1.0, 2.0]), tf.constant([3.0, 4.0])))
    assert total.numpy().tolist() == [4.0, 6.0] and first.dtype == tf.int32

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def f(x):
        return tf.vectorized_map(lambda r: tf.cast(tf.reduce_max(r), tf.int64), x)
    result = f(tf.constant([[1.0, 5.0], [7.0, 2.0], [0.0, 0.0]]))
    assert result.dtype == tf.int64 and result.numpy().tolist() == [5, 7, 0]


def test_experimental_optional_is_tf_datas():
    assert tf.experimental.Optional is tf.data.experimental.Optional
    value = tf.experimental.Optional.from_value(tf.constant(3))
    assert bool(value.has_value()) and value.get_value().numpy() == 3


def test_compat_v1_thin_subset():
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.ERROR)
    assert tf.get_logger().getEffectiveLevel() == tf.compat.v1.logging.ERROR == tf.compat.v1.logging.get_verbosity()
    tf.compat.v1.logging.set_verbosity(tf.compat.v1.logging.WARN)
    tf.compat.v1.enable_eager_execution()
    tf.compat.v1.enable_v2_behavior()
    assert tf.compat.v1.executing_eagerly()
    tf.compat.v1.set_random_seed(5)
    a = tf.random.uniform([3])
    tf.random.set_seed(5)
    assert tf.random.uniform([3]).numpy().tolist() == a.numpy().tolist()
    with pytest.raises(AttributeError, match="tf.compat.v1.placeholder is not in Kiln"):
        tf.compat.v1.placeholder


def test_bitcast_as_numpys_view():
    assert tf.bitcast(tf.constant([1.0, 2.0]), tf.int32).numpy().tolist() == \
        np.float32([1, 2]).view(np.int32).tolist()
    assert tf.bitcast(tf.constant(0x01020304, tf.int32), tf.uint8).numpy().tolist() == [4, 3, 2, 1]  # little-endian
    assert tf.bitcast(tf.constant([[1, 2, 3, 4]], tf.uint8), tf.int32).numpy().tolist() == [0x04030201]
    assert tf.bitcast(tf.constant([1], tf.int64), tf.int32).shape == (1, 2)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.bitcast(tf.constant([1, 2, 3], tf.uint8), tf.int32)

    @tf.function
    def f(x):
        return tf.bitcast(x, tf.uint16)
    assert f(tf.constant([1.5])).numpy().tolist() == [np.float32([1.5]).view(np.uint16).tolist()]  # [[0, 16320]]


def test_sparse_serialization_round_trips():
    sp = tf.sparse.SparseTensor([[0, 0], [1, 2], [1, 3]], [1.0, 2.0, 3.0], [2, 5])
    whole = tf.io.serialize_sparse(sp)
    assert whole.shape == (3,) and tf.io.parse_tensor(whole[1], tf.float32).numpy().tolist() == [1.0, 2.0, 3.0]
    assert tf.io.parse_tensor(whole[0], tf.int64).numpy().tolist() == [[0, 0], [1, 2], [1, 3]]
    many = tf.io.serialize_many_sparse(sp)
    assert many.shape == (2, 3)
    assert tf.io.parse_tensor(many[1, 0], tf.int64).numpy().tolist() == [[2], [3]]  # row 1, its first index dropped
    back = tf.io.deserialize_many_sparse(many, tf.float32)
    assert back.indices.numpy().tolist() == [[0, 0], [1, 2], [1, 3]] and back.dense_shape.numpy().tolist() == [2, 5]

    @tf.function
    def g(x):
        return tf.sparse.to_dense(tf.io.deserialize_many_sparse(x, tf.float32, rank=2))
    assert g(many).numpy().tolist() == [[1, 0, 0, 0, 0], [0, 0, 2, 3, 0]]


def test_dct_type_four_against_its_definition():
    x = np.random.default_rng(0).normal(size=(3, 8))
    n = np.arange(8)
    expected = 2 * x @ np.cos(np.pi * np.outer(2 * n + 1, 2 * n + 1) / 32)
    np.testing.assert_allclose(tf.signal.dct(x, type=4).numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tf.signal.dct(x, type=4, norm="ortho").numpy(), expected * np.sqrt(1 / 16), atol=1e-12)
    np.testing.assert_allclose(tf.signal.idct(tf.signal.dct(x, type=4), type=4).numpy(), 16 * x, atol=1e-12)


def test_mdct_against_the_textbook_definition_and_its_inverse():
    x = np.random.default_rng(1).normal(size=32)
    length, half = 8, 4
    window = tf.signal.vorbis_window(length, dtype=tf.float64).numpy()
    frames = np.stack([x[i:i + length] for i in range(0, len(x) - length + 1, half)]) * window
    n, k = np.arange(length), np.arange(half)
    textbook = frames @ np.cos(np.pi / half * np.outer(n + 0.5 + half / 2, k + 0.5))
    np.testing.assert_allclose(tf.signal.mdct(x, length).numpy(), 2 * textbook, atol=1e-12)  # TF's: twice it
    for norm in (None, "ortho"):  # the Vorbis window is power-complementary: all but the end half frames return
        back = tf.signal.inverse_mdct(tf.signal.mdct(x, length, norm=norm), norm=norm).numpy()
        np.testing.assert_allclose(back[half:-half], x[half:len(back) - half], atol=1e-12)
    with pytest.raises(ValueError, match="multiple of 4"):
        tf.signal.mdct(x, 6)


def test_sql_and_random_datasets(tmp_path):
    import sqlite3
    path = str(tmp_path / "db.sqlite")
    connection = sqlite3.connect(path)
    connection.execute("create table t (name text, age int, score real)")
    connection.executemany("insert into t values (?, ?, ?)", [("ann", 30, 1.5), ("bob", 41, 2.5)])
    connection.commit()
    connection.close()
    rows = tf.data.experimental.SqlDataset("sqlite", path, "select name, age, score from t",
                                           (tf.string, tf.int32, tf.float64))
    assert list(rows.as_numpy_iterator()) == [(b"ann", 30, 1.5), (b"bob", 41, 2.5)]
    assert list(tf.data.experimental.SqlDataset("sqlite", path, "select age from t", tf.int64)
                .as_numpy_iterator()) == [30, 41]
    with pytest.raises(ValueError, match="not supported"):
        tf.data.experimental.SqlDataset("mysql", path, "select 1", tf.int64)
    draws = list(tf.data.experimental.RandomDataset(seed=3).take(3).as_numpy_iterator())
    assert draws == list(tf.data.Dataset.random(seed=3).take(3).as_numpy_iterator())


def test_experimental_async_scope_runs_synchronously():
    with tf.experimental.async_scope():
        x = tf.constant(2.0) * 3.0
    tf.experimental.async_clear_error()
    assert x.numpy() == 6.0
    with pytest.raises(tf.errors.InvalidArgumentError):
        with tf.experimental.async_scope():
            tf.debugging.assert_positive(tf.constant(-1.0))
    with tf.experimental.function_executor_type("SINGLE_THREADED_EXECUTOR"):
        assert tf.function(lambda v: v + 1)(tf.constant(1)).numpy() == 2


def test_sparse_bincount_as_tfs_documented_examples():
    data = np.array([[10, 20, 30, 20], [11, 101, 11, 10001]], dtype=np.int64)
    counts = tf.sparse.bincount(data, axis=-1)
    assert counts.indices.numpy().tolist() == [[0, 10], [0, 20], [0, 30], [1, 11], [1, 101], [1, 10001]]
    assert counts.values.numpy().tolist() == [1, 2, 1, 2, 1, 1] and counts.dense_shape.numpy().tolist() == [2, 10002]
    flat = tf.sparse.bincount(data)
    assert flat.dense_shape.numpy().tolist() == [10002] and flat.values.numpy().tolist() == [1, 2, 2, 1, 1, 1]
    binary = tf.sparse.bincount(data, axis=-1, binary_output=True, maxlength=100)
    assert binary.indices.numpy().tolist() == [[0, 10], [0, 20], [0, 30], [1, 11]]
    assert binary.values.numpy().tolist() == [1, 1, 1, 1] and binary.dense_shape.numpy().tolist() == [2, 100]
    weights = np.array([[2, 0.25, 15, 0.5], [2, 17, 3, 0.9]])
    weighted = tf.sparse.bincount(data, weights=weights, axis=-1)
    np.testing.assert_allclose(weighted.values.numpy(), [2, 0.75, 15, 5, 17, 0.9])
    assert tf.sparse.bincount(tf.sparse.from_dense(data), axis=-1).values.numpy().tolist() == [1, 2, 1, 2, 1, 1]


def test_segment_products():
    c = tf.constant([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])
    assert tf.math.segment_prod(c, [0, 0, 1]).numpy().tolist() == [[4, 6, 6, 4], [5, 6, 7, 8]]  # TF's example
    assert tf.math.unsorted_segment_prod(c, [0, 1, 0], 3).numpy().tolist() == [[5, 12, 21, 32], [4, 3, 2, 1],
                                                                               [1, 1, 1, 1]]  # empty: 1
    assert tf.math.unsorted_segment_prod(tf.constant([2.0, 3.0, 4.0]), [1, -1, 1], 2).numpy().tolist() == [1.0, 8.0]
    x = tf.constant([2.0, 0.0, 4.0, 5.0], tf.float64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.reduce_sum(tf.math.unsorted_segment_prod(x, [0, 0, 1, 1], 2))
    assert tape.gradient(y, x).numpy().tolist() == [0.0, 2.0, 5.0, 4.0]  # the zero's gradient: the others' product
    check_gradients(lambda v: tf.reduce_sum(tf.math.segment_prod(v, [0, 0, 1])), [tf.constant([1.5, -2.0, 3.0],
                                                                                               tf.float64)])


def test_decode_json_example():
    text = ('{"features": {"feature": {"x": {"floatList": {"value": [1.5, 2.5]}}, '
            '"label": {"int64_list": {"value": ["3"]}}, "name": {"bytesList": {"value": ["aGk="]}}}}}')
    binary = tf.io.decode_json_example([text, text])
    assert binary.shape == (2,)
    parsed = tf.io.parse_example(binary, {"x": tf.io.FixedLenFeature([2], tf.float32),
                                          "label": tf.io.FixedLenFeature([], tf.int64),
                                          "name": tf.io.FixedLenFeature([], tf.string)})
    assert parsed["x"].numpy().tolist() == [[1.5, 2.5]] * 2 and parsed["label"].numpy().tolist() == [3, 3]
    assert parsed["name"].numpy().tolist() == [b"hi", b"hi"]  # JSON bytes are base64
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.io.decode_json_example("{not json")
