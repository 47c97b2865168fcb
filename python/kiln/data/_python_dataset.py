"""Datasets whose passes Python makes (tf.data's transformations the engine has no
node for: padded_batch, unbatch, window, flat_map, interleave, scan, ...).

A PyDataset iterates in Python when iterated from Python; when an engine
transformation is stacked on it, or a kiln.function loops over it, it becomes one
engine generator node whose callbacks run these same passes (so it works inside
kiln.function's dataset loop too). Its cardinality is kept in Python (the engine
reports a generator as unknown)."""
import numpy as _np

from .. import errors as _errors
from .. import nest as _nest
from .._ops import convert_to_tensor as _convert
from ..function import TensorSpec
from . import _cards
from . import _composite_elements as _ce
from ._dataset import Dataset, _Structure, _UNKNOWN, _spec_of


class PyDataset(Dataset):
    """`open_pass()` returns an iterator of one pass's elements, structures of eager
    tensors. `spec` and `template` (the element structure) may be callables, asked once
    when first needed; `template` None reads it from the first element."""

    def __init__(self, open_pass, parents=(), spec=_UNKNOWN, template=None, card=_cards.UNKNOWN,
                 nested_datasets=False, engine_specs=None, options=None):
        for p in parents:
            if p._fed:
                raise _errors.UnimplementedError(
                    "This transformation of a Dataset argument inside a traced function runs in Python and cannot "
                    "follow the dataset each call passes: apply it outside the function (or capture the dataset "
                    "instead of passing it).")
        self._open_pass = _eagerly(open_pass)
        self._engine = None
        self._lazy_spec = spec if callable(spec) else None
        self._engine_specs = engine_specs
        self._init_common(_Structure(None if callable(template) else template, nested_datasets,
                                     resolve=_template_resolver(template, self._open_pass)),
                          _UNKNOWN if callable(spec) else spec, parents, card, False, options)

    @property
    def element_spec(self):
        if self._spec is _UNKNOWN and self._lazy_spec is not None:
            with _init_scope():
                self._spec = self._lazy_spec()
            source = getattr(self._lazy_spec, "source", None)
            self._spec_from_peek = source is not None and getattr(source, "_spec_from_peek", False)
        if self._spec is _UNKNOWN:
            self._spec_from_peek = True
            first = next(iter(self._open_pass()), None)
            if first is None:
                raise ValueError("The element_spec of an empty dataset whose elements come from a function is "
                                 "unknown")
            self._spec = _nest.map_structure(_spec_of, first)
        return self._spec

    def _peek(self):
        first = next(iter(self._open_pass()), None)
        return None if first is None else _ce.flatten(first)

    # ---- the engine node, made when first needed ------------------------------------------
    @property
    def _ds(self):
        if self._engine is None:
            specs = self._engine_specs() if self._engine_specs is not None else _nest.flatten(
                _ce.loose_spec(self.element_spec) if _ce.holds_composites(self.element_spec) else self.element_spec,
                expand_composites=True)
            open_pass = self._open_pass  # never self: the engine node would keep this dataset in a cycle

            def open_engine_pass():
                it = iter(open_pass())
                return lambda: _flat_or_none(next(it, None))

            from .. import _C
            self._engine = _C.Dataset.from_generator(open_engine_pass, [s._kiln_spec() for s in specs])
        return self._engine

    def __iter__(self):
        from ._iterator import OwnedIterator
        pack = self._pack
        return OwnedIterator(self, (pack(_ce.flatten(e)) for e in self._open_pass()))


def _template_resolver(template, open_pass):
    """What tells the element structure when first needed: `template` if a callable,
    else the first element of a pass."""
    def resolve():
        with _init_scope():
            if callable(template):
                return template()
            first = next(iter(open_pass()), None)
        if first is None:
            raise ValueError("The structure of an empty dataset whose elements come from a function is unknown")
        return first

    return resolve


def _init_scope():
    from .. import _C
    return _C.init_scope()


def _eagerly(open_pass):
    """Each step of a pass runs eagerly, also while a function traces (its tensors are
    data, never graph constants), and nothing of that leaks into the caller's code
    between steps."""
    def eager_pass():
        with _init_scope():
            it = iter(open_pass())
        while True:
            with _init_scope():
                element = next(it, _DONE)
            if element is _DONE:
                return
            yield element

    return eager_pass


_DONE = object()


def _flat_or_none(element):
    if element is None:
        return None
    return [t.stacked() if isinstance(t, WindowRows) else t for t in _ce.flatten(element)]


class WindowRows:
    """One component of a window: its elements as they came. Iterated in Python it is a
    dataset of them (their shapes may differ); through the engine, one stacked tensor."""
    __slots__ = ("tensors", "spec")

    def __init__(self, tensors, spec):
        self.tensors, self.spec = tensors, spec

    def dataset(self):
        tensors = self.tensors
        return PyDataset(lambda: iter(tensors), spec=self.spec, template=0, card=len(tensors))

    def stacked(self):
        shapes = {tuple(t.shape.as_list()) for t in self.tensors}
        if len(shapes) > 1:
            raise _errors.InvalidArgumentError(
                f"The elements of a window have different shapes {sorted(shapes)}: such windows are iterated in "
                "Python only (flat_map them outside a traced loop).")
        return _convert(_np.stack([to_numpy(t) for t in self.tensors]), self.tensors[0].dtype)


# ---- helpers shared by the transformations ----------------------------------------------

def to_numpy(t):
    return t.numpy() if hasattr(t, "numpy") else _np.asarray(t)


def to_tensor(array, dtype):
    return _convert(array, dtype)


def flat_numpy(element):
    return [to_numpy(t) for t in _nest.flatten(element)]


def lazy_spec(dataset):
    spec = lambda: dataset.element_spec  # noqa: E731
    spec.source = dataset  # whether its spec was read from a first element
    return spec


def relaxed_spec(dataset):
    """The element spec as far as TF's would know it: where Kiln read it from a first
    element (a map's output), every dim is None (TF's traced function leaves the dims it
    cannot prove unknown; a later element may differ)."""
    spec = dataset.element_spec
    if not getattr(dataset, "_spec_from_peek", False):
        return spec
    return _nest.map_structure(
        lambda s: s if s.shape.rank is None else (_ce.loose_spec(s) if _ce.is_composite_spec(s) else
                                                  TensorSpec([None] * s.shape.rank, s.dtype)), spec)


def lazy_template(dataset):
    return lambda: dataset._template()


def known_spec(dataset):
    """The element spec, or _UNKNOWN where only running a function would tell."""
    return dataset._spec


def compatible_spec(a, b):
    """The most specific spec both TensorSpecs fit (dims that differ become None); composite specs of one
    type and dtype give their loose spec."""
    if _ce.is_composite_spec(a) or _ce.is_composite_spec(b):
        if type(a) is not type(b) or a.dtype != b.dtype or (
                getattr(a, "ragged_rank", 0) != getattr(b, "ragged_rank", 0)):
            raise TypeError(f"Incompatible dataset elements:\n  {a!r} vs.\n  {b!r}")
        return a if a == b else _ce.loose_spec(a)
    if a.shape.rank is None or b.shape.rank is None or a.shape.rank != b.shape.rank:
        return TensorSpec(None, a.dtype)
    dims = [x if x == y else None for x, y in zip(a.shape.as_list(), b.shape.as_list())]
    return TensorSpec(dims, a.dtype)


def merged_specs(specs, what):
    """The specs of datasets whose elements one dataset yields (concatenate, sample_from_datasets):
    the same structure and dtypes, the dims they share."""
    first = specs[0]
    for other in specs[1:]:
        try:
            _nest.assert_same_structure(first, other, check_types=False)
            ok = all(x.dtype == y.dtype for x, y in zip(_nest.flatten(first), _nest.flatten(other)))
        except (ValueError, TypeError):
            ok = False
        if not ok:
            raise TypeError(f"Incompatible dataset elements in {what}:\n  {first!r} vs.\n  {other!r}")
        first = _nest.map_structure(compatible_spec, first, other)
    return first


def traced(fn):
    """A function as TF's transformations run theirs: traced once per signature."""
    from ..function import function as _function
    return fn if hasattr(fn, "get_concrete_function") else _function(fn)
