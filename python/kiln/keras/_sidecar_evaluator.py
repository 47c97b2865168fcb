"""tf.keras.utils.SidecarEvaluator (Keras 2.15): an evaluator process that watches a training job's checkpoint
directory and evaluates the model on each newest checkpoint it finds, until the one numbered `max_evaluations`."""
import logging
import os
import time

from .. import _C

_log = logging.getLogger("kiln.keras")
_NOT_RESTORED = -1          # `iterations` before a checkpoint gave it a value
_CHECKPOINT_TIMEOUT_SEC = 30


def _checkpoints(checkpoint_dir, timeout, timeout_fn, min_interval_secs=0.0, poll_secs=0.5):
    """The directory's newest checkpoint each time it changes (tf.train.checkpoints_iterator): waits up to
    `timeout` seconds for a new one, then asks timeout_fn whether to stop (True) or wait on."""
    from ..train import latest_checkpoint
    last = None
    while True:
        deadline = time.time() + timeout if timeout is not None else None
        path = None
        while path is None:
            newest = latest_checkpoint(checkpoint_dir)
            if newest is not None and newest != last:
                path = newest
            elif deadline is not None and time.time() > deadline:
                break
            else:
                time.sleep(poll_secs)
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        started = time.time()
        last = path
        yield path
        wait = min_interval_secs - (time.time() - started)
        if wait > 0:
            time.sleep(wait)


def _checkpoint_roots(path):
    """The names at the top of a checkpoint's object graph ("model", "optimizer", ...)."""
    from ..train import list_variables
    return {name.split("/", 1)[0] for name, _ in list_variables(path)}


class SidecarEvaluator:
    """Evaluates `model` (compiled with its metrics) on `data` with each new checkpoint in `checkpoint_dir`:
    checkpoints of tf.train.Checkpoint(model=..., optimizer=...) (a custom loop, or a CheckpointManager), or
    weights saved by ModelCheckpoint(filepath=".../ckpt-{epoch}", save_weights_only=True). It stops after the
    checkpoint whose path ends in "-<n>" with n >= max_evaluations (None: never). `callbacks` get the
    on_test_* calls of model.evaluate."""

    def __init__(self, model, data, checkpoint_dir, steps=None, max_evaluations=None, callbacks=None):
        self.model = model
        self.data = data
        self.checkpoint_dir = os.fspath(checkpoint_dir)
        self._iterations = _C.Variable(_C.constant(_NOT_RESTORED, 9), False, "iterations", None)
        self.max_evaluations = max_evaluations
        self.steps = steps
        self.callbacks = callbacks or []

    def _timeout_fn(self):
        _log.info("No checkpoints appear to be found after %s seconds. Please check if you are properly using a "
                  "`tf.train.Checkpoint/CheckpointManager` or `tf.keras.callbacks.ModelCheckpoint("
                  "save_weights_only=True)` to save checkpoints by the training. See `tf.keras.SidecarEvaluator` doc "
                  "for recommended flows of saving checkpoints.", _CHECKPOINT_TIMEOUT_SEC)
        return False

    def _checkpoint(self):
        from ..train import Checkpoint
        from .optimizers import Optimizer
        if isinstance(self.model.optimizer, Optimizer):
            return Checkpoint(model=self.model, optimizer=self.model.optimizer), True
        return Checkpoint(model=self.model, optimizer=Checkpoint(iter=self._iterations)), False

    def start(self):
        """Runs the evaluation loop (returns once the last checkpoint is evaluated)."""
        from .. import errors
        checkpoint, restores_optimizer = self._checkpoint()
        for path in _checkpoints(self.checkpoint_dir, _CHECKPOINT_TIMEOUT_SEC, self._timeout_fn):
            try:
                checkpoint.restore(path).expect_partial()
                if "model" not in _checkpoint_roots(path):
                    self.model.load_weights(path)  # ModelCheckpoint's weights: the model is the root
                if self.model.optimizer is not None and not restores_optimizer:
                    self.model.optimizer.iterations.assign(self._iterations)
            except (errors.OpError, OSError) as e:
                if isinstance(e, errors.UnavailableError):
                    raise
                # The trainer may still be writing it: try the next one.
                _log.info("SidecarEvaluator encountered an error when loading the checkpoint at %s. Retrying. "
                          "Error: %s: %s", path, type(e).__name__, e)
                continue
            if not restores_optimizer and int(self._iterations.numpy()) == _NOT_RESTORED:
                raise RuntimeError(f"Variable `iterations` cannot be loaded from the checkpoint file at "
                                   f"{self.checkpoint_dir}. Please ensure `iterations` is included in the checkpoint "
                                   "saved during training.")
            _log.info("Evaluation starts: Model weights loaded from latest checkpoint file %s", path)
            self.model.evaluate(self.data, steps=self.steps, callbacks=self.callbacks, verbose=2)
            results = {}
            for metric in self.model.metrics:
                value = metric.result()
                results.update(value if isinstance(value, dict) else {metric.name: value})
            _log.info("End of evaluation. Metrics: %s", " ".join(f"{k}={v.numpy()}" for k, v in results.items()))
            if self.max_evaluations and self.max_evaluations <= int(path.split("-")[-1]):
                _log.info("Last checkpoint evaluated. SidecarEvaluator stops.")
                return


class SidecarEvaluatorExperimental(SidecarEvaluator):
    """tf.keras.experimental.SidecarEvaluator: the deprecated name."""

    def __init__(self, *args, **kwargs):
        _log.warning("`tf.keras.experimental.SidecarEvaluator` endpoint is deprecated and will be removed in a "
                     "future release. Please use `tf.keras.utils.SidecarEvaluator`.")
        super().__init__(*args, **kwargs)
