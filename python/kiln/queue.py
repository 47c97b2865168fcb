"""tf.queue: FIFOQueue, PaddingFIFOQueue, PriorityQueue and RandomShuffleQueue. Elements are
tuples of tensors kept in Python, and enqueue/dequeue block on a condition variable as TF's kernels
do, so producer and consumer threads work. Inside a tf.function each method is a host function
(tf.py_function) run when the graph runs, in program order (docs/design-notes.md, "Graph-side
names")."""
import heapq
import threading

import numpy as np

from . import _C
from . import dtypes as _dtypes
from . import errors
from .tensor_shape import TensorShape

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "PriorityQueue", "RandomShuffleQueue"]

_names_used = {}
_names_lock = threading.Lock()


def _unique(name):
    with _names_lock:
        n = _names_used.get(name, 0)
        _names_used[name] = n + 1
    return f"_{n}_{name}"


def _in_graph(fn, inputs, dtypes):
    """fn(*input values) as a host function of the graph being traced: its results' dtypes."""
    from .function import py_function
    return py_function(fn, inputs, list(dtypes))


class QueueBase:
    """The state and blocking rules shared by the four queues; subclasses choose which element
    leaves next (_take) and how a batch is stacked (_stack)."""

    def __init__(self, dtypes, shapes, names, queue_ref_name, capacity=-1):
        self._dtypes = [_dtypes.as_dtype(d) for d in (dtypes if isinstance(dtypes, (list, tuple)) else [dtypes])]
        if shapes is None:
            self._shapes = [TensorShape(None)] * len(self._dtypes)
        else:
            shapes = shapes if isinstance(shapes, (list, tuple)) and (
                not shapes or isinstance(shapes[0], (list, tuple, TensorShape)) or shapes[0] is None) else [shapes]
            self._shapes = [TensorShape(s) for s in shapes]
            if len(self._shapes) != len(self._dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
        if names is not None:
            names = list(names) if isinstance(names, (list, tuple)) else [names]
            if len(names) != len(self._dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
        self._names = names
        self._capacity = capacity if capacity is not None and capacity > 0 else None
        self._name = queue_ref_name
        self._kind = type(self).__name__
        self._closed = False
        self._cancelled = False
        self._cond = threading.Condition()

    # ---- properties -----------------------------------------------------------------------
    name = property(lambda self: self._name)
    dtypes = property(lambda self: list(self._dtypes))
    shapes = property(lambda self: list(self._shapes))
    names = property(lambda self: self._names)
    queue_ref = property(lambda self: self)

    # ---- converting values ----------------------------------------------------------------
    def _components(self, vals):
        if self._names is not None:
            if not isinstance(vals, dict):
                raise ValueError("Queue with names expects a dictionary to enqueue")
            if sorted(vals) != sorted(self._names):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  Dictionary: "
                                 f"{sorted(vals)}, Queue: {sorted(self._names)}")
            vals = [vals[n] for n in self._names]
        elif isinstance(vals, dict):
            raise ValueError("Queue must have names to enqueue a dictionary")
        elif not isinstance(vals, (list, tuple)):
            vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components, got {len(vals)}")
        from ._ops import convert_to_tensor
        return [convert_to_tensor(v, dtype=d) for v, d in zip(vals, self._dtypes)]

    def _check_shapes(self, tensors, batched):
        for t, s in zip(tensors, self._shapes):
            shape = t.shape[1:] if batched else t.shape
            if batched and t.shape.rank == 0:
                raise ValueError("enqueue_many needs each component to have a batch dimension, got a scalar")
            if not shape.is_compatible_with(s):
                raise ValueError(f"Shapes {shape} and {s} are incompatible")

    def _result(self, tensors):
        if self._names is not None:
            return {n: t for n, t in zip(self._names, tensors)}
        return tensors[0] if len(tensors) == 1 else list(tensors)

    # ---- state ---------------------------------------------------------------------------
    def _closed_error(self):
        return errors.CancelledError(f"{self._kind} '{self._name}' is closed.")

    def _short_error(self, wanted):
        return errors.OutOfRangeError(f"{self._kind} '{self._name}' is closed and has insufficient elements "
                                      f"(requested {wanted}, current size {self._size()})")

    def _wait_for_room(self):
        while self._capacity is not None and self._size() >= self._capacity and not self._closed:
            self._cond.wait()
        if self._closed:
            raise self._closed_error()

    def _put_all(self, elements):
        with self._cond:
            if self._closed:
                raise self._closed_error()
            for element in elements:
                self._wait_for_room()
                self._put(element)
                self._cond.notify_all()

    def _available(self):
        return self._size()

    def _take_n(self, n, up_to):
        with self._cond:
            while self._available() < n and not self._closed:
                self._cond.wait()
            if self._available() < n:  # closed
                if not up_to or self._size() == 0:
                    raise self._short_error(n)
                n = self._size()
            taken = [self._take() for _ in range(n)]
            self._cond.notify_all()
            return taken

    # ---- TF's methods ----------------------------------------------------------------------
    def enqueue(self, vals, name=None):
        tensors = self._components(vals)
        self._check_shapes(tensors, batched=False)
        if _C.is_tracing():
            _in_graph(lambda *ts: self._put_all([list(ts)]), tensors, [])
            return None
        self._put_all([tensors])

    def enqueue_many(self, vals, name=None):
        tensors = self._components(vals)
        self._check_shapes(tensors, batched=True)
        if _C.is_tracing():
            _in_graph(lambda *ts: self._put_many(ts), tensors, [])
            return None
        self._put_many(tensors)

    def _put_many(self, tensors):
        sizes = {int(t.shape[0]) for t in tensors}
        if len(sizes) != 1:
            raise ValueError(f"enqueue_many: the components' first dimensions differ: {sorted(sizes)}")
        n = sizes.pop()
        self._put_all([[t[i] for t in tensors] for i in range(n)])

    def dequeue(self, name=None):
        if _C.is_tracing():
            out = _in_graph(lambda: self._take_n(1, up_to=False)[0], [], self._dtypes)
            for t, s in zip(out, self._shapes):
                t.set_shape(s)
            return self._result(out)
        return self._result(self._take_n(1, up_to=False)[0])

    def dequeue_many(self, n, name=None):
        return self._dequeue_batch(n, up_to=False)

    def dequeue_up_to(self, n, name=None):
        return self._dequeue_batch(n, up_to=True)

    def _dequeue_batch(self, n, up_to):
        n = self._count(n)
        if _C.is_tracing():
            out = _in_graph(lambda: self._stack(self._take_n(n, up_to=up_to)), [], self._dtypes)
            for t, s in zip(out, self._shapes):
                t.set_shape(TensorShape([None if up_to else n]).concatenate(s))
            return self._result(out)
        return self._result(self._stack(self._take_n(n, up_to=up_to)))

    def _count(self, n):
        n = int(n)
        if n < 0:
            raise errors.InvalidArgumentError(f"Dequeue requested {n} < 0 elements")
        if self._capacity is not None and n > self._capacity:
            raise errors.InvalidArgumentError(f"Dequeue requested {n} elements, more than the queue's capacity "
                                              f"{self._capacity}: it would block forever")
        return n

    def _stack(self, elements):
        if not elements:
            return [_C.zeros([0] + s.as_list() if s.is_fully_defined() else [0], d._enum)
                    for s, d in zip(self._shapes, self._dtypes)]
        for i, s in enumerate(self._shapes):
            if not s.is_fully_defined():
                shapes = {tuple(e[i].shape.as_list()) for e in elements}
                if len(shapes) > 1:
                    raise errors.InvalidArgumentError(
                        f"Shape mismatch in tuple component {i}. Expected {list(shapes.pop())}, got "
                        f"{list(shapes.pop())}: dequeue_many needs elements of one shape")
        return [_C.stack([e[i] for e in elements], 0) for i in range(len(self._dtypes))]

    def size(self, name=None):
        if _C.is_tracing():
            return _in_graph(self._size_now, [], [_dtypes.int32])[0]
        return self._size_now()

    def _size_now(self):
        with self._cond:
            return _C.constant(np.int32(self._size()), None)

    def is_closed(self, name=None):
        if _C.is_tracing():
            return _in_graph(lambda: _C.constant(self._closed, None), [], [_dtypes.bool])[0]
        return _C.constant(self._closed, None)

    def close(self, cancel_pending_enqueues=False, name=None):
        if _C.is_tracing():
            _in_graph(self._close_now, [], [])
            return None
        self._close_now()

    def _close_now(self):
        with self._cond:
            self._closed = True
            self._cond.notify_all()


class FIFOQueue(QueueBase):
    """Elements leave in the order they came."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        super().__init__(dtypes, shapes, names, _unique(name), capacity)
        self._items = []
        self._head = 0

    def _size(self):
        return len(self._items) - self._head

    def _put(self, element):
        self._items.append(element)

    def _take(self):
        element = self._items[self._head]
        self._head += 1
        if self._head > 64 and self._head * 2 > len(self._items):
            self._items, self._head = self._items[self._head:], 0
        return element


class PaddingFIFOQueue(FIFOQueue):
    """A FIFOQueue whose dequeue_many pads each component's unknown dimensions with zeros to the
    batch's largest."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        if shapes is None:
            raise ValueError("PaddingFIFOQueue needs shapes (None for the dimensions to pad)")
        super().__init__(capacity, dtypes, shapes, names, shared_name, name)
        for s in self._shapes:
            if s.rank is None:
                raise ValueError("PaddingFIFOQueue: every component needs a known rank")

    def _stack(self, elements):
        from ._ops import pad as _pad
        if not elements:
            return [_C.zeros([0] + [d or 0 for d in s.as_list()], d_._enum)
                    for s, d_ in zip(self._shapes, self._dtypes)]
        out = []
        for i in range(len(self._dtypes)):
            dims = [max(int(e[i].shape[k]) for e in elements) for k in range(self._shapes[i].rank)]
            padded = []
            for e in elements:
                t = e[i]
                pad = [[0, d - int(t.shape[k])] for k, d in enumerate(dims)]
                padded.append(_pad(t, pad) if any(p[1] for p in pad) else t)
            out.append(_C.stack(padded, 0))
        return out


class PriorityQueue(QueueBase):
    """Elements leave lowest priority first: component 0 is an int64 priority (ties leave in the
    order they came)."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = list(types) if isinstance(types, (list, tuple)) else [types]
        if shapes is not None:
            shapes = [()] + list(shapes)
        if names is not None:
            names = ["priority"] + (list(names) if isinstance(names, (list, tuple)) else [names])
        super().__init__([_dtypes.int64] + types, shapes, names, _unique(name), capacity)
        self._heap = []
        self._order = 0

    def _size(self):
        return len(self._heap)

    def _put(self, element):
        if element[0].shape.rank != 0:
            raise errors.InvalidArgumentError("PriorityQueue: the priority (component 0) must be a scalar")
        self._order += 1
        heapq.heappush(self._heap, (int(element[0].numpy()), self._order, element))

    def _take(self):
        return heapq.heappop(self._heap)[2]


class RandomShuffleQueue(QueueBase):
    """Elements leave in random order; a dequeue waits while min_after_dequeue or fewer remain,
    unless the queue is closed."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None, shared_name=None,
                 name="random_shuffle_queue"):
        super().__init__(dtypes, shapes, names, _unique(name), capacity)
        self._min_after = int(min_after_dequeue)
        from . import random as _random  # the global and op seeds make the order reproducible, as in TF
        self._rng = np.random.default_rng(int(_random.uniform([], 0, 2 ** 31 - 1, _dtypes.int64, seed=seed)))
        self._items = []

    def _size(self):
        return len(self._items)

    def _available(self):
        return self._size() if self._closed else max(0, self._size() - self._min_after)

    def _put(self, element):
        self._items.append(element)

    def _take(self):
        k = int(self._rng.integers(len(self._items)))
        self._items[k], self._items[-1] = self._items[-1], self._items[k]
        return self._items.pop()
