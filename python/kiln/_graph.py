"""tf.Graph and tf.Operation as TF 2 code touches them: a traced function's graph
(`concrete.graph.get_operations()`, `op.name/type/inputs/outputs`, `as_graph_def()`), the graph of a
tensor being traced (`t.op`, `t.graph`), and a graph built outside tf.function with
`with tf.Graph().as_default():` (its ops are symbolic; tf.gradients works there; running it is a
v1 Session's job, which Kiln leaves out: docs/design-notes.md, "tf.Graph and tf.gradients").

Names and op types are Kiln's own (`add`, `Add`); TF's differ (`add`, `AddV2`)."""
import contextlib
import weakref

from . import _C
from . import dtypes as _dtypes
from .gradient import nested_graph
from .tensor_shape import TensorShape


class _NodeDef:
    """A node of as_graph_def(): its name, op and inputs, as a GraphDef's NodeDef names them."""

    def __init__(self, name, op, inputs):
        self.name, self.op, self.input = name, op, list(inputs)

    def __repr__(self):
        return f"<NodeDef {self.name} = {self.op}({', '.join(self.input)})>"

    def __str__(self):
        return "\n".join([f'name: "{self.name}"', f'op: "{self.op}"'] + [f'input: "{i}"' for i in self.input]) + "\n"


class _GraphDef:
    """as_graph_def(): the graph's nodes (name, op, inputs), printed in a GraphDef's text layout
    (Kiln's nodes carry no attrs)."""

    def __init__(self, nodes):
        self.node = [_NodeDef(*n[:3]) for n in nodes]

    def __str__(self):
        lines = []
        for n in self.node:
            lines += ["node {", f'  name: "{n.name}"', f'  op: "{n.op}"'] + [f'  input: "{i}"' for i in n.input] + ["}"]
        return "\n".join(lines) + "\n"


def _split_name(name):
    node, _, index = name.partition(":")
    return node, int(index or 0)


class GraphTensor:
    """An output of a node of a graph that is not being built now (a traced function's graph): what
    it is (name, dtype, shape, op), not a value to compute with."""

    def __init__(self, op, index):
        self._op, self._index = op, index
        dims, enum, rank = op._node[3][index]
        self.dtype = _dtypes._BY_ENUM[enum]
        self.shape = TensorShape(None if rank < 0 else [None if d < 0 else d for d in dims])

    op = property(lambda self: self._op)
    graph = property(lambda self: self._op.graph)
    value_index = property(lambda self: self._index)
    name = property(lambda self: f"{self._op.name}:{self._index}")

    def get_shape(self):
        return self.shape

    def consumers(self):
        return [o for o in self._op.graph.get_operations() if any(i.name == self.name for i in o.inputs)]

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"


class Operation:
    """tf.Operation: a node of a graph."""

    def __init__(self, graph, node):
        self._graph, self._node = graph, node

    graph = property(lambda self: self._graph)
    name = property(lambda self: self._node[0])
    type = property(lambda self: self._node[1])
    node_def = property(lambda self: _NodeDef(*self._node[:3]))

    def _tensor(self, node_name, index):
        if self._graph._view.is_current():
            return self._graph._view.symbolic(node_name, index)
        return GraphTensor(self._graph.get_operation_by_name(node_name), index)

    @property
    def inputs(self):
        return tuple(self._tensor(*_split_name(name)) for name in self._node[2])

    @property
    def outputs(self):
        return [self._tensor(self.name, i) for i in range(len(self._node[3]))]

    def values(self):
        return tuple(self.outputs)

    @property
    def control_inputs(self):
        return [self._graph.get_operation_by_name(n) for n in self._node[4]]

    def __eq__(self, other):
        return isinstance(other, Operation) and other._graph._view.same(self._graph._view) and other.name == self.name

    def __hash__(self):
        return hash((self._graph._view.key(), self.name))

    def __repr__(self):
        return f"<tf.Operation '{self.name}' type={self.type}>"


class Graph:
    """tf.Graph: built with `with tf.Graph().as_default():` (ops inside are symbolic, as in a
    tf.function's trace), or the graph of a traced function (FuncGraph) or tensor."""

    def __init__(self):
        self._builder = _C.GraphBuilder()
        self._view = self._builder.view()
        _known[self._view.key()] = self

    @classmethod
    def _of(cls, view):
        g = cls.__new__(cls)
        g._builder, g._view = None, view
        return g

    @contextlib.contextmanager
    def as_default(self):
        if self._builder is None:
            raise ValueError("a traced function's graph is finished: build ops in a tf.Graph() of your own")
        self._builder.enter()
        try:
            with nested_graph():
                yield self
        finally:
            self._builder.exit()

    @property
    def building_function(self):
        return False

    def get_operations(self):
        return [Operation(self, n) for n in self._view.nodes()]

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        for n in self._view.nodes():
            if n[0] == name:
                return Operation(self, n)
        raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        if ":" not in name:
            raise ValueError(f"The name {name!r} looks like an (invalid) Operation name, not a Tensor name. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\".")
        node, index = _split_name(name)
        op = self.get_operation_by_name(node)
        if index >= len(op._node[3]):
            raise KeyError(f"The name {name!r} refers to a Tensor which does not exist. The operation {node!r} "
                           f"exists but only has {len(op._node[3])} outputs.")
        return op.outputs[index]

    def as_graph_def(self, from_version=None, add_shapes=False):
        return _GraphDef(self._view.nodes())

    def num_nodes(self):
        return self._view.num_nodes()

    def to_string(self):
        return self._view.to_string()

    def to_dot(self):
        return self._view.to_dot()

    __str__ = to_string

    def __eq__(self, other):
        return isinstance(other, Graph) and other._view.same(self._view)

    def __hash__(self):
        return hash(self._view.key())


class FuncGraph(Graph):
    """A traced function's graph: its parameters and captures (`inputs`), results (`outputs`)."""

    def _ops_named(self, names):
        return [self._tensor_named(n) for n in names]

    def _tensor_named(self, name):
        node, index = _split_name(name)
        return self.get_operation_by_name(node).outputs[index]

    @property
    def inputs(self):
        return self._ops_named(self._view.parameters() + self._view.captures())

    @property
    def outputs(self):
        return self._ops_named(self._view.results())

    @property
    def building_function(self):
        return True


# The Graph object of each engine graph Python holds, so `t.graph is g` as in TF (an entry lives as
# long as its Graph object, which keeps the engine graph, and so its key, alive).
_known = weakref.WeakValueDictionary()


def graph_of(view):
    g = _known.get(view.key())
    if g is None:
        g = _known[view.key()] = FuncGraph._of(view)
    return g


def _tensor_op(self):
    source = _C.symbolic_source(self)
    if source is None:
        raise AttributeError("Tensor.op is undefined when eager execution is enabled.")
    view, node, _ = source
    return graph_of(view).get_operation_by_name(node)


def _tensor_graph(self):
    source = _C.symbolic_source(self)
    if source is None:
        raise AttributeError("Tensor.graph is undefined when eager execution is enabled.")
    return graph_of(source[0])


def _value_index(self):
    source = _C.symbolic_source(self)
    if source is None:
        raise AttributeError("Tensor.value_index is undefined when eager execution is enabled.")
    return source[2]


_C.Tensor.op = property(_tensor_op)
_C.Tensor.graph = property(_tensor_graph)
_C.Tensor.value_index = property(_value_index)
