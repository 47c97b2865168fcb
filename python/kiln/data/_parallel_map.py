"""map(num_parallel_calls=N or AUTOTUNE): the map function on a thread pool.

The map function is a traced graph, and the engine releases the GIL while a graph runs
(python/src/function.cpp: PyFunction::call), so several elements' graphs run at once;
only the Python around each call (packing, converting) takes turns. The first element is
mapped on the pulling thread, so tracing happens there as in a sequential map. Elements
come out in input order unless deterministic=False, when each is given as soon as it is
ready (as TF allows)."""
import collections
import concurrent.futures as futures
import os

from .. import errors as _errors
from .. import nest as _nest
from . import _composite_elements as _ce

__all__ = ["parallel_map", "workers_for"]

# AUTOTUNE: one worker per core (TF's autotuner also stops at the core count).
_AUTOTUNE = -1


def workers_for(num_parallel_calls):
    """How many threads a map with `num_parallel_calls` uses (1: the sequential engine map)."""
    if num_parallel_calls is None:
        return 1
    n = int(num_parallel_calls.numpy() if hasattr(num_parallel_calls, "numpy") else num_parallel_calls)
    if n == _AUTOTUNE:
        return max(1, os.cpu_count() or 1)
    if n <= 0:
        # TF's ParallelMapDataset kernel refuses it so.
        raise _errors.InvalidArgumentError("num_parallel_calls must be greater than zero.")
    return n


def parallel_map(ds, apply, out_structure, workers, deterministic):
    """A PyDataset of apply(flat element) (a flat list of tensors) over `ds` on `workers` threads;
    `out_structure.template` is the structure of the results (set by apply)."""
    from ._python_dataset import PyDataset

    def open_pass():
        pool = futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kiln-map")
        pending = collections.deque()
        elements = iter(ds)
        try:
            first = next(elements, None)
            if first is None:
                return
            flat = apply(_ce.flatten(first))  # traces here; sets out_structure.template
            yield _nest.pack_sequence_as(out_structure.template, flat, expand_composites=True)
            exhausted = False
            while True:
                # Keep twice the workers in flight so a worker never waits for the next element.
                while not exhausted and len(pending) < 2 * workers:
                    element = next(elements, None)
                    if element is None:
                        exhausted = True
                        break
                    pending.append(pool.submit(apply, _ce.flatten(element)))
                if not pending:
                    return
                if deterministic:
                    done = pending.popleft()
                else:
                    finished, _ = futures.wait(pending, return_when=futures.FIRST_COMPLETED)
                    done = next(f for f in pending if f in finished)
                    pending.remove(done)
                yield _nest.pack_sequence_as(out_structure.template, done.result(), expand_composites=True)
        finally:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=True)

    return PyDataset(open_pass, parents=(ds,), card=ds._cardinality())
