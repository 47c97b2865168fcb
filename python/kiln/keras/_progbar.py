"""The training progress bar: a port of the C++ kiln::nn::Progbar (src/nn/progbar.cpp), printing the
same text.

    Epoch 1/5  40/100 [===========>..................]  loss 0.6931  812.5 samples/s  ETA 3.2s

On a terminal the line is redrawn in place ('\\r'); elsewhere (a file, a pipe, CI) it prints whole
lines each time another `log_every_percent` of the steps is done, and at the end. Two additions
for fit: `stateful_metrics` names figures shown as given (running results that are already means)
instead of averaged over samples, and finish(extra) appends figures (validation results) to the
final line."""
import math
import os
import shutil
import sys
import time


def _duration(seconds):
    """3.2s, 42s, 1:05, 1:02:03."""
    if not (seconds >= 0) or not math.isfinite(seconds):
        return "?"
    if seconds < 10:
        return "%.1fs" % seconds
    if seconds < 60:
        return "%.0fs" % seconds
    s = _llround(seconds)
    if s < 3600:
        return "%d:%02d" % (s // 60, s % 60)
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)


def _llround(x):
    """C's llround: halves away from zero."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


class Progbar:
    def __init__(self, total_steps, title="", width=30, out=None, interactive=None, log_every_percent=25,
                 min_redraw_seconds=0.05, columns=0, clock=None, stateful_metrics=()):
        if width < 1:
            raise ValueError(f"Progbar: width must be at least 1, got {width}")
        if not 1 <= log_every_percent <= 100:
            raise ValueError(f"Progbar: log_every_percent must be in 1..100, got {log_every_percent}")
        self._total = max(int(total_steps or 0), 0)
        self._title = title
        self._width = width
        self._out = out if out is not None else sys.stdout
        if interactive is None:
            try:
                interactive = self._out.isatty()
            except (AttributeError, ValueError):
                interactive = False
        self._interactive = bool(interactive)
        self._columns = 0
        if self._interactive:
            if columns > 0:
                self._columns = columns
            else:
                try:
                    self._columns = os.get_terminal_size(self._out.fileno()).columns
                except (AttributeError, ValueError, OSError):
                    self._columns = shutil.get_terminal_size((0, 0)).columns
        self._log_every = log_every_percent
        self._min_redraw = min_redraw_seconds
        self._clock = clock or time.monotonic
        self._stateful = stateful_metrics if hasattr(stateful_metrics, "__contains__") else set(stateful_metrics)
        self._start = self._clock()
        self._last_draw = 0.0
        self._drawn = False
        self._steps = 0
        self._samples = 0
        self._last_bucket = 0
        self._last_width = 0
        self._finished = False
        self._hold = False
        self._sums = {}  # name -> [weighted_sum, weight, last], in the order first seen

    @property
    def total_steps(self):
        return self._total

    def steps_done(self):
        return self._steps

    def finished(self):
        return self._finished

    def hold_final_line(self, hold=True):
        """The step that reaches the total does not finish the bar: finish() will (with extra figures)."""
        self._hold = hold

    def step(self, samples, metrics=()):
        """One more step of `samples` samples, with that step's figures: (name, value) pairs or a dict."""
        if self._finished:
            total = str(self._total) if self._total else "an unknown number"
            raise RuntimeError(f"Progbar.step: the bar has finished ({self._steps} steps of {total})")
        if samples < 0:
            raise ValueError(f"Progbar.step: samples must be >= 0, got {samples}")
        self._steps += 1
        self._samples += samples
        items = metrics.items() if isinstance(metrics, dict) else metrics
        for name, value in items:
            s = self._sums.get(name)
            if s is None:
                s = self._sums[name] = [0.0, 0.0, 0.0]
            value = float(value)
            s[0] += value * samples
            s[1] += samples
            s[2] = value
        if self._total and self._steps >= self._total:
            if not self._hold:
                self.finish()
            return
        t = self._clock()
        if self._interactive:
            if not self._drawn or t - self._last_draw >= self._min_redraw:
                self._draw(t, False)
        elif self._total:
            bucket = self._steps * 100 // self._total // self._log_every
            if bucket > self._last_bucket:
                self._last_bucket = bucket
                self._draw(t, False)

    def finish(self, extra=()):
        """Prints the final line (figures, time taken), with `extra` figures after the bar's own."""
        if self._finished:
            return
        self._finished = True
        self._draw(self._clock(), True, list(extra.items() if isinstance(extra, dict) else extra))

    def means(self):
        """Each figure's sample-weighted mean so far (as given, for stateful ones), in the order first seen."""
        out = []
        for name, (wsum, weight, last) in self._sums.items():
            if name in self._stateful:
                out.append((name, last))
            else:
                out.append((name, wsum / weight if weight > 0 else last))
        return out

    def _line(self, t, final, bar_width, extra=()):
        text = self._title
        if text:
            text += "  "
        if self._total:
            total, done = str(self._total), str(self._steps)
            text += " " * max(len(total) - len(done), 0) + done + "/" + total + " ["
            filled = min(self._steps, self._total) * bar_width // self._total
            text += "=" * filled
            if filled < bar_width:
                text += ">" + "." * (bar_width - filled - 1)
            text += "]"
        else:
            text += str(self._steps) + (" step" if self._steps == 1 else " steps")
        for name, value in list(self.means()) + list(extra):
            text += "  " + name + " " + "%.4f" % value
        elapsed = t - self._start
        if elapsed > 0:
            rate = self._samples / elapsed
            text += "  " + ("%.0f" if rate >= 1000 else "%.1f") % rate + " samples/s"
        if final:
            text += "  took " + _duration(elapsed)
        elif self._total and self._steps > 0:
            text += "  ETA " + _duration(elapsed / self._steps * (self._total - self._steps))
        return text

    def _draw(self, t, final, extra=()):
        text = self._line(t, final, self._width, extra)
        if self._interactive and self._columns > 1:
            # The last column stays free: some terminals wrap on writing it.
            fit = self._columns - 1
            if len(text) > fit and self._total:
                excess = len(text) - fit
                text = self._line(t, final, max(self._width - excess, 1), extra)
            if len(text) > fit:
                text = text[:fit]
        if self._interactive:
            width = len(text)
            if width < self._last_width:
                text += " " * (self._last_width - width)
            self._last_width = width
            self._out.write("\r" + text + ("\n" if final else ""))
        else:
            self._out.write(text + "\n")
        self._out.flush()
        self._drawn = True
        self._last_draw = t
