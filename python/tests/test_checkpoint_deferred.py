"""Deferred restoration (TF's checkpoint guide, "Delayed restorations"): values restored into
objects whose variables do not exist yet are assigned when the variables are made: an unbuilt
subclassed model, a Sequential without an input shape, a layer's tf.Variable attributes, and the
optimizer slots of those variables. assert_consumed fails until then and passes after."""
import numpy as np
import pytest

import kiln as tf

K = tf.keras


class TwoLayers(K.Model):
    def __init__(self):
        super().__init__()
        self.hidden = K.layers.Dense(4, activation="tanh")
        self.out = K.layers.Dense(1)

    def call(self, x):
        return self.out(self.hidden(x))


class Scale(K.layers.Layer):
    """A layer holding a plain tf.Variable made in build (not add_weight)."""

    def build(self, input_shape):
        self.factor = tf.Variable(np.ones([int(input_shape[-1])], np.float32), name="factor")

    def call(self, x):
        return x * self.factor


def data():
    rng = np.random.RandomState(3)
    return rng.rand(8, 3).astype("float32"), rng.rand(8, 1).astype("float32")


def train_step(model, optimizer, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return float(loss.numpy())


def trained(tmp_path):
    x, y = data()
    model, optimizer = TwoLayers(), K.optimizers.Adam(0.05)
    for _ in range(3):
        train_step(model, optimizer, x, y)
    path = tf.train.Checkpoint(model=model, optimizer=optimizer).save(str(tmp_path / "ckpt"))
    return model, optimizer, path


def test_unbuilt_subclassed_model_and_slots_restore_when_built(tmp_path):
    x, y = data()
    model, optimizer, path = trained(tmp_path)
    fresh, fresh_optimizer = TwoLayers(), K.optimizers.Adam(0.05)
    assert not fresh.weights
    status = tf.train.Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(path)
    status.assert_existing_objects_matched()  # the optimizer's step and rate exist and were restored
    assert int(fresh_optimizer.iterations.numpy()) == 3
    with pytest.raises(AssertionError, match="Unresolved object in checkpoint.*model/hidden/kernel"):
        status.assert_consumed()
    fresh(x)  # builds the layers: their variables take the saved values as they are made
    status.assert_consumed()
    for saved, restored in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(restored.numpy(), saved.numpy())
    for variable, fresh_variable in zip(model.trainable_variables, fresh.trainable_variables):
        for slot in ("m", "v"):
            np.testing.assert_array_equal(fresh_optimizer.get_slot(fresh_variable, slot).numpy(),
                                          optimizer.get_slot(variable, slot).numpy())
    # The same next step from the same state: Adam's moments and step count came back too.
    assert train_step(fresh, fresh_optimizer, x, y) == train_step(model, optimizer, x, y)
    for a, b in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_built_inside_fit_and_checkpoint_object_dropped(tmp_path):
    x, y = data()
    model, _, path = trained(tmp_path)
    fresh = TwoLayers()
    tf.train.Checkpoint(model=fresh).restore(path).expect_partial()  # the Checkpoint object is not kept
    fresh.compile(K.optimizers.SGD(0.0), "mse")
    fresh.fit(x, y, epochs=1, verbose=0)  # built while fit's step traces; lr 0 keeps the values
    for saved, restored in zip(model.weights, fresh.weights):
        np.testing.assert_array_equal(restored.numpy(), saved.numpy())


def test_sequential_without_input_shape_and_variable_attributes(tmp_path):
    x, _ = data()
    model = K.Sequential([Scale(), K.layers.Dense(2)])
    model(x)
    model.layers[0].factor.assign(np.array([2.0, 3.0, 4.0], np.float32))
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "seq"))
    fresh = K.Sequential([Scale(), K.layers.Dense(2)])
    status = tf.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(AssertionError, match="Unresolved object"):
        status.assert_consumed()
    np.testing.assert_allclose(fresh(x).numpy(), model(x).numpy(), rtol=1e-6)
    status.assert_consumed()
    assert fresh.layers[0].factor.numpy().tolist() == [2.0, 3.0, 4.0]


def test_mismatched_shape_fails_when_the_variable_is_made(tmp_path):
    x, _ = data()
    model = TwoLayers()
    model(x)
    path = tf.train.Checkpoint(model=model).write(str(tmp_path / "shape"))
    fresh = TwoLayers()
    tf.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(ValueError, match=r"incompatible tensor with shape \[3, 4\].*shape \[5, 4\]"):
        fresh(np.zeros([2, 5], np.float32))


def test_variables_that_exist_are_restored_at_once(tmp_path):
    v = tf.Variable([1.0, 2.0])
    path = tf.train.Checkpoint(v=v).write(str(tmp_path / "now"))
    w = tf.Variable([0.0, 0.0])
    tf.train.Checkpoint(v=w).restore(path).assert_consumed()
    assert w.numpy().tolist() == [1.0, 2.0]
