"""Differential test: small generated programs mixing if/elif/else, for over
kiln.range, while, break, continue, and/or/not and conditional expressions give the
same results eagerly (plain Python on eager tensors), converted and traced
(kiln.function), and with kiln.config.run_functions_eagerly(True)."""
import importlib.util
import itertools
import textwrap

import pytest

import kiln as tf

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

CONDS = ["a > b", "x % 2 == 0", "a > 0 and b < 5", "not a > b", "a < x or b > 3", "b % 3 == 1"]
SIMPLE = ["a = (a + x) % 97", "b = (b * 2 - a) % 89", "a = a - 1", "b = b + i", "a = a if a > b else b + 1",
          "b = (a + b) % 50"]

_counter = itertools.count()


@st.composite
def blocks(draw, depth=0, in_loop=False):
    n = draw(st.integers(1, 3))
    out = []
    for _ in range(n):
        kinds = ["simple", "simple"]
        if depth < 2:
            kinds += ["if", "for", "while"]
        if in_loop:
            kinds += ["jump"]
        kind = draw(st.sampled_from(kinds))
        if kind == "simple":
            out.append(draw(st.sampled_from(SIMPLE)))
        elif kind == "jump":
            out.append(f"if {draw(st.sampled_from(CONDS))}:\n    {draw(st.sampled_from(['break', 'continue']))}")
        elif kind == "if":
            body = draw(blocks(depth + 1, in_loop))
            text = f"if {draw(st.sampled_from(CONDS))}:\n{textwrap.indent(body, '    ')}"
            if draw(st.booleans()):
                text += f"\nelif {draw(st.sampled_from(CONDS))}:\n{textwrap.indent(draw(blocks(depth + 1, in_loop)), '    ')}"
            if draw(st.booleans()):
                text += f"\nelse:\n{textwrap.indent(draw(blocks(depth + 1, in_loop)), '    ')}"
            out.append(text)
        elif kind == "for":
            body = draw(blocks(depth + 1, True))
            out.append(f"for i in tf.range({draw(st.integers(0, 4))}):\n{textwrap.indent(body, '    ')}")
        else:
            c = f"c{depth}"
            body = draw(blocks(depth + 1, True))
            out.append(f"{c} = 0\nwhile {c} < {draw(st.integers(0, 3))}:\n    {c} += 1\n"
                       f"{textwrap.indent(body, '    ')}")
    return "\n".join(out)


def _load(tmp_path, source):
    path = tmp_path / f"generated_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


def _values(result):
    return tuple(int(v) for v in result)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(body=blocks(), x=st.integers(-5, 12))
def test_eager_traced_and_run_functions_eagerly_agree(tmp_path_factory, body, x):
    source = ("import kiln as tf\n\n\ndef program(x):\n    a = tf.constant(1)\n    b = tf.constant(2)\n"
              "    i = tf.constant(0)\n" + textwrap.indent(body, "    ") + "\n    return a, b\n")
    program = _load(tmp_path_factory.mktemp("ag"), source)
    arg = tf.constant(x)
    expected = _values(program(arg))
    traced = tf.function(program)
    assert _values(traced(arg)) == expected, source
    tf.config.run_functions_eagerly(True)
    try:
        assert _values(traced(arg)) == expected, source
    finally:
        tf.config.run_functions_eagerly(False)
