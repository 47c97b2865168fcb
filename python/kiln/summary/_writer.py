"""TensorBoard event files: a TFRecord file (kiln.io's framing) of Event protos named
events.out.tfevents.<seconds>.<host>.<pid>.<n>.v2, its first event the file version
"brain.Event:2", then one event per summary, each a Summary.Value holding a
TensorProto and the SummaryMetadata of TensorBoard's plugin (what TF 2's
tf.summary ops write)."""
import os as _os
import socket as _socket
import threading as _threading
import time as _time

from .. import errors as _errors
from ..io import _messages as _pb
from ..io._tfrecord import frame

_counter_lock = _threading.Lock()
_instances = [0]


def _next_instance():
    with _counter_lock:
        _instances[0] += 1
        return _instances[0]


class EventFileWriter:
    """Events buffered in memory and appended to the file every `max_queue` events, on
    flush() and on close() (and after `flush_millis` when an event is added)."""

    def __init__(self, logdir, max_queue=10, flush_millis=120000, filename_suffix=".v2"):
        self.logdir = logdir
        try:
            _os.makedirs(logdir, exist_ok=True)
        except OSError as e:
            raise _errors.NotFoundError(f"{logdir}; {e.strerror}") from None
        now = _time.time()
        name = (f"events.out.tfevents.{int(now):010d}.{_socket.gethostname()}.{_os.getpid()}.{_next_instance()}"
                f"{filename_suffix if filename_suffix is not None else '.v2'}")
        self.path = _os.path.join(logdir, name)
        self._file = open(self.path, "wb")
        self._pending = []
        self._max_queue = 10 if max_queue is None else max(int(max_queue), 1)
        self._flush_s = (120000 if flush_millis is None else flush_millis) / 1000.0
        self._last_flush = now
        self._lock = _threading.Lock()
        first = _pb.Event(wall_time=now, step=0, file_version="brain.Event:2")
        first.source_metadata.writer = "kiln"
        self.add_event(first)
        self.flush()

    def add_event(self, event):
        with self._lock:
            if self._file is None:
                raise _errors.FailedPreconditionError(f"The summary writer of {self.logdir} is closed.")
            self._pending.append(frame(event.SerializeToString()))
            due = len(self._pending) >= self._max_queue or _time.time() - self._last_flush >= self._flush_s
        if due:
            self.flush()

    def flush(self):
        with self._lock:
            if self._file is None:
                return
            self._file.write(b"".join(self._pending))
            self._pending = []
            self._file.flush()
            self._last_flush = _time.time()

    def close(self):
        self.flush()
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    @property
    def closed(self):
        return self._file is None


def summary_event(tag, tensor_proto, step, plugin_name, data_class, description=None, display_name=None):
    metadata = _pb.SummaryMetadata(data_class=data_class)
    metadata.plugin_data.plugin_name = plugin_name
    if description:
        metadata.summary_description = description
    if display_name:
        metadata.display_name = display_name
    event = _pb.Event(wall_time=_time.time(), step=int(step))
    value = event.summary.value.add(tag=tag, metadata=metadata)
    value.tensor.CopyFrom(tensor_proto)
    return event
