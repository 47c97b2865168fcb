"""BackupAndRestore: a fit interrupted after some epochs and run again goes on from the next epoch with the
weights and optimizer state it had, ending where an uninterrupted run ends; the backup goes once fit completes."""
import os

import numpy as np
import pytest

import kiln as tf

K = tf.keras
rng = np.random.default_rng(2)
X = rng.standard_normal((16, 3)).astype(np.float32)
Y = (X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3).astype(np.float32)


def make_model(weights=None):
    model = K.Sequential([K.Input((3,)), K.layers.Dense(4, activation="tanh"), K.layers.Dense(1)])
    model.compile(K.optimizers.Adam(0.05), "mse")
    if weights is not None:
        model.set_weights(weights)
    return model


class Interrupt(K.callbacks.Callback):
    def __init__(self, at_epoch):
        super().__init__()
        self.at_epoch = at_epoch

    def on_epoch_begin(self, epoch, logs=None):
        if epoch == self.at_epoch:
            raise RuntimeError("preempted")


def test_an_interrupted_fit_resumes_where_it_stopped(tmp_path):
    backup = str(tmp_path / "backup")
    start = make_model().get_weights()
    whole = make_model(start)
    whole.fit(X, Y, batch_size=4, epochs=4, shuffle=False, verbose=0)

    first = make_model(start)
    with pytest.raises(RuntimeError, match="preempted"):
        first.fit(X, Y, batch_size=4, epochs=4, shuffle=False, verbose=0,
                  callbacks=[K.callbacks.BackupAndRestore(backup), Interrupt(2)])
    assert os.path.isdir(backup)  # kept: the run did not end

    resumed = make_model()  # fresh weights and optimizer: everything comes from the backup
    history = resumed.fit(X, Y, batch_size=4, epochs=4, shuffle=False, verbose=0,
                          callbacks=[K.callbacks.BackupAndRestore(backup)])
    assert history.epoch == [2, 3]
    for got, want in zip(resumed.get_weights(), whole.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert not os.path.exists(backup)


def test_delete_checkpoint_false_keeps_the_backup_and_arguments_are_checked(tmp_path):
    backup = str(tmp_path / "kept")
    make_model().fit(X, Y, epochs=1, verbose=0, callbacks=[K.callbacks.BackupAndRestore(backup,
                                                                                        delete_checkpoint=False)])
    assert os.listdir(os.path.join(backup, "chief"))
    with pytest.raises(ValueError, match="Either `save_freq` or `save_before_preemption` must be set."):
        K.callbacks.BackupAndRestore(backup, save_freq=False)
    assert issubclass(K.callbacks.experimental.BackupAndRestore, K.callbacks.BackupAndRestore)
