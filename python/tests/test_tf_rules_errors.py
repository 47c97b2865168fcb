"""TensorFlow 2.15's error classes for misuse (issue #39, group 4): a non-bool tensor as an
AutoGraph condition, a non-persistent tape used twice, and the limitations of TF's guide
"Better performance with tf.function" that raise in TF."""
import pytest

import kiln as tf


def test_if_on_non_bool_tensor_in_autograph_raises_mentioning_bool():
    @tf.function
    def branch(x):
        if x:
            return tf.constant(1)
        return tf.constant(0)

    for bad in (tf.constant(1.0), tf.constant([1, 2]), tf.constant([True, False])):
        with pytest.raises((TypeError, ValueError), match="bool"):
            branch(bad)
    assert branch(tf.constant(True)).numpy() == 1  # a bool scalar is fine

    @tf.function
    def loop(n):
        while n:
            n -= 1
        return n

    with pytest.raises((TypeError, ValueError), match="bool"):
        loop(tf.constant(3))

    @tf.function
    def pick(x):
        return x * 2 if x else x

    with pytest.raises((TypeError, ValueError), match="bool"):
        pick(tf.constant(2.0))


def test_non_persistent_tape_used_twice_raises_runtime_error():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).numpy() == 6.0
    with pytest.raises(RuntimeError, match="persistent"):
        tape.gradient(y, x)
    with tf.GradientTape(persistent=True) as again:
        again.watch(x)
        y = x * x
    assert again.gradient(y, x).numpy() == again.gradient(y, x).numpy() == 6.0


def test_tf_function_guide_limitations_raise_tf_classes():
    # "All outputs of a tf.function must be return values": a leaked tensor.
    leaked = []

    @tf.function
    def leaky(a):
        leaked.append(a + 1)
        return a + 2

    assert leaky(tf.constant(1)).numpy() == 3
    with pytest.raises(AttributeError):
        leaked[0].numpy()

    @tf.function
    def captures_leaked_tensor(b):
        b += leaked[0]
        return b

    with pytest.raises(TypeError):
        captures_leaked_tensor(tf.constant(2))
    with pytest.raises(TypeError):
        leaked[0] + 1  # an eager op given the graph tensor

    # "Creating tf.Variables": only on the first call.
    @tf.function
    def makes_variable(x):
        v = tf.Variable(1.0)
        return v + x

    with pytest.raises(ValueError):
        makes_variable(1.0)

    # "Recursive tf.functions are not supported": a tensor recurses without end.
    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        return 1

    with pytest.raises(Exception):  # noqa: B017 - TF's guide asserts Exception (a RecursionError)
        recursive_fn(tf.constant(5))


def test_tf_function_guide_one_function_with_two_optimizers_raises_value_error():
    # "Using with multiple Keras optimizers": the second optimizer's slots would be new
    # variables on a later trace.
    opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
    opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)

    @tf.function
    def train_step(w, x, y, optimizer):
        with tf.GradientTape() as tape:
            loss = tf.abs(w * x - y)
        gradients = tape.gradient(loss, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w = tf.Variable(2.0)
    x, y = tf.constant([-1.0]), tf.constant([2.0])
    train_step(w, x, y, opt1)
    assert w.numpy() != 2.0
    with pytest.raises(ValueError, match="non-first call"):
        train_step(w, x, y, opt2)
