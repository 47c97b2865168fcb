"""TensorFlow 2.15's dtype rules for NumPy values and Python numbers (issue #39, group 1):
each test is named after the rule it checks, eagerly and inside kiln.function."""
import numpy as np
import pytest

import kiln as tf


@pytest.mark.parametrize("value, dtype", [
    (np.float64(1.5), tf.float64), (np.array([1.5, 2.5]), tf.float64), (np.array(1.5), tf.float64),
    (np.int64(3), tf.int64), (np.array([1, 2]), tf.int64), (np.float32(0.5), tf.float32),
    (np.int32(7), tf.int32), (np.array([[1, 2]], dtype=np.uint8), tf.uint8), (np.bool_(True), tf.bool),
])
def test_numpy_arrays_and_scalars_keep_their_dtype(value, dtype):
    for convert in (tf.constant, tf.convert_to_tensor):
        t = convert(value)
        assert t.dtype == dtype
        np.testing.assert_array_equal(t.numpy(), np.asarray(value))
    # NumPy's float64 keeps every bit a float32 would lose.
    assert tf.constant(np.float64(0.1)).numpy() == np.float64(0.1)

    @tf.function
    def traced():
        return tf.constant(value)
    assert traced().dtype == dtype


@pytest.mark.parametrize("value", [1.5, 2.0, [1, 2.5], [[0.5]]])
@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_constant_python_float_to_int_dtype_raises_type_error(value, dtype):
    with pytest.raises(TypeError, match=f"Cannot convert .* to EagerTensor of dtype {dtype.name}"):
        tf.constant(value, dtype=dtype)
    with pytest.raises(TypeError):
        tf.convert_to_tensor(value, dtype=dtype)
    # NumPy values are cast by NumPy to the requested dtype, eagerly and in a trace alike
    # (pywrap_tensor.cc converts NumPy arrays and scalars with NPY_ARRAY_FORCECAST): 1.7 -> 1.
    assert tf.constant(np.array([1.7, -2.5]), dtype=dtype).numpy().tolist() == [1, -2]

    @tf.function
    def traced():
        return tf.constant(np.array([1.7, -2.5]), dtype=dtype)
    assert traced().numpy().tolist() == [1, -2]
    assert tf.constant([1, 2], dtype=dtype).dtype == dtype
    assert tf.constant(np.array([3], dtype=np.int64), dtype=dtype).numpy().tolist() == [3]
    assert tf.constant(np.array([3], dtype=np.int32), dtype=tf.float64).dtype == tf.float64


def test_int32_tensor_plus_python_float_raises_as_tf():
    # TF 2.15 converts no Python float to an integer tensor, 2.0 included. `+` and tf.add
    # (math_ops.add) convert y with x's dtype as a hint only, so the AddV2 op rejects the
    # float32 operand: InvalidArgumentError eagerly, TypeError inside a graph. The other
    # operators convert y to x's dtype: TypeError.
    x = tf.constant([1, 2])
    for op in (lambda: x + 1.5, lambda: tf.add(x, 1.5), lambda: x + 2.0, lambda: x.__add__(0.5)):
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"cannot compute AddV2 as input #1\(zero-based\) was expected to be a int32 "
                                 r"tensor but is a float tensor"):
            op()
    with pytest.raises(tf.errors.InvalidArgumentError, match="expected to be a float tensor but is a int32"):
        tf.add(1.5, x)  # x converts alone, as float32
    for op in (lambda: 1.5 + x, lambda: x * 0.5, lambda: tf.maximum(2.5, x), lambda: x - 1.5, lambda: x / 1.5,
               lambda: x * 2.0, lambda: tf.multiply(x, 1.5), lambda: x < 1.5, lambda: x * [1.5, 2.5]):
        with pytest.raises(TypeError, match="Cannot convert .* to EagerTensor of dtype int32"):
            op()
    assert (x * 2).numpy().tolist() == [2, 4] and (x + np.int64(1)).dtype == tf.int32
    # np.float64 is a Python float subclass, but a NumPy scalar to TF: NumPy casts it.
    assert (x + np.float64(1.0)).numpy().tolist() == [2, 3]

    @tf.function
    def plus(t):
        return t + 1.5

    @tf.function
    def times(t):
        return t * 1.5

    with pytest.raises(TypeError, match="Input 'y' of 'AddV2' Op has type float32 that does not match type int32"):
        plus(x)
    with pytest.raises(TypeError, match="Cannot convert"):
        times(x)


def test_tensors_of_two_dtypes_in_one_op_raise_type_error_in_a_graph():
    # TF's graph builder raises TypeError for inputs of different dtypes; eager ops InvalidArgumentError.
    a, b = tf.constant([[1.0]]), tf.constant([[1]])
    ops = (lambda x, y: x + y, lambda x, y: x - y, tf.matmul, lambda x, y: tf.concat([x, y], 0),
           lambda x, y: tf.where(x > 0, x, y), tf.maximum)
    for op in ops:
        with pytest.raises(tf.errors.InvalidArgumentError):
            op(a, b)
        with pytest.raises(TypeError, match="dtype"):
            tf.function(op)(a, b)
    with pytest.raises(tf.errors.InvalidArgumentError):  # still the class Kiln raised before, too
        tf.function(lambda x, y: x * y)(a, b)


def test_int_tensor_and_numpy_float_follow_tf_2_15():
    # TF converts a NumPy operand to the tensor's dtype with NumPy's own cast (pywrap_tensor.cc:
    # NumPy scalars become arrays, then PyArray_FromAny with NPY_ARRAY_FORCECAST), so a NumPy float
    # beside an int tensor truncates, where a Python float is refused (InvalidArgumentError for +).
    x = tf.constant([1, 2])
    cases = [
        (lambda: x + np.float32(1.5), [2, 3]),
        (lambda: tf.add(x, np.array([1.5, 2.5])), [2, 4]),
        (lambda: np.float32(1.5) * x, [1, 2]),
        (lambda: np.array([0.5, 1.5]) - x, [-1, -1]),
        (lambda: tf.multiply(x, np.float32(1.5)), [1, 2]),
        (lambda: tf.maximum(x, np.float32(1.5)), [1, 2]),
        (lambda: x * np.float32(1.5), [1, 2]),
        (lambda: x - np.float64(0.5), [1, 2]),
        (lambda: x ** np.float32(2.0), [1, 4]),
        (lambda: tf.Variable([1, 2]) * np.float32(1.5), [1, 2]),
        (lambda: x * np.bool_(True), [1, 2]),
    ]
    for make, expected in cases:
        out = make()
        assert isinstance(out, tf.Tensor) and out.dtype == tf.int32
        assert out.numpy().tolist() == expected
    assert (x < np.float32(1.5)).numpy().tolist() == [False, False]
    with pytest.raises(tf.errors.InvalidArgumentError, match="but is a float tensor"):
        x + 1.5  # a Python float: the conversion refuses it, AddV2 sees int32 + float
    # NumPy integers become the tensor's dtype (int or float), NumPy floats any float dtype.
    assert (x * np.int64(3)).dtype == tf.int32
    assert (tf.constant([1.0]) * np.int64(3)).dtype == tf.float32
    assert (tf.constant([1.0], tf.float64) + np.float32(0.5)).dtype == tf.float64

    # Inside a trace TF's graph constants cast NumPy values to the tensor's dtype (astype).
    @tf.function
    def traced(t):
        return t + np.float32(1.5), t * np.array([1.5, 2.5])

    plus, times = traced(x)
    assert plus.dtype == tf.int32 and plus.numpy().tolist() == [2, 3]
    assert times.dtype == tf.int32 and times.numpy().tolist() == [1, 4]


def test_tensor_dtype_wins_over_numpy_scalars_and_python_numbers():
    f32 = tf.constant([1.0, 2.0])
    i64 = tf.constant([1, 2], dtype=tf.int64)
    cases = [
        (lambda: f32 + np.float64(0.5), tf.float32, [1.5, 2.5]),
        (lambda: np.float64(0.5) + f32, tf.float32, [1.5, 2.5]),
        (lambda: f32 * np.float64(2.0), tf.float32, [2.0, 4.0]),
        (lambda: np.float64(2.0) * f32, tf.float32, [2.0, 4.0]),
        (lambda: f32 - np.int64(1), tf.float32, [0.0, 1.0]),
        (lambda: i64 + 3, tf.int64, [4, 5]),
        (lambda: i64 + np.int32(3), tf.int64, [4, 5]),
        (lambda: np.int32(3) * i64, tf.int64, [3, 6]),
        (lambda: tf.add(f32, np.float64(1.0)), tf.float32, [2.0, 3.0]),
        (lambda: tf.maximum(i64, 2), tf.int64, [2, 2]),
    ]
    for make, dtype, expected in cases:
        out = make()
        assert out.dtype == dtype
        np.testing.assert_allclose(out.numpy(), expected)

    @tf.function
    def traced(x):
        return x * np.float64(2.0) + np.float64(1.0)
    out = traced(f32)
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy(), [3.0, 5.0])


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_integer_dtype_draws_integers_in_range(dtype):
    tf.random.set_seed(7)
    draws = tf.random.uniform([4000], maxval=10, dtype=dtype)
    assert draws.dtype == dtype
    values = draws.numpy()
    assert values.min() == 0 and values.max() == 9
    counts = np.bincount(values, minlength=10)
    assert counts.min() > 300  # each of the 10 values near 400 of 4000
    shifted = tf.random.uniform([2, 500], minval=-3, maxval=2, dtype=dtype).numpy()
    assert shifted.shape == (2, 500) and set(np.unique(shifted)) == {-3, -2, -1, 0, 1}
    with pytest.raises(ValueError, match="maxval"):
        tf.random.uniform([3], dtype=dtype)

    @tf.function
    def traced():
        return tf.random.uniform([3, 3], minval=5, maxval=6, dtype=dtype)
    out = traced()
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), np.full((3, 3), 5))


def test_one_hot_of_float_numpy_array_follows_tf():
    # TF 2.15's OneHot converts indices that are no tensor yet to its default index dtype, int64
    # (pywrap_tfe_src.cc, MaybeGetDTypeForAttr); NumPy values are cast by NumPy (FORCECAST), so a
    # float NumPy array truncates, eagerly and in a trace (keras.io's "Training & evaluation with
    # the built-in methods" one-hot encodes float32 labels this way).
    labels = np.array([0.0, 2.0, 1.9, 3.0])  # float64, as np.loadtxt gives labels
    expected = np.eye(3, dtype=np.float32)[[0, 2, 1]]
    expected = np.vstack([expected, np.zeros((1, 3), np.float32)])  # 3 is out of range: all zeros

    @tf.function
    def traced():
        return tf.one_hot(labels, 3)
    out = traced()
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(tf.one_hot(labels, 3).numpy(), expected)
    with pytest.raises(TypeError, match="to EagerTensor of dtype int64"):
        tf.one_hot([0.0, 1.0], 3)  # Python floats: in a trace too
    # Integer indices of any integer dtype, NumPy's included.
    np.testing.assert_array_equal(tf.one_hot(labels.astype(np.uint8), 3).numpy(), expected)
    np.testing.assert_array_equal(tf.one_hot([0, 2, 1, 3], 3).numpy(), expected)
    np.testing.assert_array_equal(tf.one_hot(tf.constant([0, 2, 1, 3], tf.int64), 3).numpy(), expected)
    # A float tensor is refused by the op itself: eagerly InvalidArgumentError, in a trace TypeError.
    with pytest.raises(tf.errors.InvalidArgumentError, match="Value for attr 'TI' of float is not in the list"):
        tf.one_hot(tf.constant([0.0, 1.0]), 3)

    @tf.function
    def traced_float(t):
        return tf.one_hot(t, 3)
    with pytest.raises(TypeError, match="Value passed to parameter 'indices' has DataType float32"):
        traced_float(tf.constant([0.0, 1.0]))
    # The output takes on_value's dtype when no dtype is given.
    assert tf.one_hot([0, 1], 2, on_value=5, off_value=0).dtype == tf.int32


def test_keras_layers_cast_uint8_inputs_to_their_compute_dtype():
    images = np.arange(2 * 4 * 4, dtype=np.uint8).reshape(2, 4, 4, 1)
    expected = images.astype(np.float32)[:, :3, :3] + images[:, 1:, :3] + images[:, :3, 1:] + images[:, 1:, 1:]
    # Dense casts its inputs itself (Keras' Dense.call).
    dense = tf.keras.layers.Dense(2, kernel_initializer="ones")
    out = dense(images.reshape(2, 16))
    assert out.dtype == tf.float32
    np.testing.assert_array_equal(out.numpy(), np.repeat(images.reshape(2, 16).sum(1, keepdims=True), 2, 1))
    # A model conforms its inputs to its Input's dtype (Keras' _conform_to_reference_input):
    # functional, Sequential with an Input, Sequential whose first layer has input_shape.
    inputs = tf.keras.Input((4, 4, 1))
    conv = tf.keras.layers.Conv2D(1, 2, kernel_initializer="ones", use_bias=False)
    models = [tf.keras.Model(inputs, conv(inputs)),
              tf.keras.Sequential([tf.keras.Input((4, 4, 1)),
                                   tf.keras.layers.Conv2D(1, 2, kernel_initializer="ones", use_bias=False)]),
              tf.keras.Sequential([tf.keras.layers.Conv2D(1, 2, kernel_initializer="ones", use_bias=False,
                                                          input_shape=(4, 4, 1))])]
    for model in models:
        out = model(images)
        assert out.dtype == tf.float32
        np.testing.assert_array_equal(out.numpy(), expected)
        np.testing.assert_array_equal(model.predict(images, verbose=0), expected)
        model.compile(optimizer="sgd", loss="mse")
        assert np.isfinite(model.fit(images, expected, epochs=1, verbose=0).history["loss"][0])
    # A bare convolution does not autocast integers (Keras casts floating inputs only), as in TF.
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.keras.layers.Conv2D(1, 2)(images)


def test_tensor_format_formats_an_eager_scalar():
    t = tf.constant(3.14159)
    assert f"{t:.2f}" == "3.14"
    assert f"{tf.constant(7):>4d}" == "   7"
    assert "{:.1e}".format(tf.constant(12345.0, dtype=tf.float64)) == "1.2e+04"
    assert f"{tf.Variable(2.5):.3f}" == "2.500"
    assert f"{tf.constant([1.0, 2.0])}" == str(np.array([1.0, 2.0], np.float32))
    with pytest.raises(TypeError):
        f"{tf.constant([1.0, 2.0]):.2f}"


def test_fill_takes_the_value_dtype_tf_converts_it_to():
    assert tf.fill([2], 3).dtype == tf.int32 and tf.fill([2], 3.0).dtype == tf.float32
    assert tf.fill([2], np.int64(3)).dtype == tf.int64 and tf.fill([2], True).dtype == tf.bool
    assert tf.fill([2], tf.constant(2.0, tf.float64)).dtype == tf.float64
    assert tf.fill([2, 1], 7).numpy().tolist() == [[7], [7]]
