"""`tf.keras.utils.Progbar`: the progress bar of fit / evaluate / predict, printing Keras 2.15's text.

verbose=1 redraws one line per update (backspaces and a carriage return, as Keras writes them on
POSIX even into files and pipes) and ends it with a newline when finalized:

    782/782 [==============================] - 2s 2ms/step - loss: 0.3429 - accuracy: 0.9025

verbose=2 prints only the final line, with the epoch's time and the time per step:

    79/79 - 0s - loss: 0.1258 - accuracy: 0.9625 - 111ms/epoch - 1ms/step

Figures named in `stateful_metrics` are shown as given; the others are averaged over the steps
(weighted by the steps each update covers). The clock is `_now` so tests can fix the times."""
import os
import sys
import time

_now = time.time


def _write(text):
    from ._utils_more import print_msg
    print_msg(text, line_break=False)


def _format_figure(value, verbose):
    # Keras shows small figures in scientific notation; verbose 1 tests |value|, verbose 2 the value.
    large = abs(value) > 1e-3 if verbose == 1 else value > 1e-3
    return f" {value:.4f}" if large else f" {value:.4e}"


def _format_time(seconds, unit):
    """' 2s/epoch', ' 15ms/step', ' 850us/step'."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit}"
    return f" {seconds * 1e6:.0f}us/{unit}"


def _format_eta(seconds):
    if seconds > 3600:
        return "%d:%02d:%02d" % (seconds // 3600, (seconds % 3600) // 60, seconds % 60)
    if seconds > 60:
        return "%d:%02d" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


def _count_width(target):
    return len(str(int(target)))


class Progbar:
    """Displays a progress bar (Keras' arguments and defaults)."""

    def __init__(self, target, width=30, verbose=1, interval=0.05, stateful_metrics=None, unit_name="step"):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics) if stateful_metrics else set()
        # Keras redraws in place wherever the POSIX module is loaded, i.e. on every Linux and macOS run.
        self._dynamic_display = ((hasattr(sys.stdout, "isatty") and sys.stdout.isatty()) or "ipykernel" in sys.modules
                                 or "posix" in sys.modules or "PYCHARM_HOSTED" in os.environ)
        self._total_width = 0
        self._seen_so_far = 0
        self._values = {}  # name -> [weighted sum, weight]; insertion order is display order
        self._start = _now()
        self._last_update = 0
        self._time_at_epoch_start = self._start
        self._time_at_epoch_end = None
        self._time_after_first_step = None

    def update(self, current, values=None, finalize=None):
        """Moves the bar to step `current`, with (name, value) pairs for that step."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or []:
            if name in self.stateful_metrics:
                self._values[name] = [value, 1]
                continue
            # At least 1: an update repeating the last step (fit's end of epoch) still weighs.
            steps = max(current - self._seen_so_far, 1)
            acc = self._values.setdefault(name, [0.0, 0])
            acc[0] += value * steps
            acc[1] += steps
        self._seen_so_far = current
        now = _now()
        if current == self.target:
            self._time_at_epoch_end = now
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._draw(current, now, finalize)
        elif self.verbose == 2 and finalize:
            self._print_epoch_line(current, now)
        self._last_update = now

    def add(self, n, values=None):
        self.update(self._seen_so_far + n, values)

    def _means(self):
        return [(name, acc[0] / max(1, acc[1])) for name, acc in self._values.items()]

    def _draw(self, current, now, finalize):
        previous = self._total_width
        text = "\b" * previous + "\r" if self._dynamic_display else "\n"
        if self.target is not None:
            bar = "%*d/%d [" % (_count_width(self.target), current, self.target)
            filled = int(self.width * current / self.target)
            if filled > 0:
                bar += "=" * (filled - 1) + (">" if current < self.target else "=")
            bar += "." * (self.width - filled) + "]"
        else:
            bar = "%7d/Unknown" % current
        per_step = self._step_duration(current, now)
        if self.target is None or finalize:
            info = f" - {now - self._start:.0f}s" + _format_time(per_step, self.unit_name)
        else:
            info = " - ETA: " + _format_eta(per_step * (self.target - current))
        for name, mean in self._means():
            info += f" - {name}:" + _format_figure(mean, 1)
        self._total_width = len(bar) + len(info)
        if previous > self._total_width:
            info += " " * (previous - self._total_width)
        _write(text + bar + info + ("\n" if finalize else ""))

    def _print_epoch_line(self, current, now):
        line = "%*d/%d" % (_count_width(self.target), current, self.target) + f" - {now - self._start:.0f}s"
        for name, mean in self._means():
            line += f" - {name}:" + _format_figure(mean, 2)
        if self._time_at_epoch_end:
            epoch_time = self._time_at_epoch_end - self._time_at_epoch_start
            self._time_at_epoch_start, self._time_at_epoch_end = now, None
            line += " -" + _format_time(epoch_time, "epoch") + " -" + _format_time(epoch_time / self.target,
                                                                                     self.unit_name) + "\n"
        _write(line)

    def _step_duration(self, current, now):
        """Seconds per step; the first step (tracing, warm-up) is left out once there are others."""
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            duration = (now - self._time_after_first_step) / (current - 1)
        else:
            duration = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return duration

    def _update_stateful_metrics(self, stateful_metrics):
        self.stateful_metrics = self.stateful_metrics.union(stateful_metrics)
