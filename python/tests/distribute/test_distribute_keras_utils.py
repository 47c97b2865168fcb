"""Keras 2.15's distribution helpers: SidecarEvaluator over a trainer's checkpoints (ModelCheckpoint weights and a
custom loop's tf.train.Checkpoint), SidecarEvaluatorModelExport keeping the best, StepsPerExecutionTuner's rule."""
import os

import numpy as np

import kiln as tf
from kiln.keras import _steps_per_execution_tuner as tuner_module
from toy_classifier import toy_data, toy_model


def _data():
    return toy_data(n=40, features=3)


def _model():
    return toy_model(features=3, hidden=4, learning_rate=0.05)


class _Record(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_test_end(self, logs=None):
        self.ends.append(dict(logs))


def test_sidecar_evaluator_on_model_checkpoint_weights(tmp_path):
    x, y = _data()
    trainer = _model()
    ckpt = str(tmp_path / "ckpt-{epoch}")
    trainer.fit(x, y, batch_size=8, epochs=2, verbose=0,
                callbacks=[tf.keras.callbacks.ModelCheckpoint(ckpt, save_weights_only=True)])
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-2")
    expected = trainer.evaluate(x, y, verbose=0, return_dict=True)

    evaluator_model = _model()
    record = _Record()
    export = tf.keras.callbacks.SidecarEvaluatorModelExport(
        export_filepath=str(tmp_path / "best" / "best-model-{epoch:04d}"), checkpoint_filepath=ckpt,
        save_weights_only=True, monitor="loss", mode="min")
    tf.keras.utils.SidecarEvaluator(evaluator_model, tf.data.Dataset.from_tensor_slices((x, y)).batch(8),
                                    checkpoint_dir=str(tmp_path), max_evaluations=2,
                                    callbacks=[record, export]).start()
    # The newest checkpoint (epoch 2) is the one evaluated; its figures are the trainer's.
    assert len(record.ends) == 1
    np.testing.assert_allclose(record.ends[0]["loss"], expected["loss"], rtol=1e-6)
    np.testing.assert_allclose(record.ends[0]["accuracy"], expected["accuracy"])
    assert export.export_index == 1  # the training epoch of ckpt-2, 0-based
    assert os.path.exists(tmp_path / "best" / "best-model-0002.index")


def test_sidecar_evaluator_on_a_custom_loop_checkpoint(tmp_path):
    x, y = _data()
    model = _model()
    optimizer = tf.keras.optimizers.SGD(0.1)
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(model=model, optimizer=optimizer), str(tmp_path),
                                         max_to_keep=3)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    manager.save()
    evaluator_model = _model()
    record = _Record()
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(40)
    tf.keras.utils.SidecarEvaluator(evaluator_model, data, checkpoint_dir=str(tmp_path), max_evaluations=1,
                                    callbacks=[record]).start()
    np.testing.assert_allclose(record.ends[0]["loss"], float(loss_fn(y, model(x))), rtol=1e-5)
    for a, b in zip(evaluator_model.get_weights(), model.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_steps_per_execution_tuner_rule(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(tuner_module.time, "time", lambda: clock[0])
    optimizer = tf.keras.optimizers.SGD()
    optimizer.build([tf.Variable(1.0)])
    spe = tf.Variable(4, dtype=tf.int64)
    tuner = tf.keras.utils.StepsPerExecutionTuner(optimizer, spe, interval=0.01, change_spe_interval=2)
    tuner._begin_tuning()

    def measure(steps, seconds):
        optimizer.iterations.assign_add(steps)
        clock[0] += seconds
        tuner._measure_and_tune()

    measure(10, 1.0)   # 10 steps/s, first measurement: no change yet
    measure(10, 1.0)   # second: average 10 > 1.1 * 0 -> repeat the last action (add): 4 * 1.5
    assert int(spe.numpy()) == 6
    measure(30, 1.0)
    measure(30, 1.0)   # average 20 > 1.1 * 10 -> again: 6 * 1.5
    assert int(spe.numpy()) == 9
    measure(2, 1.0)
    measure(2, 1.0)    # the window (2 measurements) averages 2 < 0.9 * 30 -> the opposite: 9 * 0.5, rounded
    assert int(spe.numpy()) == 4 and not tuner.spe_tune_last_action_add
    tuner.steps_per_execution = 7
    assert int(spe.numpy()) == 7 and tuner.init_spe == 7


def test_steps_per_execution_tuner_thread():
    optimizer = tf.keras.optimizers.SGD()
    optimizer.build([tf.Variable(1.0)])
    spe = tf.Variable(1, dtype=tf.int64)
    tuner = tf.keras.utils.StepsPerExecutionTuner(optimizer, spe, interval=0.01)
    thread = tuner.start()
    assert tuner.start() is thread and thread.is_alive()
    tuner.stop()
    thread.join(5)
    assert not thread.is_alive()
