"""TF's AutoGraph rules and messages, each raised at the user's own file and line
(converted code is compiled under the user's file name and line numbers)."""
import traceback

import numpy as np
import pytest

import kiln as tf

HERE = __file__


def _line_of(marker):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return n
    raise AssertionError(marker)


def _user_frames(excinfo):
    return [(fs.lineno, fs.line) for fs in traceback.extract_tb(excinfo.tb) if fs.filename == HERE]


def _raises_at(exc, message, marker, fn, *args):
    with pytest.raises(exc, match=message) as info:
        fn(*args)
    frames = _user_frames(info)
    line = _line_of(marker)
    assert line in [n for n, _ in frames], (line, frames)
    # the traceback shows the user's own source text for that line
    assert any(n == line and text and text.endswith("# " + marker) for n, text in frames)
    return info


def test_if_variable_defined_in_one_branch():
    @tf.function
    def f(x):
        if x > 0:  # if-main-only
            y = x
        return y

    _raises_at(ValueError, "'y' must also be initialized in the else branch", "if-main-only", f, tf.constant(1))


def test_if_variable_defined_in_else_only():
    @tf.function
    def f(x):
        if x > 0:  # if-else-only
            pass
        else:
            y = x
        return y

    _raises_at(ValueError, "'y' must also be initialized in the main branch", "if-else-only", f, tf.constant(1))


def test_same_code_runs_as_python_without_tensors():
    def f(x):
        if x > 0:
            y = x
        return y

    assert tf.autograph.to_graph(f)(3) == 3
    with pytest.raises(UnboundLocalError):
        tf.autograph.to_graph(f)(-3)


def test_variable_used_after_loop_not_defined_before():
    @tf.function
    def f(n):
        for i in tf.range(n):  # loop-undefined
            y = i
        return y

    _raises_at(ValueError, "'y' must be defined before the loop.", "loop-undefined", f, tf.constant(3))


def test_loop_variable_dtype_change():
    @tf.function
    def f(n):
        x = tf.constant(0)
        for i in tf.range(n):  # loop-dtype
            x = tf.cast(x, tf.float32) + 1.0
        return x

    _raises_at(TypeError, "'x' has dtype int32 before the loop, but dtype float32 after one iteration",
               "loop-dtype", f, tf.constant(3))


def test_loop_variable_shape_change_and_shape_invariants():
    @tf.function
    def f(n):
        v = tf.constant([0])
        while tf.shape(v)[0] < n:  # loop-shape
            v = tf.concat([v, [1]], 0)
        return v

    _raises_at(ValueError, r"'v' has shape \(1,\) before the loop, but shape \(2,\) after one iteration. Use "
               "kiln.autograph.experimental.set_loop_options to set shape invariants.", "loop-shape", f,
               tf.constant(3))

    g = _growing_with_invariant(tf.TensorShape([None]))
    np.testing.assert_array_equal(g(tf.constant(3)).numpy(), [0, 1, 1])
    # The invariant reaches kiln.while_loop: the result's static shape is the invariant.
    assert g.get_concrete_function(tf.constant(3)).outputs[0].shape.as_list() == [None]


def _growing_with_invariant(shape):
    @tf.function
    def f(n):
        v = tf.constant([0])
        while tf.shape(v)[0] < n:  # loop-invariant
            tf.autograph.experimental.set_loop_options(shape_invariants=[(v, shape)])
            v = tf.concat([v, [1]], 0)
        return v

    return f


def test_shape_invariant_that_does_not_fit_the_entry_value():
    _raises_at(ValueError, r"'v' has shape \(1,\) before the loop, which does not fit its shape invariant \(3,\)\.",
               "loop-invariant", _growing_with_invariant(tf.TensorShape([3])), tf.constant(3))


def test_while_loop_variable_dtype_change():
    @tf.function
    def f(x):
        while x < 3:  # while-dtype
            x = tf.cast(x, tf.float32) + 1
        return x

    _raises_at(TypeError, "'x' has dtype int32 before the loop, but dtype float32 after one iteration",
               "while-dtype", f, tf.constant(0))


def test_tensor_loop_with_python_values():
    @tf.function
    def f(n):
        s = "a"
        for i in tf.range(n):  # loop-python-value
            s = s + "b"
        return s

    _raises_at(TypeError, "'s' is a Python str \\('a'\\) before a loop whose condition is a tensor",
               "loop-python-value", f, tf.constant(3))

    @tf.function
    def g(x):
        y = None
        while x > 0:  # loop-none
            y = x
            x = x - 1
        return y

    _raises_at(ValueError, "'y' may not be None before the loop.", "loop-none", g, tf.constant(3))


def test_return_inside_a_tensor_loop():
    @tf.function
    def f(xs):
        for x in xs:  # loop-return
            if x > 2:
                return x
        return -1

    _raises_at(ValueError, "return statements are not supported inside a loop whose condition is a tensor",
               "loop-return", f, tf.constant([1, 2, 3]))


def test_return_in_one_branch_only():
    @tf.function
    def f(x):
        for v in [x, x + 1]:
            if v > 2:  # branch-return
                return v
        return -1

    _raises_at(ValueError, "the else branch must also have a return statement.", "branch-return", f,
               tf.constant(1))


def test_python_error_in_converted_code_points_at_user_line():
    @tf.function
    def f(x, d):
        if x > 0:
            y = x * (1 // d)  # zero-division
        else:
            y = x
        return y

    _raises_at(ZeroDivisionError, "integer division", "zero-division", f, tf.constant(1), 0)


def test_kiln_error_while_tracing_points_at_user_line():
    @tf.function
    def f(x):
        for i in tf.range(3):
            x = x + tf.reshape(x, [7])  # bad-reshape
        return x

    with pytest.raises(Exception) as info:
        f(tf.constant([1.0, 2.0]))
    assert _line_of("bad-reshape") in [n for n, _ in _user_frames(info)]
    # no frame of generated code: every frame names a real file
    assert all(not fs.filename.startswith("<") for fs in traceback.extract_tb(info.tb))


def test_graph_assertion_fails_at_run_time():
    @tf.function
    def f(x):
        assert x > 0, "x must be positive"
        return x + 1

    assert int(f(tf.constant(1))) == 2
    with pytest.raises(tf.errors.InvalidArgumentError, match="x must be positive"):
        f(tf.constant(-1))
    assert f.experimental_get_tracing_count() == 1


def test_python_assert_stays_python():
    @tf.function
    def f(x, flag):
        assert flag, "flag must be set"
        return x

    with pytest.raises(AssertionError, match="flag must be set"):
        f(tf.constant(1), False)


def test_set_loop_options_takes_its_own_arguments_only():
    # A call that does not fit set_loop_options stays in the loop and raises Python's
    # TypeError at its line; positional arguments are the options in TF's order.
    @tf.function
    def bad(n):
        s = tf.constant(0)
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(maximum_iteration=2)  # misspelt
            s += i
        return s

    _raises_at(TypeError, "unexpected keyword argument 'maximum_iteration'", "misspelt", bad, tf.constant(5))

    @tf.function
    def positional(n):
        s = tf.constant(0)
        for i in tf.range(n):
            tf.autograph.experimental.set_loop_options(10, False, 2)
            s += i
        return s

    assert int(positional(tf.constant(5))) == 1  # two iterations: 0 + 1
    assert "opts={'parallel_iterations': 10, 'swap_memory': False, 'maximum_iterations': 2}" \
        in tf.autograph.to_code(positional.python_function)
