"""TensorFlow's guide "Introduction to modules, layers, and models" (site/en/guide/intro_to_modules.ipynb),
its tf.Module, checkpoint and SavedModel cells run with `import kiln as tf`, asserting what the guide
prints and states."""
import os

import numpy as np

import kiln as tf


class SimpleModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.a_variable = tf.Variable(5.0, name="train_me")
        self.non_trainable_variable = tf.Variable(5.0, trainable=False, name="do_not_train_me")

    def __call__(self, x):
        return self.a_variable * x + self.non_trainable_variable


class Dense(tf.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
        self.b = tf.Variable(tf.zeros([out_features]), name="b")

    def __call__(self, x):
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class SequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


class FlexibleDenseModule(tf.Module):
    def __init__(self, out_features, name=None):
        super().__init__(name=name)
        self.is_built = False
        self.out_features = out_features

    def __call__(self, x):
        if not self.is_built:  # Create variables on first call.
            self.w = tf.Variable(tf.random.normal([x.shape[-1], self.out_features]), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")
            self.is_built = True
        y = tf.matmul(x, self.w) + self.b
        return tf.nn.relu(y)


class MySequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = FlexibleDenseModule(out_features=3)
        self.dense_2 = FlexibleDenseModule(out_features=2)

    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


class TracedSequentialModule(tf.Module):
    def __init__(self, name=None):
        super().__init__(name=name)
        self.dense_1 = Dense(in_features=3, out_features=3)
        self.dense_2 = Dense(in_features=3, out_features=2)

    @tf.function
    def __call__(self, x):
        x = self.dense_1(x)
        return self.dense_2(x)


def _reference(module, x):
    h = np.maximum(x @ module.dense_1.w.numpy() + module.dense_1.b.numpy(), 0)
    return np.maximum(h @ module.dense_2.w.numpy() + module.dense_2.b.numpy(), 0)


def test_modules_collect_variables_and_submodules():
    simple_module = SimpleModule(name="simple")
    assert simple_module(tf.constant(5.0)).numpy() == 30.0
    assert [v.name for v in simple_module.trainable_variables] == ["train_me:0"]
    assert [v.name for v in simple_module.variables] == ["train_me:0", "do_not_train_me:0"]

    my_model = SequentialModule(name="the_model")
    x = np.array([[2.0, 2.0, 2.0]], np.float32)
    out = my_model(tf.constant(x))
    assert out.shape == (1, 2)
    np.testing.assert_allclose(out.numpy(), _reference(my_model, x), rtol=1e-6)
    assert my_model.submodules == (my_model.dense_1, my_model.dense_2)
    assert [v.shape for v in my_model.variables] == [(3,), (3, 3), (2,), (3, 2)]  # TF's order: b, w by name
    # tf.Module has no repr of its own, as TF's: <__main__.Dense object at 0x...>.
    assert repr(my_model.dense_1).startswith(f"<{__name__}.Dense object at 0x")


def test_checkpoint_restores_variables_made_after_restore(tmp_path):
    my_model = MySequentialModule(name="the_model")
    x = tf.constant([[2.0, 2.0, 2.0]])
    expected = my_model(x).numpy()
    chkp_path = str(tmp_path / "my_checkpoint")
    checkpoint = tf.train.Checkpoint(model=my_model)
    checkpoint.write(chkp_path)
    assert tf.train.list_variables(chkp_path) == [
        ("_CHECKPOINTABLE_OBJECT_GRAPH", []),
        ("model/dense_1/b/.ATTRIBUTES/VARIABLE_VALUE", [3]),
        ("model/dense_1/w/.ATTRIBUTES/VARIABLE_VALUE", [3, 3]),
        ("model/dense_2/b/.ATTRIBUTES/VARIABLE_VALUE", [2]),
        ("model/dense_2/w/.ATTRIBUTES/VARIABLE_VALUE", [3, 2])]

    # The new model makes its variables on its first call, after restore(): "Should be the same
    # result as above" (TF restores a variable when it is assigned to a tracked attribute).
    new_model = MySequentialModule()
    new_checkpoint = tf.train.Checkpoint(model=new_model)
    new_checkpoint.restore(chkp_path)
    np.testing.assert_array_equal(new_model(x).numpy(), expected)
    np.testing.assert_array_equal(new_model.dense_1.w.numpy(), my_model.dense_1.w.numpy())


def test_traced_module_saved_and_loaded(tmp_path):
    my_model = TracedSequentialModule(name="the_model")
    # The guide calls with Python lists; a restored Kiln function matches tensors only (README's
    # difference table), so the traces here are made for tensors.
    x1 = tf.constant([[2.0, 2.0, 2.0]])
    x2 = tf.constant([[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]])
    out1, out2 = my_model(x1), my_model(x2)
    assert out1.shape == (1, 2) and out2.shape == (1, 2, 2)
    np.testing.assert_array_equal(out2.numpy()[0], np.repeat(out1.numpy(), 2, axis=0))

    path = str(tmp_path / "the_saved_model")
    tf.saved_model.save(my_model, path)
    assert os.path.isdir(path)  # Kiln's own layout inside (README: SavedModel files)
    new_model = tf.saved_model.load(path)
    assert not isinstance(new_model, TracedSequentialModule)  # "False": a restored object
    # The traces saved (a list of Python floats converts as the traced tensors did).
    np.testing.assert_array_equal(new_model(x1).numpy(), out1.numpy())
    np.testing.assert_array_equal(new_model(x2).numpy(), out2.numpy())


def test_keras_layers_with_build():
    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = tf.Variable(tf.random.normal([input_shape[-1], self.out_features]), name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    flexible_dense = FlexibleDense(out_features=3)
    assert flexible_dense.variables == []
    x = np.array([[2.0, 2.0, 2.0], [3.0, 3.0, 3.0]], np.float32)
    out = flexible_dense(tf.constant(x))
    np.testing.assert_allclose(out.numpy(), x @ flexible_dense.w.numpy(), rtol=1e-6)
    assert [v.name for v in flexible_dense.variables] == ["w:0", "b:0"]
    try:
        flexible_dense(tf.constant([[2.0, 2.0, 2.0, 2.0]]))
        raised = False
    except tf.errors.InvalidArgumentError:
        raised = True
    assert raised  # "Failed: ... Matrix size-incompatible"
