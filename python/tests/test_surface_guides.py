"""TensorFlow's guides "Introduction to Tensors", "Introduction to Variables", "Introduction to
gradients and automatic differentiation" and "Advanced automatic differentiation" (their code under
examples/python/guides, only the import changed) run on Kiln and print what the guides print.

The expected transcripts (guides_expected/*.txt) are the guides' printed outputs in TF's format.
Kiln prints its own class name ("kiln.Tensor(" for "tf.Tensor(", "<kiln.RaggedTensor" for "<tf.RaggedTensor") and puts a variable's multi-line
NumPy value on the same line (as test_tensor.py records); a line starting with "~" is an exception
or float-noise line whose label (the text before the first ': ') must match."""
import contextlib
import io
import os
import runpy

import numpy as np
import pytest

import kiln as tf

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
GUIDES = os.path.join(REPO, "examples", "python", "guides")
TENSOR_PREFIX = str(tf.constant(0)).split("(")[0] + "("
VARIABLE_PREFIX = "<" + repr(tf.Variable(0.0)).split(" ")[0][1:]
RAGGED_PREFIX = repr(tf.ragged.constant([[0]])).split(" ")[0]


def run_guide(name, tmp_path):
    tf.keras.backend.clear_session()  # layer names count from "dense" again, as in a fresh notebook
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            scope = runpy.run_path(os.path.join(GUIDES, name + ".py"), run_name="__main__")
    finally:
        os.chdir(cwd)
    return out.getvalue(), scope


def expected_lines(name):
    with open(os.path.join(HERE, "guides_expected", name + ".txt"), encoding="utf-8") as f:
        text = f.read()
    text = text.replace("tf.Tensor(", TENSOR_PREFIX).replace("<tf.Variable", VARIABLE_PREFIX)
    text = text.replace("<tf.RaggedTensor", RAGGED_PREFIX)
    text = text.replace("numpy=\narray", "numpy=array")
    return text.rstrip("\n").split("\n")


def label(line):
    return line.split(": ", 1)[0] if ": " in line else None


def assert_transcript(name, printed):
    got = [line.rstrip() for line in printed.rstrip("\n").split("\n")]
    want = expected_lines(name)
    assert len(got) == len(want), "\n".join(got)
    for i, (g, w) in enumerate(zip(got, want)):
        if w.startswith("~"):
            assert label(g) == label(w[1:]), f"line {i + 1}: {g!r} vs {w!r}"
        else:
            assert g == w, f"line {i + 1}: {g!r} vs {w!r}"


def test_introduction_to_tensors(tmp_path):
    printed, scope = run_guide("tensor", tmp_path)
    assert_transcript("tensor", printed)
    # cells the notebook displays rather than prints
    assert tf.rank(scope["rank_4_tensor"]).numpy() == 4
    assert tf.shape(scope["rank_4_tensor"]).numpy().tolist() == [3, 2, 4, 5]
    np.testing.assert_array_equal(np.array(scope["rank_2_tensor"]), [[1, 2], [3, 4], [5, 6]])


def test_introduction_to_variables(tmp_path):
    printed, scope = run_guide("variable", tmp_path)
    assert_transcript("variable", printed)
    assert scope["step_counter"].trainable is False
    assert scope["bool_variable"].dtype == tf.bool


def test_introduction_to_gradients(tmp_path):
    printed, scope = run_guide("autodiff", tmp_path)
    assert_transcript("autodiff", printed)
    assert scope["dy_dx"].shape == (201,)  # cell 49: the sigmoid's derivative on linspace(-10, 10, 201)
    x = np.linspace(-10.0, 10.0, 201)
    np.testing.assert_allclose(scope["dy_dx"].numpy(), np.exp(-x) / (1 + np.exp(-x)) ** 2, atol=1e-6)


def test_advanced_autodiff(tmp_path):
    printed, scope = run_guide("advanced_autodiff", tmp_path)
    assert_transcript("advanced_autodiff", printed)
    assert [v.shape.as_list() for v in scope["dg1_mag"]] == [[5, 10], [10]]
    assert float(scope["delta"]) < 1e-3 and float(scope["error"]) < 1e-3  # Jacobian sums against gradients
    assert scope["n_params"].numpy() == 40 and scope["h_mat"].shape == (40, 40)
    h = scope["h_mat"].numpy()
    np.testing.assert_allclose(h, h.T, atol=1e-5)  # a Hessian is symmetric
    assert scope["j_select"].shape == (7, 6, 5)


@pytest.mark.parametrize("name", ["tensor", "variable", "autodiff", "advanced_autodiff"])
def test_guides_differ_from_tensorflow_only_in_marked_lines(name):
    with open(os.path.join(GUIDES, name + ".py"), encoding="utf-8") as f:
        source = f.read()
    assert "import kiln as tf" in source and "tensorflow" not in source.split('"""', 2)[2]
