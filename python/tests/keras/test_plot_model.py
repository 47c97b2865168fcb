"""keras.utils.model_to_dot / plot_model (pydot and graphviz): Keras 2.15's record labels, one edge per
connection of the functional graph, Sequential models with their Input, a subclassed model as one node,
layer_range, the files graphviz writes, and Keras' errors."""
import pytest

import kiln as tf

pydot = pytest.importorskip("pydot")
K = tf.keras
L = K.layers


def branching_model():
    a = K.Input((3,), name="a")
    b = K.Input((2,), name="b")
    h = L.Dense(4, activation="relu", name="h")(a)
    out = L.Dense(1, name="out")(L.Concatenate(name="cat")([h, b]))
    return K.Model([a, b], out)


def labels(dot):
    return {node.get_label().strip('"') for node in dot.get_nodes() if node.get_name() not in ("node", "graph")}


def edges(dot, model):
    names = {str(id(layer)): layer.name for layer in model.layers}
    names.update({str(id(model._graph_inputs[0]._node.layer)): "input"} if getattr(model, "_graph_inputs", None)
                 else {})
    return {(names[e.get_source()], names[e.get_destination()]) for e in dot.get_edges()}


def test_functional_graph_nodes_labels_and_edges():
    model = branching_model()
    dot = K.utils.model_to_dot(model)
    assert labels(dot) == {"a|InputLayer", "b|InputLayer", "h|Dense", "cat|Concatenate", "out|Dense"}
    assert edges(dot, model) == {("a", "h"), ("h", "cat"), ("b", "cat"), ("cat", "out")}
    assert dot.get("rankdir") == "TB" and dot.get("dpi") == 96
    detailed = K.utils.model_to_dot(model, show_shapes=True, show_dtype=True, show_layer_activations=True,
                                    show_trainable=True)
    assert "T|{h|{Dense|relu}|float32}|{input:|output:}|{{(None, 3)}|{(None, 4)}}" in labels(detailed)
    assert "T|{cat|Concatenate|float32}|{input:|output:}|{{[(None, 4), (None, 2)]}|{(None, 6)}}" in \
        labels(detailed)
    ranged = K.utils.model_to_dot(model, layer_range=["h", "cat"])
    assert {label.split("|")[0] for label in labels(ranged)} <= {"h", "b", "cat"}
    with pytest.raises(ValueError, match="layer_range should contain string type only"):
        K.utils.model_to_dot(model, layer_range=[0, 1])


def test_sequential_subclassed_and_wrapped():
    seq = K.Sequential([K.Input((5, 4), name="x"), L.Bidirectional(L.LSTM(3, name="rnn"), name="bi"),
                        L.Dense(2, name="d")])
    dot = K.utils.model_to_dot(seq, rankdir="LR")
    assert labels(dot) == {"x|InputLayer", "bi(rnn)|Bidirectional(LSTM)", "d|Dense"}
    assert edges(dot, seq) == {("input", "bi"), ("bi", "d")} and dot.get("rankdir") == "LR"

    class Sub(K.Model):
        def __init__(self):
            super().__init__(name="sub")
            self.d = L.Dense(1)

        def call(self, x):
            return self.d(x)

    sub = Sub()
    sub(tf.ones((1, 2)))
    assert labels(K.utils.model_to_dot(sub)) == {"sub"}
    with pytest.raises(ValueError, match="This model has not yet been built"):
        K.utils.plot_model(K.Sequential([L.Dense(1)]))


def test_plot_model_writes_the_format_its_name_says(tmp_path):
    model = branching_model()
    try:  # Keras returns an IPython Image of the file where IPython is importable
        from IPython import display
    except ImportError:
        display = None

    def plot(path, **kwargs):
        try:
            return K.utils.plot_model(model, path, **kwargs)
        except ValueError as e:  # IPython's Image refuses svg and dot after the file is written, as in Keras 2.15
            assert display and "Cannot embed the" in str(e)

    shown = plot(tmp_path / "m.png", show_shapes=True)
    if display:
        assert isinstance(shown, display.Image) and shown.filename == str(tmp_path / "m.png")
    else:
        assert shown is None
    assert (tmp_path / "m.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    plot(str(tmp_path / "m.svg"))
    assert "<svg" in (tmp_path / "m.svg").read_text()
    plot(str(tmp_path / "m.dot"))
    assert "cat|Concatenate" in (tmp_path / "m.dot").read_text()
