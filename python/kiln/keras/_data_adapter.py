"""Keras' data adapters (keras/engine/data_adapter.py): what fit / evaluate / predict iterate over.

NumPy arrays and tensors are batched by slicing (rows of a C-contiguous array: the batches share the array's
memory); anything else iterable that yields (x, y) or (x, y, sample_weight) batches -- a kiln.data.Dataset, a
generator, a list -- is iterated once per epoch. class_weight wraps either kind."""
import math

import numpy as np

from .. import _C
from ._composite_rows import RaggedRows, SparseRows, is_composite, rows_of
from ._layer import _flatten, _map


def unpack_x_y_sample_weight(data):
    """(x,) / (x, y) / (x, y, sample_weight) / x -> x, y, sample_weight (Keras' rule: tuples only)."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if len(data) == 1:
        return data[0], None, None
    if len(data) == 2:
        return data[0], data[1], None
    if len(data) == 3:
        return data
    raise ValueError(f"Data is expected to be in format `x`, `(x,)`, `(x, y)`, or `(x, y, sample_weight)`, found: "
                     f"{data!r}")


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    if y is None:
        return (x,)
    if sample_weight is None:
        return (x, y)
    return (x, y, sample_weight)


# ---- data ---------------------------------------------------------------------------------

def _is_pandas(x):
    return type(x).__name__ in ("Series", "DataFrame") and type(x).__module__.partition(".")[0] == "pandas"


def _is_array(x):
    return isinstance(x, (np.ndarray, _C.Tensor, _C.Variable, RaggedRows, SparseRows)) or is_composite(x) or \
        _is_pandas(x)


def _is_array_structure(x):
    if _is_array(x):
        return True
    if isinstance(x, (list, tuple)) and x and all(_is_array(v) for v in x):
        return True
    if isinstance(x, dict) and x and all(_is_array(v) for v in x.values()):
        return True
    return False


def _as_numpy(x):
    """An array's values as NumPy; a ragged or sparse tensor's as its row holder (_composite_rows.py)."""
    if isinstance(x, (RaggedRows, SparseRows)):
        return x
    if _is_pandas(x):
        # Keras' _process_tensorlike: a Series is one feature column, (N,) -> (N, 1); floats in floatx.
        out = x.to_numpy()
        if out.ndim == 1:
            out = out[:, None]
        return out.astype(np.float32) if out.dtype.kind == "f" else np.ascontiguousarray(out)
    if is_composite(x):
        return rows_of(x)
    if isinstance(x, _C.Variable):
        x = x.read_value()
    if isinstance(x, _C.Tensor):
        if x._is_symbolic:
            raise ValueError("fit/evaluate/predict take data with values, not symbolic tensors")
        return x.numpy()  # a view of the tensor's memory
    if isinstance(x, np.ndarray):
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)
    out = np.asarray(x)
    if out.dtype == np.float64 and not isinstance(x, np.ndarray):
        out = out.astype(np.float32)  # TF's literal rule: Python floats are float32
    return out


class _ArrayData:
    """NumPy arrays (or tensors) batched along their first axis: slices of the arrays, so each batch is a
    view (a new array only when shuffled)."""

    def __init__(self, x, y, sample_weight, batch_size, shuffle, steps=None):
        if x is None:
            raise ValueError("No data provided: pass x (and y) to fit/evaluate/predict")
        self.x = _map(_as_numpy, x) if not _is_array(x) else _as_numpy(x)
        self.y = None if y is None else (_map(_as_numpy, y) if not _is_array(y) else _as_numpy(y))
        self.sample_weight = None if sample_weight is None else _as_numpy(sample_weight)
        sizes = {}
        for label, part in (("x", self.x), ("y", self.y), ("sample_weight", self.sample_weight)):
            if part is None:
                continue
            for a in _flatten(part):
                if a.ndim == 0:
                    raise ValueError(f"fit/evaluate/predict: {label} is a scalar; it needs a batch dimension")
                sizes.setdefault(label, []).append(a.shape[0])
        all_sizes = {n for v in sizes.values() for n in v}
        if len(all_sizes) > 1:
            detail = "\n".join(f"  {label} sizes: {', '.join(map(str, v))}" for label, v in sizes.items())
            raise ValueError(f"Data cardinality is ambiguous:\n{detail}\nMake sure all arrays contain the same "
                             "number of samples.")
        self.n = all_sizes.pop()
        if batch_size is None:
            batch_size = 32
        if not isinstance(batch_size, (int, np.integer)) or batch_size <= 0:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = int(batch_size)
        self.shuffle = shuffle
        full = math.ceil(self.n / self.batch_size)
        self.steps = full if steps is None else min(int(steps), full)

    def batches(self, epoch=0):
        n, bs = self.n, self.batch_size
        order = np.random.permutation(n) if self.shuffle and self.shuffle != "batch" else None
        if self.shuffle == "batch":
            order = np.arange(n)
            for start in range(0, n, bs):
                np.random.shuffle(order[start:start + bs])
        for step in range(self.steps):
            lo, hi = step * bs, min((step + 1) * bs, n)
            if order is None:
                take = (lambda a: a.take(np.arange(lo, hi)) if isinstance(a, (RaggedRows, SparseRows)) else a[lo:hi])
            else:
                idx = order[lo:hi]
                take = (lambda a: a.take(idx) if isinstance(a, (RaggedRows, SparseRows)) else np.take(a, idx, axis=0))
            x = _map(take, self.x)
            y = None if self.y is None else _map(take, self.y)
            sw = None if self.sample_weight is None else take(self.sample_weight)
            yield pack_x_y_sample_weight(x, y, sw)


class _IterableData:
    """Batches from anything iterable (a kiln.data.Dataset, a list, a generator function's result): a new
    pass each epoch; the number of steps is len() when it has one, else learned from the first pass."""

    def __init__(self, data, steps=None):
        self.data = data
        self.steps = steps
        if self.steps is None:
            try:
                n = len(data)
                self.steps = n if n >= 0 else None
            except (TypeError, ValueError):
                self.steps = None
        self._iterator = None
        self._one_shot = iter(data) is data  # an iterator: one pass only, consumed across epochs

    def batches(self, epoch=0):
        if self._one_shot:
            if self._iterator is None:
                self._iterator = self.data
            source = self._iterator
        else:
            source = iter(self.data)
        for step, batch in enumerate(source):
            # Keras hands train_step the element as it is: a dataset of images gives the batch tensor itself.
            yield tuple(batch) if isinstance(batch, list) else batch
            if self.steps is not None and step + 1 >= self.steps:
                break


class _SequenceData:
    """A keras.utils.Sequence: its batches by index each epoch, then its on_epoch_end (Keras' order)."""

    def __init__(self, data, steps=None):
        self.data = data
        self.steps = steps if steps is not None else len(data)

    def batches(self, epoch=0):
        for i in range(min(self.steps, len(self.data))):
            batch = self.data[i]
            yield tuple(batch) if isinstance(batch, list) else batch
        self.data.on_epoch_end()


class _ClassWeighted:
    """Keras' class_weight: each sample's weight times its class's weight (the class is the label, or the argmax of
    a one-hot row), for a single-output model."""

    def __init__(self, data, class_weight):
        if not isinstance(class_weight, dict):
            raise ValueError(f"`class_weight` should be a dict mapping class indices to weights, got {class_weight!r}")
        n = int(max(class_weight)) + 1 if class_weight else 0
        if sorted(int(k) for k in class_weight) != list(range(n)):
            raise ValueError("Expected `class_weight` to be a dict with keys from 0 to one less than the number of "
                             f"classes, found {class_weight}")
        self.table = np.array([class_weight[k] for k in sorted(class_weight)], dtype=np.float32)
        self.data = data

    @property
    def steps(self):
        return self.data.steps

    @steps.setter
    def steps(self, value):
        self.data.steps = value

    def batches(self, epoch=0):
        for batch in self.data.batches(epoch):
            x, y, sw = unpack_x_y_sample_weight(batch)
            if y is None:
                yield batch
                continue
            if isinstance(y, (list, tuple, dict)):
                raise ValueError("`class_weight` is only supported for Models with a single output.")
            labels = np.asarray(y)
            if labels.ndim > 2:
                raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
            classes = labels.argmax(axis=1) if labels.ndim == 2 and labels.shape[1] > 1 else \
                labels.reshape(-1).astype(np.int64)
            weights = self.table[classes]
            if sw is not None:
                weights = np.asarray(sw, dtype=np.float32) * weights
            yield pack_x_y_sample_weight(x, y, weights)


def _make_data(x, y=None, sample_weight=None, batch_size=None, shuffle=False, steps=None):
    if _is_array_structure(x) or (isinstance(x, (list, tuple)) and x and isinstance(x[0], (int, float))):
        return _ArrayData(x, y, sample_weight, batch_size, shuffle, steps)
    if y is not None:
        raise ValueError("`y` argument is not supported when using a dataset or an iterable of batches as input: the "
                         "batches give (x, y) themselves.")
    if sample_weight is not None:
        raise ValueError("`sample_weight` argument is not supported when using a dataset or an iterable of batches "
                         "as input.")
    from ._sequence_utils import Sequence
    if isinstance(x, Sequence):
        return _SequenceData(x, steps)
    if not hasattr(x, "__iter__"):
        raise ValueError(f"Unrecognized data type: x={x!r} (of type {type(x).__name__}): fit/evaluate/predict take "
                         "NumPy arrays or tensors, or an iterable of (x, y) batches such as a kiln.data.Dataset")
    return _IterableData(x, steps)


def _batch_samples(data):
    x = unpack_x_y_sample_weight(data)[0]
    for leaf in _flatten(x):
        shape = getattr(leaf, "shape", None)
        if shape is not None and len(shape):
            return int(shape[0])
    return 0



def _split(x, y, sample_weight, fraction):
    """Keras' validation_split: the last `fraction` of the samples (before any shuffling) validate."""
    first = _flatten(x)[0]
    n = len(first)
    split = int(n * (1.0 - fraction))
    if split == 0 or split == n:
        raise ValueError(f"Training data contains {n} samples, which is not sufficient to split it into a validation "
                         f"and training set as specified by `validation_split={fraction}`. Either provide more data, "
                         "or a different value for the `validation_split` argument.")

    def head(a):
        return None if a is None else _map(lambda v: _as_numpy(v)[:split], a)

    def tail(a):
        return None if a is None else _map(lambda v: _as_numpy(v)[split:], a)
    return (head(x), head(y), head(sample_weight)), pack_x_y_sample_weight(tail(x), tail(y), tail(sample_weight))
