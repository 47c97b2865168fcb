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


def check_sampled_variable_gradients(variables, grads, loss, stride, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Every `stride`-th element of each variable's gradient against central differences of loss() (a Python
    float), the variable moved by +-eps and then restored."""
    for var, grad in zip(variables, grads):
        base = var.numpy().copy()
        for k in range(0, base.size, stride):
            values = []
            for delta in (eps, -eps):
                moved = base.copy()
                moved.flat[k] += delta
                var.assign(moved)
                values.append(loss())
            var.assign(base)
            np.testing.assert_allclose(grad.numpy().flat[k], (values[0] - values[1]) / (2 * eps), rtol=rtol,
                                       atol=atol)


def check_sampled_input_gradient(grad, loss, x, stride, eps=1e-6, rtol=1e-5, atol=1e-7):
    """Every `stride`-th element of the gradient with respect to the array x against central differences of
    loss(x') (a Python float), x' being x with that element moved by +-eps."""
    for k in range(0, x.size, stride):
        plus, minus = x.copy(), x.copy()
        plus.flat[k] += eps
        minus.flat[k] -= eps
        np.testing.assert_allclose(grad.numpy().flat[k], (loss(plus) - loss(minus)) / (2 * eps), rtol=rtol,
                                   atol=atol)
