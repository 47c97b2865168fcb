"""kiln.profiler: where the time goes, op by op, eagerly and inside graphs.

TF's `tf.profiler.experimental` API:

    tf.profiler.experimental.start("logdir")
    for step in range(20):
        train_step(x, y)
    tf.profiler.experimental.stop()   # logdir/kiln.trace.json and logdir/kiln_profile.txt

or `with tf.profiler.experimental.Profile("logdir"): ...`. TF writes TensorBoard's profile
format; Kiln writes a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing) and
the per-op table sorted by self time. `stop()` also returns the profile: `.table()`, `.events()`
(one dict per op or graph run), `.write_chrome_trace(path)`.
"""
import os as _os

from . import _C

__all__ = ["experimental"]

TRACE_FILE = "kiln.trace.json"
TABLE_FILE = "kiln_profile.txt"


class _Experimental:
    """tf.profiler.experimental."""

    def __init__(self):
        self._logdir = None

    def start(self, logdir, options=None):
        """Starts recording every op; `options` (TF's ProfilerOptions) are accepted and unused."""
        _C.profiler_start()
        self._logdir = _os.fspath(logdir)

    def stop(self, save=True):
        """Stops recording; with `save`, writes the trace and the table into the logdir."""
        profile = _C.profiler_stop()
        logdir, self._logdir = self._logdir, None
        if save and logdir is not None:
            _os.makedirs(logdir, exist_ok=True)
            profile.write_chrome_trace(_os.path.join(logdir, TRACE_FILE))
            with open(_os.path.join(logdir, TABLE_FILE), "w") as f:
                f.write(profile.table())
        return profile

    def Profile(self, logdir, options=None):  # noqa: N802 (TF's name)
        """A context manager: start(logdir) on entry, stop() on exit."""
        return _Session(self, logdir, options)


class _Session:
    def __init__(self, experimental, logdir, options):
        self._experimental, self._logdir, self._options = experimental, logdir, options
        self.profile = None

    def __enter__(self):
        self._experimental.start(self._logdir, self._options)
        return self

    def __exit__(self, *exc):
        self.profile = self._experimental.stop()
        return False


experimental = _Experimental()
