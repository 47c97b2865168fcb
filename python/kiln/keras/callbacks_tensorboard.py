"""tf.keras.callbacks.TensorBoard (Keras 2.15): event files TensorBoard reads, in the layout
and with the tag names Keras writes.

log_dir/train holds `epoch_<metric>` scalars at step = epoch, `batch_<metric>` scalars at
step = the fit's batch count (1, 2, ...) every `update_freq` batches, and the weight
histograms (`<weight name with ':' as '_'>/histogram`) every `histogram_freq` epochs, with
`write_images` their images too (`.../image`, as Keras draws them).
log_dir/validation holds the `val_` metrics as `epoch_<metric>` (prefix dropped) and, after
each validation run, `evaluation_<metric>_vs_iterations` at step = optimizer.iterations.
`python3 -m kiln.board LOGDIR` draws them where TensorBoard cannot be installed."""
import os
import time

import numpy as np

from .callbacks import Callback

__all__ = ["TensorBoard"]

# Keras still accepts these TF 1 arguments (with a warning); anything else is an error.
_DEPRECATED_KWARGS = ("write_grads", "embeddings_layer_names", "embeddings_data", "batch_size")


class TensorBoard(Callback):
    """Writes the training's figures for TensorBoard under `log_dir`."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
                 embeddings_metadata=None, **kwargs):
        super().__init__()
        unknown = set(kwargs) - set(_DEPRECATED_KWARGS)
        if unknown:
            raise ValueError(f"Unrecognized arguments in `TensorBoard` Callback: {unknown}. "
                             f"Supported kwargs are: {set(_DEPRECATED_KWARGS)}")
        if update_freq != "epoch" and update_freq != "batch" and not (
                isinstance(update_freq, (int, np.integer)) and update_freq > 0):
            raise ValueError(f"`update_freq` must be 'epoch', 'batch' or a positive integer, got {update_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = int(histogram_freq or 0)
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.profile_batch = profile_batch  # the profiler is TF's own: accepted, nothing traced
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        self._train_step = 0
        self._epoch_start_time = 0.0
        self._previous_epoch_iterations = 0

    # ---- writers: made when first written to, closed when training ends -------------------------
    def _writer(self, directory):
        if directory not in self._writers:
            from .. import summary
            self._writers[directory] = summary.create_file_writer(directory)
        return self._writers[directory]

    @property
    def _train_writer(self):
        return self._writer(self._train_dir)

    @property
    def _val_writer(self):
        return self._writer(self._val_dir)

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    def _scalars(self, writer, tag_of, logs, step):
        from .. import summary
        with summary.record_if(True), writer.as_default():
            for name, value in logs.items():
                if np.ndim(_value(value)) == 0:
                    summary.scalar(tag_of(name), float(_value(value)), step=step)

    # ---- hooks --------------------------------------------------------------------------------
    def set_model(self, model):
        super().set_model(model)
        self._close_writers()  # each fit/evaluate writes new event files, as Keras' writers do
        if self.write_graph:
            self._write_keras_model_summary()

    def on_train_begin(self, logs=None):
        self._train_step = 0  # Keras' model._train_counter, set to 0 by each fit
        self._previous_epoch_iterations = 0

    def on_train_end(self, logs=None):
        self._close_writers()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start_time = time.time()
        if self.write_steps_per_second:
            self._previous_epoch_iterations = self._iterations()

    def on_train_batch_end(self, batch, logs=None):
        self._train_step += 1
        if self.update_freq == "epoch" or self._train_step % self.update_freq:
            return
        logs = dict(logs or {})
        if self.write_steps_per_second:
            logs["steps_per_second"] = 1.0 / max(time.time() - self._batch_start_time, 1e-9)
        self._scalars(self._train_writer, lambda name: "batch_" + name, logs, self._train_step)

    def on_train_batch_begin(self, batch, logs=None):
        self._batch_start_time = time.time()

    def on_test_end(self, logs=None):
        # After a validation run (or evaluate with this callback): the figures against the optimizer's steps.
        optimizer = getattr(self.model, "optimizer", None)
        if logs and optimizer is not None and hasattr(optimizer, "iterations"):
            self._scalars(self._val_writer, lambda name: f"evaluation_{name}_vs_iterations", logs,
                          self._iterations())

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs or {})
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch_metrics(self, epoch, logs):
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k[len("val_"):]: v for k, v in logs.items() if k.startswith("val_")}
        learning_rate = self._scheduled_learning_rate()
        if learning_rate is not None and train_logs:
            train_logs["learning_rate"] = learning_rate
        if self.write_steps_per_second and train_logs:
            elapsed = max(time.time() - self._epoch_start_time, 1e-9)
            train_logs["steps_per_second"] = (self._iterations() - self._previous_epoch_iterations) / elapsed
        if train_logs:
            self._scalars(self._train_writer, lambda name: "epoch_" + name, train_logs, epoch)
        if val_logs:
            self._scalars(self._val_writer, lambda name: "epoch_" + name, val_logs, epoch)

    def _log_weights(self, epoch):
        from .. import summary
        writer = self._train_writer
        with summary.record_if(True), writer.as_default():
            for layer in self.model.layers:
                for weight in layer.weights:
                    summary.histogram(weight.name.replace(":", "_") + "/histogram", _value(weight), step=epoch)
                    if self.write_images:
                        _log_weight_as_image(np.asarray(_value(weight)), weight.name.replace(":", "_") + "/image",
                                             epoch)
        writer.flush()

    def _write_keras_model_summary(self):
        """The model's JSON under tag "keras" (TensorBoard's graph plugin, "graph_keras_model"), written
        as Keras does for Functional and Sequential models only."""
        model = self.model
        if not getattr(model, "_is_graph_network", False) and type(model).__name__ != "Sequential":
            return
        try:
            config = model.to_json()
        except (NotImplementedError, ValueError, TypeError, AttributeError):
            return
        from .. import summary
        from ..io import _messages as pb
        metadata = pb.SummaryMetadata()
        metadata.plugin_data.plugin_name = "graph_keras_model"
        metadata.plugin_data.content = b"1"
        writer = self._train_writer
        with summary.record_if(True), writer.as_default():
            summary.write("keras", np.array(config, dtype=object), step=0, metadata=metadata)

    # ---- figures read from the model ----------------------------------------------------------
    def _iterations(self):
        optimizer = getattr(self.model, "optimizer", None)
        iterations = getattr(optimizer, "iterations", None)
        return 0 if iterations is None else int(_value(iterations))

    def _scheduled_learning_rate(self):
        """The learning rate now, when the optimizer's follows a LearningRateSchedule (Keras logs it then)."""
        from .schedules import LearningRateSchedule
        optimizer = getattr(self.model, "optimizer", None)
        schedule = getattr(optimizer, "_learning_rate", None)
        if isinstance(schedule, LearningRateSchedule):
            return float(_value(schedule(self._iterations())))
        return None


def _value(x):
    return x.numpy() if hasattr(x, "numpy") else x


def _log_weight_as_image(weight, tag, epoch):
    """Keras' weight image: a bias as a 1-pixel-wide column, a Dense kernel as one image (its
    longer side across), a Conv kernel as one image per output channel; others are skipped.
    The values go through summary.image as they are (floats outside [0, 1] saturate)."""
    from .. import summary
    image = np.squeeze(weight)
    if image.ndim == 1:
        image = image.reshape(1, image.shape[0], 1, 1)
    elif image.ndim == 2:
        if image.shape[0] > image.shape[1]:
            image = image.T
        image = image.reshape(1, image.shape[0], image.shape[1], 1)
    elif image.ndim == 3:
        image = np.transpose(image, (2, 0, 1))[..., None]  # channels_last: each kernel its own image
    if image.ndim == 4 and image.shape[-1] in (1, 3, 4):
        summary.image(tag, image, step=epoch)
