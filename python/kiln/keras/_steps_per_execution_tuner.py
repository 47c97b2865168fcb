"""tf.keras.utils.StepsPerExecutionTuner (Keras 2.15): a thread that measures training throughput
(optimizer.iterations per second) every `interval` seconds and, every `change_spe_interval` measurements, scales a
`steps_per_execution` variable: by 1.5 (or 0.5) again when throughput rose by more than `change_threshold` after the
last change, the other way when it fell by more. Kiln's compile ignores steps_per_execution (each step is one
optimized graph), so this tunes the variable a custom loop reads, as Keras' example does."""
import logging
import threading
import time

import numpy as np

_log = logging.getLogger("kiln.keras")


class StepsPerExecutionTuner:
    def __init__(self, optimizer, spe_variable, interval=5, change_spe_interval=10, change_threshold=0.1):
        self.optimizer = optimizer
        self._steps_per_execution = spe_variable
        self.interval = interval
        self.change_spe_interval = change_spe_interval
        self.spe_change_threshold = change_threshold
        self.steps_per_execution_stop_event = threading.Event()
        self.thread = None

    @property
    def steps_per_execution(self):
        return self._steps_per_execution

    @steps_per_execution.setter
    def steps_per_execution(self, value):
        self._steps_per_execution.assign(value)
        self.init_spe = value

    def start(self):
        """Starts the tuning thread (a daemon) and returns it; a running one is returned as is."""
        if self.thread is not None and self.thread.is_alive():
            return self.thread
        self._begin_tuning()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self.thread

    def stop(self):
        self.steps_per_execution_stop_event.set()

    def _loop(self):
        while not self.steps_per_execution_stop_event.is_set():
            self._measure_and_tune()
            self.steps_per_execution_stop_event.wait(self.interval)

    def _begin_tuning(self):
        self.start_time = time.time()
        self.init_iterations = int(self.optimizer.iterations.numpy())
        self.init_spe = int(np.asarray(self._steps_per_execution.numpy()).item())
        self.spe_last_logged = {"iteration": self.init_iterations, "time_secs": self.start_time}
        self.rgsps = []            # recent global steps per second, the last change_spe_interval of them
        self.avg_rgsps = 0
        self.prev_avg_rgsps = 0
        self.spe_tune_last_action_add = True
        self.spe_measurement_count = 0

    def _should_tune(self):
        # A zero rate is an epoch boundary (no steps ran): not a measurement to act on.
        return bool(self.rgsps) and self.spe_measurement_count % self.change_spe_interval == 0 and self.rgsps[-1] != 0

    def _tune(self):
        self.avg_rgsps = sum(self.rgsps) / len(self.rgsps)
        faster = self.avg_rgsps > (1 + self.spe_change_threshold) * self.prev_avg_rgsps
        slower = self.avg_rgsps < (1 - self.spe_change_threshold) * self.prev_avg_rgsps
        again, undo = (1.5, 0.5) if self.spe_tune_last_action_add else (0.5, 1.5)
        current = int(np.asarray(self._steps_per_execution.numpy()).item())
        new = current
        if faster:
            new = current * again
        elif slower:
            new = current * undo
            self.spe_tune_last_action_add = not self.spe_tune_last_action_add
        if current >= self._steps_per_execution.dtype.max / 1.5:
            new = current
        elif current == 0:
            new = self.init_spe
        self._steps_per_execution.assign(np.round(new).astype(self._steps_per_execution.dtype.as_numpy_dtype))
        self.prev_avg_rgsps = self.avg_rgsps

    def _measure_and_tune(self):
        self.spe_measurement_count += 1
        iteration = int(self.optimizer.iterations.numpy())
        now = time.time()
        elapsed = max(now - self.spe_last_logged["time_secs"], 1e-9)
        self.rgsps.append((iteration - self.spe_last_logged["iteration"]) / elapsed)
        if len(self.rgsps) > self.change_spe_interval:
            self.rgsps.pop(0)
        if iteration == 0:
            self.start_time = now
            return
        self.spe_last_logged = {"iteration": iteration, "time_secs": now}
        try:
            if self._should_tune():
                self._tune()
        except RuntimeError:
            _log.exception("Steps per execution autotuner failed to run.")
