"""One test per converter: golden to_code output, and the converted function gives
the same results eagerly and traced (with tensors) as the plain Python function."""
import os
import pathlib

import numpy as np
import pytest

import kiln as tf

import ag_samples as samples

GOLDEN = pathlib.Path(__file__).parent / "golden"
UPDATE = os.environ.get("KILN_UPDATE_GOLDEN") == "1"

# name -> argument lists (Python values; each is also passed as tensors)
CASES = {
    "if_else": [(2,), (-2,)],
    "if_elif_else": [(15,), (3,), (-4,)],
    "if_without_else": [(-3,), (3,)],
    "while_loop": [([0.5, 0.9, 0.8],)],
    "for_range": [(5,), (0,)],
    "for_break": [(10,), (3,)],
    "while_continue": [(7,), (0,)],
    "return_in_if": [(3,), (-3,)],
    "return_in_loop": [([1, 2, 3, 4],), ([0, 1],)],  # traced with a Python list (see test_errors for tensors)
    "logical": [(1, 2), (1, -2), (-1, 2)],
    "conditional_expression": [(4,), (-4,)],
    "assert_statement": [(1,)],
    "calls": [(-3,)],
    "nested_function": [(3,), (-3,)],
    "loop_options": [(4,)],
    "for_else": [(5,), (2,)],
}


PYTHON_ARGS = {"return_in_loop"}


def _golden(name, text):
    path = GOLDEN / f"{name}.txt"
    if UPDATE or not path.exists():
        if not UPDATE:
            pytest.fail(f"no golden file {path} (run with KILN_UPDATE_GOLDEN=1 to write it)")
        path.write_text(text)
    return path.read_text()


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    return np.asarray(x.numpy() if tf.is_tensor(x) else x)


@pytest.mark.parametrize("name", sorted(CASES))
def test_to_code_golden(name):
    fn = getattr(samples, name)
    text = tf.autograph.to_code(fn)
    assert text == _golden(name, text)
    compile(text, name, "exec")  # the shown code is valid Python


@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_matches_python(name):
    fn = getattr(samples, name)
    converted = tf.autograph.to_graph(fn)
    traced = tf.function(fn)
    for args in CASES[name]:
        tensor_args = [tf.constant(a) for a in args] if name not in PYTHON_ARGS else args
        expected = _np(fn(*tensor_args))            # eager: plain Python on eager tensors
        np.testing.assert_equal(_np(converted(*args)), expected)  # converted, Python values
        np.testing.assert_equal(_np(traced(*tensor_args)), expected)  # converted and traced


def test_indented_multiline_string_keeps_its_value():
    # An indented function is parsed where it stands (no dedent), so the continuation
    # lines of a multi-line string keep their indentation, as in the original.
    from kiln.autograph import conversion

    class C:
        def f(self, x):
            s = """a
            b"""
            return s * x

    converted = conversion.convert(C.f)
    assert converted is not C.f
    assert converted(None, 2) == C.f(None, 2)


def _walrus_in_branch(x):
    if x > 0:
        y = (z := x + 1) * 2
    else:
        y = x
        z = x - 1
    return y + z


def test_walrus_in_branch_is_a_branch_output():
    # A walrus binds in an expression: the names a branch assigns must include it.
    for v in (3, -3):
        expected = _walrus_in_branch(v)
        traced = tf.function(_walrus_in_branch)(tf.constant(v))
        assert int(traced) == expected


def _return_and_break_in_while(x):
    while x > 0:
        x -= 1
        if x > 5:
            return x * 10
        if x > 3:
            break
    return x


def test_return_and_break_in_one_while_loop():
    # Both jumps stop the loop: its test gets a flag for each (it used to fail converting).
    converted = tf.autograph.to_graph(_return_and_break_in_while)
    traced = tf.function(_return_and_break_in_while)
    for v in (10, 5, 2, -1):
        expected = _return_and_break_in_while(v)
        assert converted(v) == expected
        assert int(traced(v)) == expected
    assert "ag__.and_(ag__.not_(break_), lambda: ag__.and_(ag__.not_(do_return), lambda: x > 0))" \
        in tf.autograph.to_code(_return_and_break_in_while)
