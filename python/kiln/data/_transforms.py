"""tf.data's transformations made in Python (see _python_dataset): TF's semantics,
argument names and errors. Functions a transformation applies per element (scan's,
group_by_window's key) are traced once, as TF's; functions that return datasets
(flat_map, interleave, group_by_window's reduce_func) run eagerly on each element."""
import os as _os

import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import nest as _nest
from .._ops import convert_to_tensor as _convert
from ..function import TensorSpec
from ..tensor_shape import TensorShape
from . import _cards
from . import _composite_elements as _ce
from ._dataset import Dataset, _call_unpacked
from ._parallel_interleave import parallel_interleave
from ._parallel_map import workers_for
from ._python_dataset import (PyDataset, WindowRows, flat_numpy, lazy_spec, lazy_template, merged_specs,
                              relaxed_spec, to_numpy, to_tensor, traced)


# ---- padded_batch ------------------------------------------------------------------------

def _default_padding(dtype):
    if dtype == _dtypes.string:
        return b""
    if dtype == _dtypes.bool:
        return False
    return 0


def _as_padded_shape(value):
    """padded_shapes' entries: a TensorShape, a list of dims (None or -1: the batch's
    longest), or an int n for [n]."""
    if isinstance(value, int):
        value = [value]
    if hasattr(value, "numpy"):
        value = value.numpy().tolist()
        value = [value] if isinstance(value, int) else value
    shape = TensorShape(value)
    if shape.rank is None:
        return shape
    return TensorShape([None if d is None or d == -1 else d for d in shape.as_list()])


def _padding_value(value, dtype):
    if hasattr(value, "dtype") and hasattr(value, "numpy"):
        if value.dtype != dtype:
            raise TypeError(f"Invalid `padding_values`. `padding_values` values should have type {dtype.name}, "
                            f"but got {value.dtype.name}.")
        value = value.numpy()
    array = _np.asarray(value)
    if array.ndim != 0:
        raise ValueError(f"Invalid `padding_values`. `padding_values` values should be scalars, but got {value!r}.")
    if dtype == _dtypes.string:
        item = array.item()
        return item.encode() if isinstance(item, str) else item
    return array.astype(dtype._np)


def padded_batch(ds, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False):
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise ValueError(f"batch_size must be greater than zero, got {batch_size}")
    spec = relaxed_spec(ds)
    flat_specs = _nest.flatten(spec)
    if padded_shapes is None:
        for i, s in enumerate(flat_specs):
            if s.shape.rank is None:
                raise ValueError(f"You must provide `padded_shapes` argument because component {i} has unknown rank.")
        shapes = [s.shape for s in flat_specs]
    else:
        leaves = _nest.flatten_up_to(spec, padded_shapes) if _nest.is_nested(spec) else [padded_shapes]
        shapes = [_as_padded_shape(v) for v in leaves]
        for s, ps in zip(flat_specs, shapes):
            if s.shape.rank is not None and ps.rank is not None and (
                    ps.rank != s.shape.rank or not _fits(s.shape, ps)):
                raise ValueError(f"The padded shape {ps} is not compatible with the shape {s.shape} of the "
                                 f"corresponding input component.")
    if padding_values is None:
        pads = [_padding_value(_default_padding(s.dtype), s.dtype) for s in flat_specs]
    else:
        leaves = (_nest.flatten_up_to(spec, padding_values) if _nest.is_nested(padding_values)
                  else [padding_values] * len(flat_specs))
        pads = [_padding_value(v, s.dtype) for v, s in zip(leaves, flat_specs)]
    lead = batch_size if drop_remainder else None
    out_specs = [TensorSpec(None if ps.rank is None else [lead] + ps.as_list(), s.dtype)
                 for s, ps in zip(flat_specs, shapes)]
    dtypes = [s.dtype for s in flat_specs]

    def open_pass():
        rows = []
        for element in ds:
            rows.append(flat_numpy(element))
            if len(rows) == batch_size:
                yield _pad_rows(rows, shapes, pads, dtypes, ds)
                rows = []
        if rows and not drop_remainder:
            yield _pad_rows(rows, shapes, pads, dtypes, ds)

    return PyDataset(open_pass, parents=(ds,), spec=_nest.pack_sequence_as(spec, out_specs),
                     template=lazy_template(ds),
                     card=_cards.batch(ds._cardinality(), batch_size, bool(drop_remainder)))


def _fits(shape, padded):
    return all(p is None or d is None or d <= p for d, p in zip(shape.as_list(), padded.as_list()))


def _pad_rows(rows, shapes, pads, dtypes, ds):
    out = []
    for c, (shape, pad, dtype) in enumerate(zip(shapes, pads, dtypes)):
        arrays = [r[c] for r in rows]
        rank = arrays[0].ndim
        if any(a.ndim != rank for a in arrays) or (shape.rank is not None and shape.rank != rank):
            raise _errors.InvalidArgumentError(
                f"All elements in a batch must have the same rank as the padded shape for component{c}: expected "
                f"rank {rank if shape.rank is None else shape.rank} but got element with rank "
                f"{next(a.ndim for a in arrays if a.ndim != rank) if any(a.ndim != rank for a in arrays) else rank}")
        wanted = shape.as_list() if shape.rank is not None else [None] * rank
        target = []
        for axis, want in enumerate(wanted):
            longest = max(a.shape[axis] for a in arrays)
            if want is not None and longest > want:
                raise _errors.InvalidArgumentError(
                    f"Attempted to pad to a smaller size than the input element. Component {c}, dimension {axis}: "
                    f"padded size {want}, element size {longest}.")
            target.append(longest if want is None else want)
        np_dtype = object if dtype == _dtypes.string else arrays[0].dtype
        batch = _np.empty([len(arrays)] + target, dtype=np_dtype)
        batch[...] = pad
        for i, a in enumerate(arrays):
            batch[(i,) + tuple(slice(0, n) for n in a.shape)] = a
        out.append(to_tensor(batch, dtype))
    return _nest.pack_sequence_as(ds._template(), out)


# ---- unbatch, window, flat_map, interleave -------------------------------------------------

def unbatch(ds):
    spec = relaxed_spec(ds)
    flat_specs = _nest.flatten(spec)
    for s in flat_specs:
        if s.shape.rank == 0:
            raise ValueError("Cannot unbatch an input with scalar components.")
    lead = {s.shape.as_list()[0] for s in flat_specs if s.shape.rank}
    out_spec = _nest.map_structure(
        lambda s: TensorSpec(None if s.shape.rank is None else s.shape.as_list()[1:], s.dtype), spec)
    n = ds._cardinality()
    known = len(lead) == 1 and None not in lead and all(s.shape.rank for s in flat_specs)
    card = _cards.INFINITE if n == _cards.INFINITE else (n * lead.pop() if known and n >= 0 else _cards.UNKNOWN)

    def open_pass():
        for element in ds:
            flat = _nest.flatten(element)
            sizes = {int(t.shape[0]) if t.shape.rank else None for t in flat}
            if None in sizes:
                raise _errors.InvalidArgumentError("Input element must have a non-scalar value in each component.")
            if len(sizes) != 1:
                raise _errors.InvalidArgumentError(
                    f"Input element components must have the same leading dimension size, got {sorted(sizes)}.")
            arrays = [to_numpy(t) for t in flat]
            for i in range(sizes.pop()):
                yield _nest.pack_sequence_as(ds._template(), [to_tensor(a[i], t.dtype) for a, t in zip(arrays, flat)])

    return PyDataset(open_pass, parents=(ds,), spec=out_spec, template=lazy_template(ds), card=card)


class DatasetSpec:
    """tf.data.DatasetSpec: the type of a dataset-valued element (window's components)."""
    __slots__ = ("element_spec", "dataset_shape")

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec
        self.dataset_shape = TensorShape(dataset_shape)

    def __eq__(self, other):
        return (isinstance(other, DatasetSpec) and self.element_spec == other.element_spec
                and self.dataset_shape == other.dataset_shape)

    def __hash__(self):
        return hash(repr(self))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, {self.dataset_shape!r})"


def window(ds, size, shift=None, stride=1, drop_remainder=False):
    size = int(size)
    shift = size if shift is None else int(shift)
    stride = int(stride)
    for name, v in (("size", size), ("shift", shift), ("stride", stride)):
        if v <= 0:
            raise ValueError(f"Window {name} must be greater than zero, but got {v}.")
    spec = ds.element_spec
    flat_specs = _nest.flatten(spec)
    component_specs = _nest.flatten(relaxed_spec(ds))

    def open_pass():
        # The elements from the current window's start on; windows start `shift` apart.
        buffer, it = [], iter(ds)
        exhausted = False
        needed = (size - 1) * stride + 1

        def pull():
            nonlocal exhausted
            element = next(it, None)
            if element is None:
                exhausted = True
            else:
                buffer.append(_nest.flatten(element))

        while True:
            while not exhausted and len(buffer) < needed:
                pull()
            if not buffer or (drop_remainder and len(buffer) < needed):
                return
            rows = buffer[:needed:stride]
            yield [WindowRows([r[c] for r in rows], component_specs[c]) for c in range(len(flat_specs))]
            # The next window starts `shift` elements on: drop those (pulling any the buffer lacks).
            while shift > len(buffer) and not exhausted:
                pull()
            buffer = buffer[shift:]

    engine_specs = lambda: [TensorSpec(None if s.shape.rank is None else [None] + s.shape.as_list(), s.dtype)  # noqa
                            for s in flat_specs]
    return PyDataset(open_pass, parents=(ds,), spec=_nest.map_structure(DatasetSpec, spec),
                     template=lazy_template(ds), nested_datasets=True, engine_specs=engine_specs,
                     card=_cards.window(ds._cardinality(), size, shift, stride, bool(drop_remainder)))


def _dataset_of(map_func, element, what):
    result = _call_unpacked(map_func, element)
    if not isinstance(result, Dataset):
        raise TypeError(f"The `map_func` argument of `{what}` must return a `Dataset` object. Got "
                        f"{type(result)}.")
    return result


def _first_inner(ds, map_func, what):
    """The dataset map_func makes of the first element: what TF's trace of map_func
    tells of the output (its element spec and structure)."""
    first = next(iter(ds), None)
    if first is None:
        return None
    return _dataset_of(map_func, first, what)


def _lazy_inner(ds, map_func, what):
    memo = []

    def inner():
        if not memo:
            memo.append(_first_inner(ds, map_func, what))
        if memo[0] is None:
            raise ValueError(f"The element_spec of an empty dataset's {what} is unknown")
        return memo[0]

    return (lambda: inner().element_spec), (lambda: inner()._template())


def flat_map(ds, map_func):
    def open_pass():
        for element in ds:
            yield from _dataset_of(map_func, element, "flat_map")

    spec, template = _lazy_inner(ds, map_func, "flat_map")
    return PyDataset(open_pass, parents=(ds,), spec=spec, template=template)


def interleave(ds, map_func, cycle_length=None, block_length=None, num_parallel_calls=None, deterministic=True):
    """TF's interleave: `cycle_length` datasets open at once, `block_length` elements from
    each in turn; an exhausted one is replaced by the next input element's dataset. With
    num_parallel_calls the open datasets are read ahead on threads (_parallel_interleave.py)."""
    if cycle_length is None or int(cycle_length) == -1:  # AUTOTUNE: the cores, as TF's default
        cycle_length = _os.cpu_count() or 1
    block_length = 1 if block_length is None else int(block_length)
    cycle_length = int(cycle_length)
    if cycle_length <= 0:
        raise _errors.InvalidArgumentError(f"cycle_length must be greater than zero, got {cycle_length}")
    if block_length <= 0:
        raise _errors.InvalidArgumentError(f"block_length must be greater than zero, got {block_length}")

    def open_pass():
        inputs = iter(ds)
        slots = [None] * cycle_length
        open_count, index, taken, end_of_input = 0, 0, 0, False
        while not end_of_input or open_count > 0:
            if slots[index] is not None:
                element = next(slots[index], None)
                if element is not None:
                    yield element
                    taken += 1
                    if taken == block_length:
                        index, taken = (index + 1) % cycle_length, 0
                    continue
                slots[index] = None
                open_count -= 1
                index, taken = (index + 1) % cycle_length, 0
            elif not end_of_input:
                element = next(inputs, None)
                if element is None:
                    end_of_input = True
                else:
                    slots[index] = iter(_dataset_of(map_func, element, "interleave"))
                    open_count += 1
            else:
                index, taken = (index + 1) % cycle_length, 0

    spec, template = _lazy_inner(ds, map_func, "interleave")
    workers = workers_for(num_parallel_calls)
    if workers > 1:
        open_pass = parallel_interleave(ds, lambda element: _dataset_of(map_func, element, "interleave"),
                                        cycle_length, block_length, min(workers, cycle_length), deterministic)
    return PyDataset(open_pass, parents=(ds,), spec=spec, template=template)


# ---- cache, concatenate, scan, unique, take_while ----------------------------------------------

def cache(ds, filename=""):
    """The first complete pass is kept in memory and later passes replay it (a pass
    left early keeps nothing, as TF's). A filename is accepted and the cache kept in
    memory all the same."""
    kept = []

    def open_pass():
        if kept:
            yield from kept[0]
            return
        seen = []
        for element in ds:
            seen.append(element)
            yield element
        if not kept:
            kept.append(seen)

    return PyDataset(open_pass, parents=(ds,), spec=lazy_spec(ds), template=lazy_template(ds),
                     card=ds._cardinality())


def concatenate(ds, other):
    if not isinstance(other, Dataset):
        raise TypeError(f"Invalid `dataset`. `dataset` must be a `tf.data.Dataset` object, got {type(other)}.")
    spec = merged_specs([ds.element_spec, other.element_spec], "`concatenate`")

    def open_pass():
        yield from ds
        for element in other:
            yield ds._pack(_ce.flatten(element))

    return PyDataset(open_pass, parents=(ds, other), spec=spec, template=lazy_template(ds),
                     card=_cards.concatenate(ds._cardinality(), other._cardinality()))


def _check_state(template, new_state):
    try:
        _nest.assert_same_structure(template, new_state, check_types=False)
    except (ValueError, TypeError) as e:
        raise TypeError(f"The element types for the new state must match the initial state. Expected "
                        f"{template!r}; got {new_state!r}.") from e
    out = []
    for old, new in zip(_nest.flatten(template), _nest.flatten(new_state)):
        new = _convert(new, old.dtype)
        if new.dtype != old.dtype:
            raise TypeError(f"The element types for the new state must match the initial state. Expected "
                            f"{old.dtype.name}; got {new.dtype.name}.")
        out.append(new)
    return _nest.pack_sequence_as(template, out)


def scan(ds, initial_state, scan_func):
    for leaf in _nest.flatten(initial_state):
        if getattr(leaf, "_is_symbolic", False):
            raise _errors.UnimplementedError(
                "scan's initial_state is a symbolic tensor of the function being traced: Kiln's scan runs in Python "
                "and needs its value; give a Python or NumPy value (or build the dataset outside the function).")
    from .. import _C
    with _C.init_scope():
        state0 = _nest.map_structure(_convert, initial_state)
    fn = traced(scan_func)

    def open_pass():
        state = state0
        for element in ds:
            result = fn(state, element)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError("The scan function must return a pair comprising the new state and the output "
                                f"value, got {result!r}.")
            state = _check_state(state0, result[0])
            out = result[1]
            yield tuple(out) if isinstance(out, list) else _nest.map_structure(_convert, out)

    return PyDataset(open_pass, parents=(ds,), card=ds._cardinality())


def unique(ds):
    spec = ds.element_spec
    if _nest.is_nested(spec) or spec.dtype not in (_dtypes.int32, _dtypes.int64, _dtypes.string):
        raise TypeError(f"`tf.data.Dataset.unique` does not support type {spec!r} -- only `tf.int32`, "
                        "`tf.int64`, and `tf.string` are supported.")

    def open_pass():
        seen = set()
        for element in ds:
            if element.shape.rank != 0:
                raise _errors.InvalidArgumentError(
                    f"Unique dataset only supports scalar elements, got an element of shape {element.shape}.")
            key = element.numpy()
            key = key.item() if hasattr(key, "item") else key
            if key not in seen:
                seen.add(key)
                yield element

    return PyDataset(open_pass, parents=(ds,), spec=spec, template=0,
                     card=_cards.INFINITE if ds._cardinality() == _cards.INFINITE else _cards.UNKNOWN)


def take_while(ds, predicate):
    fn = traced(predicate)

    def open_pass():
        for element in ds:
            keep = _convert(_call_unpacked(fn, element))
            if keep.dtype != _dtypes.bool or keep.shape.rank != 0:
                raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                                 f"return type was {keep.dtype.name} {keep.shape}.")
            if not bool(keep):
                return
            yield element

    return PyDataset(open_pass, parents=(ds,), spec=lazy_spec(ds), template=lazy_template(ds))


# ---- errors and counts -------------------------------------------------------------------------

def ignore_errors(ds, log_warning=False):
    """Skips the elements whose making raised a TF error (kiln.errors.OpError): a
    dataset's map function failing on some elements."""
    source = getattr(ds, "_map_source", None)

    def warn(e):
        if log_warning:
            print(f"Ignoring error: {e}")

    def open_pass():
        if source is not None:
            # A map's own elements: the input's elements mapped here, each failure skipped.
            parent, apply = source
            for element in parent:
                try:
                    flat = apply(_ce.flatten(element))
                except _errors.OpError as e:
                    warn(e)
                    continue
                yield ds._pack(flat)
            return
        if isinstance(ds, PyDataset):  # a Python pass cannot go on after an error: it ends there
            try:
                yield from ds
            except _errors.OpError as e:
                warn(e)
            return
        it = iter(ds._ds)
        while True:
            try:
                flat = next(it)
            except StopIteration:
                return
            except _errors.OpError as e:  # the engine's iterator goes on after the element that failed
                warn(e)
                continue
            yield ds._pack(flat)

    return PyDataset(open_pass, parents=(ds,), spec=lazy_spec(ds), template=lazy_template(ds),
                     card=_cards.UNKNOWN if ds._cardinality() >= 0 else ds._cardinality())


def _elements_phrase(n):
    if n == _cards.INFINITE:
        return "an infinite number of elements"
    return f"{n} element{'s' if n != 1 else ''}"


def assert_cardinality(ds, expected_cardinality):
    expected = int(expected_cardinality)

    def open_pass():
        count = 0
        for element in ds:
            count += 1
            if expected != _cards.INFINITE and count > expected:
                raise _errors.FailedPreconditionError(
                    f"Input dataset was expected to contain {_elements_phrase(expected)} but contained at least "
                    f"{_elements_phrase(count)}.")
            yield element
        if count != expected:
            raise _errors.FailedPreconditionError(
                f"Input dataset was expected to contain {_elements_phrase(expected)} but contained only "
                f"{_elements_phrase(count)}.")

    return PyDataset(open_pass, parents=(ds,), spec=lazy_spec(ds), template=lazy_template(ds), card=expected)


# ---- grouping ----------------------------------------------------------------------------------

def _scalar_int64(value, what):
    t = _convert(value)
    if t.dtype != _dtypes.int64 or t.shape.rank != 0:
        raise ValueError(f"Invalid `{what}`. `{what}` must return a single `tf.int64` scalar tensor but its return "
                         f"type is {t.dtype.name} {t.shape}.")
    return int(t)


def group_by_window(ds, key_func, reduce_func, window_size=None, window_size_func=None):
    if window_size is not None and window_size_func is not None:
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be specified, "
                         "not both.")
    if window_size is None and window_size_func is None:
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be specified.")
    key_fn = traced(key_func)
    size_fn = traced(window_size_func) if window_size_func is not None else None

    def size_of(key):
        n = int(window_size) if size_fn is None else _scalar_int64(size_fn(_convert(key, _dtypes.int64)),
                                                                  "window_size_func")
        if n <= 0:
            raise _errors.InvalidArgumentError(f"Window size must be greater than zero, but got {n}.")
        return n

    def window_dataset(elements):
        # The window's elements as they came (their shapes may differ: no stacking).
        return PyDataset(lambda: iter(elements), spec=relaxed_spec(ds), template=lazy_template(ds),
                         card=len(elements))

    def reduce(key, rows):
        result = reduce_func(_convert(key, _dtypes.int64), window_dataset(rows))
        if not isinstance(result, Dataset):
            raise TypeError(f"`reduce_func` must return a `Dataset` object. Got {type(result)}.")
        return result

    def open_pass():
        groups, sizes = {}, {}
        for element in ds:
            key = _scalar_int64(_call_unpacked(key_fn, element), "key_func")
            if key not in sizes:
                sizes[key] = size_of(key)
            groups.setdefault(key, []).append(element)
            if len(groups[key]) == sizes[key]:
                yield from reduce(key, groups.pop(key))
        for key in sorted(groups):  # the groups left at the end, by key, as TF's map of groups
            yield from reduce(key, groups[key])

    def first_output():
        """What reduce_func makes of a window of the first element: its structure and spec."""
        first = next(iter(ds), None)
        if first is None:
            raise ValueError("The element_spec of an empty dataset's group_by_window is unknown")
        key = _scalar_int64(_call_unpacked(key_fn, first), "key_func")
        return reduce(key, [first])

    return PyDataset(open_pass, parents=(ds,), spec=lambda: first_output().element_spec,
                     template=lambda: first_output()._template())


def bucket_by_sequence_length(ds, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    boundaries = [int(b) for b in bucket_boundaries]
    batch_sizes = [int(b) for b in bucket_batch_sizes]
    if len(batch_sizes) != len(boundaries) + 1:
        raise ValueError(f"`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                         f"`len(bucket_batch_sizes)={len(batch_sizes)}` and "
                         f"`len(bucket_boundaries)={len(boundaries)}`.")
    if boundaries != sorted(boundaries):
        raise ValueError(f"`bucket_boundaries` must be sorted, got {boundaries}.")
    from .. import _ops

    def bucket_of(*element):
        # The number of boundaries at or below the length (traced, as TF's key_func).
        length = _ops.cast(element_length_func(*element), _dtypes.int64)
        return _ops.reduce_sum(_ops.cast(_ops.greater_equal(length, _convert(boundaries, _dtypes.int64)),
                                         _dtypes.int64))

    def reduce(bucket, window):
        size = batch_sizes[int(bucket)]
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            if int(bucket) == len(boundaries):
                raise _errors.InvalidArgumentError(
                    "When pad_to_bucket_boundary=True, elements must have length < max(bucket_boundaries).")
            bound = boundaries[int(bucket)] - 1
            shapes = _nest.map_structure(
                lambda s: TensorShape([bound if d is None else d for d in s.shape.as_list()]), window.element_spec)
        return window.padded_batch(size, padded_shapes=shapes, padding_values=padding_values,
                                   drop_remainder=drop_remainder)

    return group_by_window(ds, bucket_of, reduce, window_size=None,
                           window_size_func=lambda bucket: _ops.gather(_convert(batch_sizes, _dtypes.int64), bucket))


# ---- sampling and choosing ----------------------------------------------------------------------

def _check_datasets(datasets, what):
    datasets = list(datasets)
    if not datasets:
        raise ValueError(f"Invalid `datasets`. `datasets` should not be empty (in `{what}`).")
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"Invalid `datasets`. `datasets` must be a list of `tf.data.Dataset` objects, got "
                            f"{type(d)}.")
    return datasets, merged_specs([d.element_spec for d in datasets], f"`{what}`")


def _directed_card(datasets):
    return _cards.INFINITE if any(d._cardinality() == _cards.INFINITE for d in datasets) else _cards.UNKNOWN


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    datasets, spec = _check_datasets(datasets, "sample_from_datasets")
    if weights is None:
        weights = [1.0 / len(datasets)] * len(datasets)
    weights = _np.asarray(to_numpy(weights) if hasattr(weights, "numpy") else weights, _np.float64).reshape(-1)
    if weights.shape[0] != len(datasets):
        raise ValueError(f"Invalid `weights`. The shape of `weights` should be compatible with `[len(datasets)]` "
                         f"but is {list(weights.shape)}.")
    passes = [0]

    def open_pass():
        pass_seed = None if seed is None else int(seed) + (passes[0] if rerandomize_each_iteration else 0)
        passes[0] += 1
        rng = _np.random.default_rng(pass_seed)
        iters = [iter(d) for d in datasets]
        live = [w > 0 for w in weights]
        while any(live):
            w = _np.where(live, weights, 0.0)
            i = int(rng.choice(len(datasets), p=w / w.sum()))
            element = next(iters[i], None)
            if element is None:
                if stop_on_empty_dataset:
                    return
                live[i] = False
                continue
            yield datasets[0]._pack(_ce.flatten(element))

    return PyDataset(open_pass, parents=datasets, spec=spec, template=lazy_template(datasets[0]),
                     card=_directed_card(datasets))


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    datasets, spec = _check_datasets(datasets, "choose_from_datasets")
    if not isinstance(choice_dataset, Dataset) or choice_dataset.element_spec != TensorSpec([], _dtypes.int64):
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar of type `tf.int64`.")

    def open_pass():
        iters = [iter(d) for d in datasets]
        empty = [False] * len(datasets)
        for choice in choice_dataset:
            i = int(choice)
            if not 0 <= i < len(datasets):
                raise _errors.InvalidArgumentError(
                    f"Selector index out of range: {i} >= {len(datasets)}" if i >= 0 else
                    f"Selector index out of range: {i} < 0")
            if empty[i]:
                continue
            element = next(iters[i], None)
            if element is None:
                if stop_on_empty_dataset:
                    return
                empty[i] = True
                if all(empty):
                    return
                continue
            yield datasets[0]._pack(_ce.flatten(element))

    return PyDataset(open_pass, parents=list(datasets) + [choice_dataset], spec=spec,
                     template=lazy_template(datasets[0]), card=_directed_card(datasets))


# ---- rejection resampling -----------------------------------------------------------------------

def _acceptance(initial, target):
    """TF's _calculate_acceptance_probs_with_mixing: per-class acceptance of the filtered stream, and m, the
    share drawn from the original stream."""
    ratio = target / (initial + _np.finfo(_np.float32).tiny)
    top, m = float(ratio.max()), float(ratio.min())
    accept = _np.zeros_like(ratio) if top == m else (ratio - m) / (top - m)
    return accept, m


def rejection_resample(ds, class_func, target_dist, initial_dist=None, seed=None):
    """(class, element) pairs whose classes follow `target_dist` (TF's scheme): a mixture of the dataset itself
    (share m = min(target / initial)) and a pass that keeps each element of class i with probability
    (ratio_i - m) / (max ratio - m). With initial_dist=None the class distribution is estimated as the elements
    go by (counts so far), as TF estimates it."""
    target = _np.asarray(to_numpy(target_dist) if hasattr(target_dist, "numpy") else target_dist,
                         _np.float32).reshape(-1)
    with_class = ds.map(lambda *x: (class_func(*x), x[0] if len(x) == 1 else x))
    static = None
    if initial_dist is not None:
        initial = _np.asarray(to_numpy(initial_dist) if hasattr(initial_dist, "numpy") else initial_dist,
                              _np.float32).reshape(-1)
        if initial.shape != target.shape:
            raise ValueError(f"`initial_dist` and `target_dist` must have the same shape, got {initial.shape} and "
                             f"{target.shape}.")
        static = _acceptance(initial, target)
        if static[1] >= 1.0:
            return with_class  # the data already follow the target distribution
    passes = [0]

    def open_pass():
        rng = _np.random.default_rng(None if seed is None else int(seed) + passes[0])
        passes[0] += 1
        def estimates():
            """TF's estimate of the initial distribution: the class counts so far of a pass of its own."""
            counts = _np.zeros_like(target)
            for element in with_class:
                counts[int(to_numpy(element[0]))] += 1
                yield _acceptance(counts / counts.sum(), target)

        def filtered():
            estimate = None if static is not None else estimates()
            accept = None if static is None else static[0]
            for element in with_class:
                if estimate is not None:
                    accept = next(estimate)[0]
                if rng.random() < accept[int(to_numpy(element[0]))]:
                    yield element

        original, kept = iter(with_class), filtered()
        mixing = None if static is not None else estimates()
        while True:
            m = static[1] if static is not None else next(mixing, (None, 1.0))[1]
            source = original if rng.random() < m else kept
            element = next(source, None)
            if element is None:
                return  # TF: stop_on_empty_dataset=True
            yield with_class._pack(_ce.flatten(element))

    return PyDataset(open_pass, parents=[with_class], spec=with_class.element_spec,
                     template=lazy_template(with_class), card=_cards.UNKNOWN)
