"""model.summary() prints Keras 2.15's table (keras/utils/layer_utils.py print_summary), checked against
documented outputs and Keras' layout rules."""
import pytest

import kiln as tf

K = tf.keras


def summary_lines(model, **kwargs):
    lines = []
    model.summary(print_fn=lines.append, **kwargs)
    return lines


def test_the_documented_single_dense_table():
    # A public TF 2.15 program's printed summary (trailing spaces stripped there):
    # Sequential([Dense(units=1, input_dim=2, activation='sigmoid')]).
    K.backend.clear_session()
    model = K.Sequential([K.layers.Dense(units=1, input_dim=2, activation="sigmoid")])
    assert [line.rstrip() for line in summary_lines(model)] == [
        'Model: "sequential"',
        "_________________________________________________________________",
        " Layer (type)                Output Shape              Param #",
        "=================================================================",
        " dense (Dense)               (None, 1)                 3",
        "",
        "=================================================================",
        "Total params: 3 (12.00 Byte)",
        "Trainable params: 3 (12.00 Byte)",
        "Non-trainable params: 0 (0.00 Byte)",
        "_________________________________________________________________"]
    # Every row is padded to the line length, as Keras pads it.
    assert {len(line) for line in summary_lines(model)[2:6]} == {65}


def test_long_names_wrap_and_memory_units():
    inputs = K.Input((28, 28, 1), name="digits")
    x = K.layers.MaxPooling2D(name="max_pooling2d_with_a_long_name")(inputs)
    x = K.layers.Flatten()(x)
    x = K.layers.Dense(2000)(x)
    model = K.Model(inputs, x, name="wide")
    lines = summary_lines(model)
    assert lines[4] == " digits (InputLayer)         [(None, 28, 28, 1)]       0         "
    assert lines[6] == " max_pooling2d_with_a_long_  (None, 14, 14, 1)         0         "
    assert lines[7] == " name (MaxPooling2D)                                             "
    assert "Total params: 394000 (1.50 MB)" in lines


def test_functional_models_that_branch_get_connections():
    a, b = K.Input((4,), name="a"), K.Input((3,), name="b")
    shared = K.layers.Dense(2, name="shared")
    x = K.layers.concatenate([shared(a), K.layers.Dense(2, name="other")(b)], name="join")
    model = K.Model([a, b], K.layers.Dense(1, name="out")(x), name="branchy")
    lines = summary_lines(model)
    assert len(lines[1]) == 98
    assert lines[2].rstrip() == " Layer (type)                Output Shape                 Param #   Connected to"
    assert " join (Concatenate)          (None, 4)                    0         ['shared[0][0]',              " in lines
    assert "                                                                     'other[0][0]']               " in lines
    assert " a (InputLayer)              [(None, 4)]                  0         []                            " in lines


def test_trainable_column_range_and_nested_models():
    inner = K.Sequential([K.layers.Dense(3, input_shape=(2,), name="inner_dense")], name="inner")
    model = K.Sequential([inner, K.layers.Dense(1, name="head")], name="outer")
    inner.trainable = False
    lines = summary_lines(model, show_trainable=True)
    assert len(lines[1]) == 76 and lines[2].endswith("Trainable  ")
    assert lines[4].startswith(" inner (Sequential)          (None, 3)                 9         N")
    assert "Trainable params: 4 (16.00 Byte)" in lines and "Non-trainable params: 9 (36.00 Byte)" in lines
    only_head = summary_lines(model, layer_range=["head", "head"])
    assert sum(line.startswith(" head (Dense)") for line in only_head) == 1 and not any("inner" in l for l in only_head)
    nested = summary_lines(model, expand_nested=True)
    assert "|" + "\u00af" * 63 + "|" in nested
    assert any(line.startswith("| inner_dense (Dense)") and line.endswith("|") and len(line) == 65 for line in nested)
    with pytest.raises(ValueError, match="layer_range must be a list or tuple of length 2"):
        model.summary(layer_range=["head"])
    with pytest.raises(ValueError, match="do not match the layer names"):
        model.summary(layer_range=["nothing", "head"])


def test_subclassed_models_show_multiple_and_unused_layers():
    class Net(K.Model):
        def __init__(self):
            super().__init__(name="net")
            self.used = K.layers.Dense(2)
            self.unused = K.layers.Dense(5)

        def call(self, x):
            return self.used(x)

    net = Net()
    net(tf.ones((1, 3)))
    lines = summary_lines(net)
    assert lines[4].rstrip().endswith("multiple                  8")
    assert lines[6].rstrip().endswith("multiple                  0 (unused)")
    with pytest.raises(ValueError, match="This model has not yet been built"):
        Net().summary()
