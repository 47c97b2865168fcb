"""Small Keras and TF rules the keras.io guides rely on: TF's DataType numbers as dtypes (tf.zeros(1, 1)),
fit of a model with nothing to train, apply_gradients of nothing, add_variable, a layer's weights trainable first,
"Functional" in summaries, layer names that are not identifiers."""
import numpy as np

import kiln as tf
from kiln import keras


def test_tf_datatype_numbers_are_dtypes():
    assert tf.zeros(1, 1).dtype == tf.float32 and tf.zeros(1, 1).shape == (1,)
    assert (tf.as_dtype(3), tf.as_dtype(9), tf.as_dtype(7)) == (tf.int32, tf.int64, tf.string)


def test_fit_with_nothing_to_train():
    class Penalty(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(tf.reduce_mean(inputs))
            return inputs

    inputs = keras.Input(shape=(3,))
    model = keras.Model(inputs, Penalty()(inputs))
    model.compile(optimizer="adam")
    history = model.fit(np.ones((2, 3), "float32"), np.ones((2, 3), "float32"), verbose=0)
    assert history.history["loss"] == [1.0]
    opt = keras.optimizers.SGD()
    assert int(opt.apply_gradients([])) == 0


def test_layer_weights_put_trainable_first():
    class Nested(keras.layers.Layer):
        def __init__(self):
            super().__init__(name="nested")
            self.dense_1 = keras.layers.Dense(2, name="dense_1")
            self.dense_2 = keras.layers.Dense(2, name="dense_2")
            self.extra = self.add_variable("extra", shape=(1,))

        def call(self, inputs):
            return self.dense_2(self.dense_1(inputs))

    model = keras.Sequential([keras.Input((2,)), Nested()])
    nested = model.get_layer("nested")
    before = [v.name for v in model.weights]
    nested.dense_1.trainable = False
    after = [v.name for v in model.weights]
    assert before[0].endswith("extra:0") and len(before) == 5
    assert after[-2:] == before[1:3] and after[:3] == [before[0]] + before[3:]


def test_summary_names_functional_models_and_odd_layer_names():
    inputs = keras.Input((2,))
    base = keras.Model(inputs, keras.layers.Dense(3)(inputs), name="3_layer_mlp")
    model = keras.Sequential([base, keras.layers.Dense(1)])
    lines = []
    model.summary(print_fn=lines.append)
    assert any(line.startswith(" 3_layer_mlp (Functional)") for line in lines)


def test_train_step_gets_a_dataset_element_as_it_is():
    seen = []

    class M(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def train_step(self, data):
            seen.append(type(data).__name__)
            return {"total": tf.reduce_sum(self.dense(data))}

    model = M()
    model.compile()
    history = model.fit(tf.data.Dataset.from_tensor_slices(np.ones((8, 3), "float32")).batch(4), verbose=0)
    assert seen[0] in ("Tensor", "SymbolicTensor") and list(history.history) == ["total"]


def test_a_built_sequential_model_has_a_functional_graph():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Dense(4)])
    assert [t.shape.as_list() for t in model.inputs] == [[None, 3]] and model.outputs[0].shape.as_list() == [None, 4]
    model.pop()
    model.add(keras.layers.Dense(5))
    assert [len(layer.inbound_nodes) for layer in model.layers] == [1, 1]  # pop() dropped its calls
    extractor = keras.Model(model.inputs, [layer.output for layer in model.layers])
    x = np.ones((2, 3), "float32")
    first, second = extractor(x)
    np.testing.assert_allclose(second.numpy(), model(x).numpy(), rtol=1e-6)
    assert first.shape == (2, 2)
    deferred = keras.Sequential([keras.layers.Dense(2)])
    assert deferred.inputs is None
    deferred(x)  # built by its first call: the graph's Input is named after the first layer
    assert deferred.inputs[0].name.endswith("_input") and deferred.layers[0].output.shape.as_list() == [None, 2]
