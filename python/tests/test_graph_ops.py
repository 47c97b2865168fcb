"""tf.Graph and tf.Operation as TF 2 code reads them: a traced function's graph (get_operations,
op.name/type/inputs/outputs, inputs/outputs, as_graph_def), Tensor.op and Tensor.graph while
tracing, and `with tf.Graph().as_default():` (TF's documented example: `c.graph is g`). Op names
and types are Kiln's (mat_mul/MatMul)."""
import numpy as np
import pytest

import kiln as tf


@tf.function
def affine(x, w):
    return tf.matmul(x, w) + 1.0


def concrete():
    return affine.get_concrete_function(tf.TensorSpec([2, 3], tf.float32), tf.TensorSpec([3, 4], tf.float32))


def test_get_operations_of_a_concrete_function():
    graph = concrete().graph
    ops = graph.get_operations()
    assert [(op.name, op.type) for op in ops] == [("x", "Placeholder"), ("w", "Placeholder"), ("mat_mul", "MatMul"),
                                                  ("const", "Const"), ("add", "Add")]
    mat_mul = graph.get_operation_by_name("mat_mul")
    assert [t.name for t in mat_mul.inputs] == ["x:0", "w:0"]
    out = mat_mul.outputs[0]
    assert out.name == "mat_mul:0" and out.shape.as_list() == [2, 4] and out.dtype == tf.float32
    assert out.op == mat_mul and out.graph is graph
    assert [op.name for op in out.consumers()] == ["add"]
    assert mat_mul.node_def.op == "MatMul" and mat_mul.node_def.input == ["x", "w"]
    assert repr(mat_mul) == "<tf.Operation 'mat_mul' type=MatMul>"


def test_graph_inputs_outputs_and_lookups():
    graph = concrete().graph
    assert [t.name for t in graph.inputs] == ["x:0", "w:0"]
    assert [t.name for t in graph.outputs] == ["add:0"]
    assert graph.get_tensor_by_name("add:0").shape.as_list() == [2, 4]
    with pytest.raises(KeyError, match="refers to an Operation not in the graph"):
        graph.get_operation_by_name("nothing")
    with pytest.raises(ValueError, match="looks like an \\(invalid\\) Operation name"):
        graph.get_tensor_by_name("add")
    with pytest.raises(KeyError, match="only has 1 outputs"):
        graph.get_tensor_by_name("add:3")
    assert len(graph.as_graph_def().node) == len(graph.get_operations()) == graph.num_nodes()
    assert graph.building_function
    with pytest.raises(ValueError, match="finished"):
        with graph.as_default():
            pass


def test_tensor_op_and_graph_while_tracing():
    seen = {}

    @tf.function
    def f(x):
        y = tf.nn.relu(x) * 2.0
        seen["op"] = (y.op.name, y.op.type, [t.name for t in y.op.inputs], y.value_index)
        seen["graph"] = y.graph
        # The op's inputs are tensors of the graph being traced: usable in more ops.
        return y.op.inputs[0] + 1.0

    np.testing.assert_allclose(f(tf.constant([-1.0, 2.0])).numpy(), [1.0, 3.0])
    assert seen["op"] == ("mul", "Mul", ["relu:0", "const:0"], 0)
    assert "mul" in [op.name for op in seen["graph"].get_operations()]
    with pytest.raises(AttributeError, match="Tensor.op is undefined when eager execution is enabled"):
        tf.constant(1.0).op
    with pytest.raises(AttributeError, match="Tensor.graph is undefined when eager execution is enabled"):
        tf.constant(1.0).graph


def test_graph_as_default_builds_symbolic_ops():
    # TF's tf.Graph docstring: a constant made inside `with g.as_default()` belongs to g.
    g = tf.Graph()
    with g.as_default() as entered:
        assert entered is g
        assert not tf.executing_eagerly()
        c = tf.constant(30.0)
        assert c.graph is g
        a = tf.constant([[1.0, 2.0]])
        b = tf.constant([[3.0], [4.0]])
        m = tf.matmul(a, b)
        assert m.op.type == "MatMul" and [t.name for t in m.op.inputs] == [a.name, b.name]
        (grad,) = tf.gradients(m * c, a)
        assert grad.shape.as_list() == [1, 2]
    assert tf.executing_eagerly()
    types = {op.name: op.type for op in g.get_operations()}  # tf.constant is a Const node, as in TF
    assert types["const"] == types["const_1"] == types["const_2"] == "Const" and types["mat_mul"] == "MatMul"
    assert g.get_tensor_by_name("mat_mul:0").shape.as_list() == [1, 1]
    with pytest.raises(Exception, match="symbolic tensor"):  # a graph's tensor has no value eagerly
        tf.add(m, 1.0)
    assert tf.Graph() != g and g == g


def test_operation_equality_and_hash():
    graph = concrete().graph
    assert graph.get_operation_by_name("add") == graph.get_operations()[-1]
    assert len({graph.get_operation_by_name("add"), graph.get_operations()[-1]}) == 1
