"""tf.keras.callbacks.SidecarEvaluatorModelExport: SidecarEvaluator's ModelCheckpoint, which saves the model when an
evaluation is the best so far, numbered by the training epoch of the checkpoint evaluated."""
import os
import re

from .callbacks import ModelCheckpoint


def _newest_matching(pattern):
    """The most recently modified file or checkpoint prefix matching a ModelCheckpoint path pattern, or None."""
    regex = re.sub(r"\{epoch[^}]*\}", r"(\\d+)", re.escape(os.path.basename(pattern)).replace(r"\{", "{")
                   .replace(r"\}", "}"))
    directory = os.path.dirname(pattern) or "."
    if not os.path.isdir(directory):
        return None
    found = {}
    for name in os.listdir(directory):
        base = name[:-len(".index")] if name.endswith(".index") else name
        if re.fullmatch(regex, base):
            found[os.path.join(directory, base)] = os.path.getmtime(os.path.join(directory, name))
    return max(found, key=found.get) if found else None


class SidecarEvaluatorModelExport(ModelCheckpoint):
    """Saves to `export_filepath` (formatted with the training epoch of the checkpoint evaluated, e.g.
    ".../best-model-{epoch:04d}") when the monitored figure is the best so far; `checkpoint_filepath` is the
    training's ModelCheckpoint path (".../ckpt-{epoch:04d}"), whence the epoch. Other arguments: ModelCheckpoint's
    (save_best_only is always on)."""

    def __init__(self, export_filepath, checkpoint_filepath, **kwargs):
        super().__init__(filepath=export_filepath, save_best_only=True, **kwargs)
        self._checkpoint_filepath = os.fspath(checkpoint_filepath)

    def on_test_begin(self, logs=None):
        newest = _newest_matching(self._checkpoint_filepath)
        match = re.match(r".*ckpt-(?P<ckpt>\d+)", newest) if newest else None
        self.export_index = int(match["ckpt"]) - 1 if match else 0

    def on_test_end(self, logs=None):
        self.epochs_since_last_save += 1
        self._save_model(epoch=self.export_index, batch=None, logs=logs)
