"""tf.train.ExponentialMovingAverage (shadow variables that follow others: shadow -= (1 - decay)(shadow - var))
and tf.train.checkpoints_iterator (each new checkpoint of a directory as it appears)."""
import time

from .. import _C


class ExponentialMovingAverage:
    """Moving averages of variables; `apply` creates each one's shadow (starting at its value) and updates
    them, `average(var)` is the shadow. With num_updates the decay is min(decay, (1 + n) / (10 + n))."""

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        if zero_debias:
            raise NotImplementedError("ExponentialMovingAverage(zero_debias=True) is not supported by Kiln")
        self._decay, self._num_updates, self._name = decay, num_updates, name
        self._averages = {}

    @property
    def name(self):
        return self._name

    def _effective_decay(self):
        from .._ops import cast, constant, minimum
        from .. import dtypes
        decay = constant(self._decay, dtype=dtypes.float32) if not isinstance(self._decay, _C.Tensor) else \
            cast(self._decay, dtypes.float32)
        if self._num_updates is None:
            return decay
        n = cast(self._num_updates.read_value() if isinstance(self._num_updates, _C.Variable)
                 else self._num_updates, dtypes.float32)
        return minimum(decay, (1.0 + n) / (10.0 + n))

    def apply(self, var_list=None):
        """Creates the shadows of var_list's variables (on the first call) and moves each toward its variable."""
        from .._ops import cast, subtract, multiply
        if var_list is None:
            raise ValueError("ExponentialMovingAverage.apply needs var_list in TF 2 (no global variable collection)")
        for var in var_list:
            if not var.dtype.is_floating:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if var._state_id() not in self._averages:
                with _C.init_scope():
                    shadow = _C.Variable(var.read_value(), False, f"{var.name.split(':')[0]}/{self._name}", None)
                self._averages[var._state_id()] = (var, shadow)
        decay = self._effective_decay()
        for var in var_list:
            shadow = self._averages[var._state_id()][1]
            rate = cast(1.0 - decay, var.dtype)
            shadow.assign_sub(multiply(rate, subtract(shadow.read_value(), var.read_value())))
        return None

    def average(self, var):
        """The shadow variable of var, or None when apply has not seen it."""
        entry = self._averages.get(var._state_id())
        return None if entry is None else entry[1]

    def average_name(self, var):
        return f"{var.name.split(':')[0]}/{self._name}"


def checkpoints_iterator(checkpoint_dir, min_interval_secs=0, timeout=None, timeout_fn=None):
    """Yields each new checkpoint path of checkpoint_dir (its latest, when it changes), waiting at least
    min_interval_secs between yields; after `timeout` seconds without one, stops unless timeout_fn() is false."""
    from ._checkpoint import latest_checkpoint
    last = None
    while True:
        deadline = None if timeout is None else time.time() + timeout
        path = None
        while True:
            path = latest_checkpoint(checkpoint_dir)
            if path is not None and path != last:
                break
            if deadline is not None and time.time() > deadline:
                path = None
                break
            time.sleep(min(1.0, max(0.01, min_interval_secs or 0.1)))
        if path is None:
            if timeout_fn is None or timeout_fn():
                return
            continue
        start = time.time()
        last = path
        yield path
        wait = min_interval_secs - (time.time() - start)
        if wait > 0:
            time.sleep(wait)
