"""kiln.keras.callbacks (tf.keras.callbacks, Keras 2.15): the Callback protocol and its built-ins.

fit / evaluate / predict call every hook with a `logs` dict (empty where Keras passes none), after
setting `self.model` and `self.params` ({"verbose", "epochs", "steps"}). Batch hooks get the running
results of the epoch so far; on_epoch_end gets the epoch's results plus the "val_" ones. Callbacks may
add entries to the epoch's logs (ReduceLROnPlateau's "lr"): History, which runs last, records them."""
import csv
import logging
import os

import numpy as np

from ._progbar import Progbar

_log = logging.getLogger("kiln.keras")


class Callback:
    """Hooks fit/evaluate/predict call; `self.model` and `self.params` are set before the first hook.
    on_train_batch_begin/end call the older on_batch_begin/end by default, as Keras'."""

    def __init__(self):
        self.validation_data = None
        self.model = None
        self.params = {}
        self._supports_tf_logs = False

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_batch_begin(self, batch, logs=None): pass
    def on_batch_end(self, batch, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass

    def on_train_batch_begin(self, batch, logs=None):
        self.on_batch_begin(batch, logs=logs)

    def on_train_batch_end(self, batch, logs=None):
        self.on_batch_end(batch, logs=logs)

    def on_test_batch_begin(self, batch, logs=None): pass
    def on_test_batch_end(self, batch, logs=None): pass
    def on_predict_batch_begin(self, batch, logs=None): pass
    def on_predict_batch_end(self, batch, logs=None): pass
    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_test_begin(self, logs=None): pass
    def on_test_end(self, logs=None): pass
    def on_predict_begin(self, logs=None): pass
    def on_predict_end(self, logs=None): pass


class CallbackList:
    """The callbacks of one fit/evaluate/predict call, each hook called on each in order with the same logs
    dict. add_history appends a History (last, so it sees what the others add to the logs); add_progbar puts a
    ProgbarLogger first unless one was given."""

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None, **params):
        # Keras flattens `callbacks`: one callback alone is a list of one (the audio tutorial passes one).
        self.callbacks = [] if not callbacks else list(callbacks) if isinstance(callbacks, (list, tuple)) \
            else [callbacks]
        for cb in self.callbacks:
            if not isinstance(cb, Callback) and not _duck_callback(cb):
                raise TypeError(f"Callbacks must be instances of kiln.keras.callbacks.Callback; got {cb!r}")
        self._history = None
        self._progbar = next((cb for cb in self.callbacks if isinstance(cb, ProgbarLogger)), None)
        if add_progbar and self._progbar is None:
            self._progbar = ProgbarLogger(count_mode="steps")
            self.callbacks.insert(0, self._progbar)
        if add_history:
            self._history = next((cb for cb in self.callbacks if isinstance(cb, History)), None)
            if self._history is None:
                self._history = History()
                self.callbacks.append(self._history)
        self.model = None
        self.params = {}
        if model is not None:
            self.set_model(model)
        if params:
            self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)

    def set_params(self, params):
        self.params = params
        for cb in self.callbacks:
            cb.set_params(params)

    def set_model(self, model):
        self.model = model
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    def __iter__(self):
        return iter(self.callbacks)

    def _call(self, hook, *args):
        logs = args[-1]
        for cb in self.callbacks:
            getattr(cb, hook)(*args[:-1], logs)
        return logs

    def on_batch_begin(self, batch, logs=None): self._call("on_train_batch_begin", batch, _logs(logs))
    def on_batch_end(self, batch, logs=None): self._call("on_train_batch_end", batch, _logs(logs))
    def on_epoch_begin(self, epoch, logs=None): self._call("on_epoch_begin", epoch, _logs(logs))
    def on_epoch_end(self, epoch, logs=None): self._call("on_epoch_end", epoch, _logs(logs))
    def on_train_batch_begin(self, batch, logs=None): self._call("on_train_batch_begin", batch, _logs(logs))
    def on_train_batch_end(self, batch, logs=None): self._call("on_train_batch_end", batch, _logs(logs))
    def on_test_batch_begin(self, batch, logs=None): self._call("on_test_batch_begin", batch, _logs(logs))
    def on_test_batch_end(self, batch, logs=None): self._call("on_test_batch_end", batch, _logs(logs))
    def on_predict_batch_begin(self, batch, logs=None): self._call("on_predict_batch_begin", batch, _logs(logs))
    def on_predict_batch_end(self, batch, logs=None): self._call("on_predict_batch_end", batch, _logs(logs))
    def on_train_begin(self, logs=None): self._call("on_train_begin", _logs(logs))
    def on_train_end(self, logs=None): self._call("on_train_end", _logs(logs))
    def on_test_begin(self, logs=None): self._call("on_test_begin", _logs(logs))
    def on_test_end(self, logs=None): self._call("on_test_end", _logs(logs))
    def on_predict_begin(self, logs=None): self._call("on_predict_begin", _logs(logs))
    def on_predict_end(self, logs=None): self._call("on_predict_end", _logs(logs))

    # fit tells the progress bar what the logs do not carry: each batch's size (count_mode="samples").
    def _note_batch_samples(self, samples):
        if self._progbar is not None:
            self._progbar._batch_samples = samples



def _duck_callback(cb):
    return all(callable(getattr(cb, hook, None)) for hook in ("set_model", "set_params", "on_epoch_end"))


def _logs(logs):
    return {} if logs is None else logs


# ---- BaseLogger, History, ProgbarLogger, LambdaCallback ------------------------------------------------

class BaseLogger(Callback):
    """Keras 1's epoch averages: each batch's figures weighted by its "size" log (stateful_metrics kept as last
    seen), written into the epoch's logs for the metrics params["metrics"] names. TF 2's fit logs neither, so
    there it changes nothing, as in Keras 2."""

    def __init__(self, stateful_metrics=None):
        super().__init__()
        self.stateful_metrics = set(stateful_metrics or [])

    def on_epoch_begin(self, epoch, logs=None):
        self.seen = 0
        self.totals = {}

    def on_batch_end(self, batch, logs=None):
        logs = logs or {}
        size = logs.get("size", 0)
        self.seen += size * logs.get("num_steps", 1)
        for k, v in logs.items():
            if k in self.stateful_metrics:
                self.totals[k] = v
            else:
                self.totals[k] = self.totals.get(k, 0) + v * size

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        for k in (self.params or {}).get("metrics", []):
            if k in self.totals:
                logs[k] = self.totals[k] if k in self.stateful_metrics else self.totals[k] / self.seen


class History(Callback):
    """Records each epoch's logs: `history` maps each figure ("loss", "accuracy", "val_loss", "lr", ...) to its
    values per epoch; `epoch` lists the epoch numbers. fit returns it (it is also `model.history`)."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for k, v in (logs or {}).items():
            self.history.setdefault(k, []).append(v)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints fit / evaluate / predict progress with Keras' Progbar. count_mode "steps" (what fit adds)
    counts batches; "samples" counts the samples of each batch. "Epoch i/n" heads each epoch when there
    are several; verbose 1 redraws the bar per batch, verbose 2 prints each epoch's final line only.
    Inside fit, validation is silent and its figures join the epoch's final line."""

    def __init__(self, count_mode="samples", stateful_metrics=None):
        super().__init__()
        if count_mode == "samples":
            self.use_steps = False
        elif count_mode == "steps":
            self.use_steps = True
        else:
            raise ValueError(f'Unknown `count_mode`: {count_mode}. Expected values are ["samples", "steps"]')
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics else set()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._batch_samples = 0
        self._called_in_fit = False

    def set_params(self, params):
        super().set_params(params)
        self.verbose = params.get("verbose", 1)
        self.epochs = params.get("epochs", 1)
        key = "steps" if self.use_steps else "samples"
        self.target = params.get(key)  # None: learned at the end of the first epoch

    def _wants_batch_logs(self):
        return self.verbose == 1

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset()

    def on_predict_begin(self, logs=None):
        self._reset()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset()
        if self.verbose and self.epochs > 1:
            print(f"Epoch {epoch + 1}/{self.epochs}", flush=True)

    def on_train_batch_end(self, batch, logs=None):
        self._batch_update(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._batch_update(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._batch_update(batch, None)  # the predictions are not figures

    def on_epoch_end(self, epoch, logs=None):
        self._finalize(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize(logs)

    def on_predict_end(self, logs=None):
        self._finalize(logs)

    def _reset(self):
        self.seen = 0
        self.progbar = None
        self._bar()

    def _bar(self):
        # The model's metrics (loss included) are running results already: shown as given.
        names = set(self.stateful_metrics)
        try:
            names |= {m.name for m in self.model.metrics}
        except (AttributeError, TypeError):
            pass
        if self.progbar is None:
            self.progbar = Progbar(self.target, verbose=self.verbose, stateful_metrics=names,
                                   unit_name="step" if self.use_steps else "sample")
        self.progbar._update_stateful_metrics(names)
        return self.progbar

    def _batch_update(self, batch, logs):
        bar = self._bar()
        self.seen = batch + 1 if self.use_steps else self.seen + self._batch_samples
        if self.verbose == 1:
            bar.update(self.seen, list(_floats(logs).items()), finalize=False)

    def _finalize(self, logs):
        bar = self._bar()
        if self.target is None:
            self.target = bar.target = self.seen
        bar.update(self.target, list(_floats(logs).items()), finalize=True)


def _floats(logs):
    return {k: float(v) for k, v in (logs or {}).items() if np.ndim(v) == 0}


class LambdaCallback(Callback):
    """A callback from functions: on_epoch_begin/end(epoch, logs), on_batch_begin/end(batch, logs),
    on_train_begin/end(logs), and any other hook by its name as a keyword."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_batch_begin=None, on_batch_end=None,
                 on_train_begin=None, on_train_end=None, **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        for name, fn in dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end, on_batch_begin=on_batch_begin,
                             on_batch_end=on_batch_end, on_train_begin=on_train_begin,
                             on_train_end=on_train_end).items():
            setattr(self, name, fn if fn is not None else (lambda *a, **k: None))


# ---- monitoring a figure ------------------------------------------------------------------------------

def _monitor_is_max(monitor):
    """Keras' mode='auto' for EarlyStopping: accuracies and AUCs grow, everything else shrinks."""
    return monitor.endswith("acc") or monitor.endswith("accuracy") or monitor.endswith("auc")


def _check_mode(mode, name):
    if mode not in ("auto", "min", "max"):
        _log.warning("%s mode %s is unknown, fallback to auto mode.", name, mode)
        return "auto"
    return mode


def _get_lr(model):
    opt = model.optimizer
    if opt is None or not hasattr(opt, "learning_rate"):
        raise ValueError('Optimizer must have a "learning_rate" attribute.')
    lr = opt.learning_rate
    if hasattr(lr, "numpy"):
        lr = lr.numpy()
    elif callable(lr):
        lr = lr(opt.iterations)
        lr = lr.numpy() if hasattr(lr, "numpy") else lr
    return float(np.asarray(lr))


def _set_lr(model, value):
    model.optimizer.learning_rate = float(np.asarray(value))


class EarlyStopping(Callback):
    """Stops training when `monitor` has not improved by more than `min_delta` for `patience` epochs (Keras 2.15:
    never at the first epoch; an improvement that misses `baseline` does not reset the wait)."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto", baseline=None,
                 restore_best_weights=False, start_from_epoch=0):
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.min_delta = abs(min_delta)
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.start_from_epoch = start_from_epoch
        mode = _check_mode(mode, "EarlyStopping")
        self.mode = mode
        grows = mode == "max" or (mode == "auto" and _monitor_is_max(monitor))
        self.monitor_op = np.greater if grows else np.less
        if not grows:
            self.min_delta *= -1

    def on_train_begin(self, logs=None):
        self.wait = 0
        self.stopped_epoch = 0
        self.best = np.inf if self.monitor_op == np.less else -np.inf
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            self.best_weights = self.model.get_weights()
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights and self.best_weights is not None:
                if self.verbose > 0:
                    print("Restoring model weights from the end of the best epoch: " f"{self.best_epoch + 1}.")
                self.model.set_weights(self.best_weights)

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            print(f"Epoch {self.stopped_epoch + 1}: early stopping")

    def get_monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            _log.warning("Early stopping conditioned on metric `%s` which is not available. Available metrics are: "
                         "%s", self.monitor, ",".join(list(logs.keys())))
        return value

    def _is_improvement(self, monitor_value, reference_value):
        return self.monitor_op(monitor_value - self.min_delta, reference_value)


class ModelCheckpoint(Callback):
    """Saves the model (or its weights) every epoch, or every `save_freq` batches; the path is formatted with
    `epoch` (1-based) and the logs ("w.{epoch:02d}-{val_loss:.2f}.weights.h5"). save_best_only keeps a save only
    when `monitor` improves (mode='auto': names with "acc" grow)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False, save_weights_only=False,
                 mode="auto", save_freq="epoch", options=None, initial_value_threshold=None, **kwargs):
        super().__init__()
        self.monitor = monitor
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self.epochs_since_last_save = 0
        self._batches_seen_since_last_saving = 0
        self._current_epoch = 0
        self.best = initial_value_threshold
        mode = _check_mode(mode, "ModelCheckpoint")
        grows = mode == "max" or (mode == "auto" and ("acc" in monitor or monitor.startswith("fmeasure")))
        self.monitor_op = np.greater if grows else np.less
        if self.best is None:
            self.best = -np.inf if grows else np.inf
        if save_freq != "epoch" and not isinstance(save_freq, int):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are 'epoch' or integer values")

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        if isinstance(self.save_freq, int):
            self._batches_seen_since_last_saving += 1
            if self._batches_seen_since_last_saving >= self.save_freq:
                self._batches_seen_since_last_saving = 0
                self._save_model(self._current_epoch, batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self.epochs_since_last_save += 1
        if self.save_freq == "epoch":
            self._save_model(epoch, None, logs)

    def _get_file_path(self, epoch, batch, logs):
        try:
            if batch is None or "batch" in (logs or {}):
                return self.filepath.format(epoch=epoch + 1, **(logs or {}))
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **(logs or {}))
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". Reason: {e}') from e

    def _save_model(self, epoch, batch, logs):
        logs = logs or {}
        self.epochs_since_last_save = 0
        filepath = self._get_file_path(epoch, batch, logs)
        directory = os.path.dirname(filepath)
        if directory:
            os.makedirs(directory, exist_ok=True)
        if self.save_best_only:
            current = logs.get(self.monitor)
            if current is None:
                _log.warning("Can save best model only with %s available, skipping.", self.monitor)
                return
            if not self.monitor_op(current, self.best):
                if self.verbose > 0:
                    print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {self.best:.5f}")
                return
            if self.verbose > 0:
                print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {self.best:.5f} to {current:.5f}, saving "
                      f"model to {filepath}")
            self.best = current
        elif self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
        if self.save_weights_only:
            self.model.save_weights(filepath, overwrite=True)
        else:
            self.model.save(filepath, overwrite=True)


class CSVLogger(Callback):
    """Writes each epoch's logs as a CSV row: "epoch" then the figures in sorted order (the header from the first
    epoch). append=True continues an existing file without a second header."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename) as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        # csv's excel dialect ends rows with "\r\n", as Keras' files do.
        self.csv_file = open(self.filename, mode, newline="")

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}

        def handle_value(k):
            is_zero_dim_ndarray = isinstance(k, np.ndarray) and k.ndim == 0
            if isinstance(k, str):
                return k
            if hasattr(k, "__iter__") and not is_zero_dim_ndarray:
                return f"\"[{', '.join(map(str, k))}]\""
            return k

        if self.keys is None:
            self.keys = sorted(logs.keys())
        if self.model is not None and self.model.stop_training:
            # Training stopped within the epoch: the figures it lacks are written as NA.
            logs = {k: logs.get(k, "NA") for k in self.keys}
        if not self.writer:
            sep = self.sep

            class CustomDialect(csv.excel):
                delimiter = sep

            self.writer = csv.DictWriter(self.csv_file, fieldnames=["epoch"] + self.keys, dialect=CustomDialect)
            if self.append_header:
                self.writer.writeheader()
        row = {"epoch": epoch}
        row.update((key, handle_value(logs[key])) for key in self.keys)
        self.writer.writerow(row)
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None:
            self.csv_file.close()
        self.writer = None


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate at the start of each epoch to schedule(epoch, lr) (or schedule(epoch)
    for a one-argument function); the epoch's logs get "lr"."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = _get_lr(self.model)
        try:
            lr = self.schedule(epoch, lr)
        except TypeError:  # a schedule of the epoch only (Keras' fallback)
            lr = self.schedule(epoch)
        if hasattr(lr, "dtype") and hasattr(lr, "numpy"):
            if not lr.dtype.is_floating:
                raise ValueError(f"The dtype of `lr` Tensor should be float. Got: {lr.dtype}")
            lr = lr.numpy()
        if not isinstance(lr, (float, np.float32, np.float64)):
            raise ValueError('The output of the "schedule" function should be float. Got: {}'.format(lr))
        _set_lr(self.model, lr)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to {lr}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = _get_lr(self.model)


class ReduceLROnPlateau(Callback):
    """Multiplies the learning rate by `factor` when `monitor` has not improved by more than `min_delta` for
    `patience` epochs, then waits `cooldown` epochs; never below `min_lr`. The epoch's logs get "lr"."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto", min_delta=1e-4,
                 cooldown=0, min_lr=0, **kwargs):
        super().__init__()
        self.monitor = monitor
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0. Got {factor}")
        if "epsilon" in kwargs:
            min_delta = kwargs.pop("epsilon")
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0
        self.best = 0
        self.mode = mode
        self.monitor_op = None
        self._reset()

    def _reset(self):
        self.mode = _check_mode(self.mode, "Learning rate reduction")
        # Keras' rule here differs from EarlyStopping's: only names containing "acc" grow under 'auto'.
        if self.mode == "min" or (self.mode == "auto" and "acc" not in self.monitor):
            self.monitor_op = lambda a, b: np.less(a, b - self.min_delta)
            self.best = np.inf
        else:
            self.monitor_op = lambda a, b: np.greater(a, b + self.min_delta)
            self.best = -np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        logs = logs if logs is not None else {}
        logs["lr"] = _get_lr(self.model)
        current = logs.get(self.monitor)
        if current is None:
            _log.warning("Learning rate reduction is conditioned on metric `%s` which is not available. Available "
                         "metrics are: %s", self.monitor, ",".join(list(logs.keys())))
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = _get_lr(self.model)
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    _set_lr(self.model, new_lr)
                    if self.verbose > 0:
                        print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0

    def in_cooldown(self):
        return self.cooldown_counter > 0


class TerminateOnNaN(Callback):
    """Stops training at the first batch whose loss is NaN or infinite."""

    def on_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is not None and (np.isnan(loss) or np.isinf(loss)):
            print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class RemoteMonitor(Callback):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("kiln.keras.callbacks.RemoteMonitor is not supported (it posts to a server)")


class BackupAndRestore(Callback):
    """Fault tolerance: a TF checkpoint of the model (its optimizer too) and of the epoch is written to backup_dir
    after every epoch; a fit that starts while one is there restores it and goes on from the next epoch (the
    interrupted run's history is not replayed). The backup is deleted when fit ends, unless delete_checkpoint is
    False. Checkpoints by epoch only (an integer save_freq, and save_before_preemption, are refused)."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True, save_before_preemption=False):
        super().__init__()
        if not save_freq and not save_before_preemption:
            raise ValueError("Either `save_freq` or `save_before_preemption` must be set.")
        if save_freq != "epoch" or save_before_preemption:
            raise NotImplementedError("kiln.keras.callbacks.BackupAndRestore: only save_freq='epoch' (without "
                                      "save_before_preemption) is supported")
        self.backup_dir = os.fspath(backup_dir)
        self.save_freq, self.delete_checkpoint = save_freq, delete_checkpoint
        self.save_before_preemption = save_before_preemption
        self._manager = self._epoch = None

    def on_train_begin(self, logs=None):
        from .. import Variable, train
        self._epoch = Variable(-1, dtype="int64", trainable=False)
        checkpoint = train.Checkpoint(model=self.model, optimizer=self.model.optimizer, epoch=self._epoch)
        self._manager = train.CheckpointManager(checkpoint, os.path.join(self.backup_dir, "chief"), max_to_keep=1)
        if self._manager.latest_checkpoint:
            checkpoint.restore(self._manager.latest_checkpoint)
            self.model._backup_resume_epoch = int(self._epoch.numpy()) + 1  # fit starts from there

    def on_epoch_end(self, epoch, logs=None):
        self._epoch.assign(epoch)
        self._manager.save()

    def on_train_end(self, logs=None):
        if self.delete_checkpoint and os.path.isdir(self.backup_dir):
            import shutil
            shutil.rmtree(self.backup_dir)
        self._manager = None


class _ExperimentalBackupAndRestore(BackupAndRestore):
    def __init__(self, *args, **kwargs):
        logging.warning("`tf.keras.callbacks.experimental.BackupAndRestore` endpoint is deprecated and will be "
                        "removed in a future release. Please use `tf.keras.callbacks.BackupAndRestore`.")
        super().__init__(*args, **kwargs)


class experimental:  # noqa: N801 - tf.keras.callbacks.experimental is a module in TF
    BackupAndRestore = _ExperimentalBackupAndRestore


_CallbackList = CallbackList  # the name the model code used before
from .callbacks_tensorboard import TensorBoard  # noqa: E402,F401 - needs Callback above
from ._sidecar_export import SidecarEvaluatorModelExport  # noqa: E402,F401 - needs ModelCheckpoint above
__all__ = ["BaseLogger", "Callback", "CallbackList", "History", "ProgbarLogger", "LambdaCallback", "EarlyStopping",
           "ModelCheckpoint", "CSVLogger", "LearningRateScheduler", "ReduceLROnPlateau", "TerminateOnNaN"]
