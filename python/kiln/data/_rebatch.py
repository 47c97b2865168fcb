"""Dataset.rebatch and Dataset.random, made in Python (see _python_dataset)."""
import numpy as _np

from .. import dtypes as _dtypes
from .. import errors as _errors
from .. import nest as _nest
from .._ops import convert_to_tensor as _convert
from ..function import TensorSpec
from . import _cards
from ._python_dataset import PyDataset, flat_numpy, lazy_template, relaxed_spec, to_tensor


def _batch_sizes(batch_size):
    sizes = batch_size.numpy() if hasattr(batch_size, "numpy") else batch_size
    sizes = _np.asarray(sizes)
    if sizes.ndim > 1:
        raise ValueError(f"`batch_size` must be a scalar or a vector, got shape {list(sizes.shape)}")
    sizes = [int(s) for s in sizes.reshape(-1)]
    if not sizes:
        raise _errors.InvalidArgumentError("batch_sizes must contain at least one value")
    if any(s < 0 for s in sizes):
        raise _errors.InvalidArgumentError(f"batch_sizes must be non-negative, got {sizes}")
    return sizes


def rebatch(ds, batch_size, drop_remainder=False):
    """TF's rebatch: unbatch().batch(n) in one copy; a vector `batch_size` is cycled
    through, one size per output batch; `drop_remainder` drops a last batch shorter than
    its size."""
    sizes = _batch_sizes(batch_size)
    spec = relaxed_spec(ds)
    flat_specs = _nest.flatten(spec)
    for s in flat_specs:
        if s.shape.rank == 0:
            raise ValueError("Cannot rebatch an input with scalar components: it must be batched.")
    lead = sizes[0] if drop_remainder and len(set(sizes)) == 1 else None
    out_spec = _nest.pack_sequence_as(spec, [
        TensorSpec(None if s.shape.rank is None else [lead] + s.shape.as_list()[1:], s.dtype) for s in flat_specs])
    dtypes = [s.dtype for s in flat_specs]
    n = ds._cardinality()
    card = _cards.INFINITE if n == _cards.INFINITE else (0 if n == 0 else _cards.UNKNOWN)

    def open_pass():
        pending = [[] for _ in flat_specs]  # per component, arrays whose rows wait for a batch
        count, turn = 0, 0

        def cut(size):
            out = []
            for i, parts in enumerate(pending):
                joined = _np.concatenate(parts) if parts else _np.zeros((0,), dtypes[i].as_numpy_dtype)
                out.append(to_tensor(joined[:size], dtypes[i]))
                pending[i] = [joined[size:]]
            return _nest.pack_sequence_as(ds._template(), out)

        for element in ds:
            arrays = flat_numpy(element)
            rows = {a.shape[0] if a.ndim else None for a in arrays}
            if None in rows or len(rows) != 1:
                raise _errors.InvalidArgumentError(
                    "Input element components must have the same, non-scalar leading dimension, got "
                    f"{sorted(r for r in rows if r is not None)}")
            for parts, a in zip(pending, arrays):
                parts.append(a)
            count += rows.pop()
            while count >= sizes[turn % len(sizes)]:
                size = sizes[turn % len(sizes)]
                yield cut(size)
                count -= size
                turn += 1
        if count and not drop_remainder:
            yield cut(count)

    return PyDataset(open_pass, parents=(ds,), spec=out_spec, template=lazy_template(ds), card=card)


def random(seed=None, rerandomize_each_iteration=None):
    """Dataset.random: int64 scalars, uniform in [0, 2**32) as TF's (its generator's
    uint32 outputs), forever. The same sequence on every pass unless
    `rerandomize_each_iteration`; a seed makes it reproducible."""
    from .. import random as _random
    if seed is None:
        seed = int(_random.uniform([], 0, 2 ** 31 - 1, dtype=_dtypes.int64).numpy())
    passes = [0]

    def open_pass():
        epoch = passes[0]
        passes[0] += 1
        rng = _np.random.Generator(_np.random.Philox([int(seed) & (2 ** 64 - 1),
                                                      epoch if rerandomize_each_iteration else 0]))
        while True:
            for value in rng.integers(0, 2 ** 32, size=256, dtype=_np.int64):
                yield _convert(value, _dtypes.int64)

    return PyDataset(open_pass, spec=TensorSpec([], _dtypes.int64), template=0, card=_cards.INFINITE)
