"""Central differences, the reference of the gradient tests."""
import numpy as np

import kiln as tf


def central_differences(loss, args, which, eps=1e-6):
    """d loss(*args) / d args[which], one element at a time (args: float64 tensors)."""
    value = args[which].numpy()
    grad = np.zeros_like(value)
    for idx in np.ndindex(value.shape):
        for sign in (1, -1):
            moved = value.copy()
            moved[idx] += sign * eps
            inputs = list(args)
            inputs[which] = tf.constant(moved)
            grad[idx] += sign * float(loss(*inputs))
    return grad / (2 * eps)


def check_gradients(loss, args, rtol=1e-6, atol=1e-6):
    """The tape's gradients of loss(*args) with respect to each of args against central differences."""
    with tf.GradientTape() as tape:
        tape.watch(args)
        value = loss(*args)
    for i, grad in enumerate(tape.gradient(value, args)):
        np.testing.assert_allclose(grad.numpy(), central_differences(loss, args, i), rtol=rtol, atol=atol)
