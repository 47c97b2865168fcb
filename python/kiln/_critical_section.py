"""tf.CriticalSection: execute(fn) runs fn with the section held, so the reads and writes of
concurrent executions do not interleave. Eagerly the section is a lock; inside a tf.function fn is
traced in place (Kiln runs a graph's stateful ops in program order within one call; calls of one
function from several threads are not serialized: docs/design-notes.md, "tf.queue and
tf.CriticalSection")."""
import threading

_held = threading.local()


class CriticalSection:
    def __init__(self, name=None, shared_name=None, critical_section_def=None, import_scope=None):
        if critical_section_def is not None:
            raise ValueError("CriticalSection: critical_section_def (a v1 graph's proto) is not supported by Kiln")
        self._name = shared_name or name or "critical_section"
        self._lock = threading.Lock()

    name = property(lambda self: self._name)

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """fn()'s result, computed with this section held."""
        held = getattr(_held, "sections", None)
        if held is None:
            held = _held.sections = []
        if any(s is self for s in held):
            raise ValueError("Attempting to lock a CriticalSection in which we are already running. This is "
                             "illegal and may cause deadlocks.")
        with self._lock:
            held.append(self)
            try:
                return fn()
            finally:
                held.pop()
