"""Composite tensors (RaggedTensor, SparseTensor) crossing kiln.function: the engine keys and feeds plain
structures, so a composite goes in as a `_Composite(key, components)` namedtuple (its spec's static part as a
string, which the engine keys by value, and its component tensors, which it keys by dtype and shape and relaxes)
and comes out rebuilt from the components, as TF's tf.function flattens a composite by its TypeSpec."""
import collections

Composite = collections.namedtuple("_Composite", ["key", "components"])

_SPECS = {}  # key -> a spec that rebuilds values of that key (one per distinct key)


def is_composite(x):
    return hasattr(x, "_type_spec") and hasattr(type(x), "_type_spec")


def is_composite_spec(x):
    return hasattr(x, "_component_specs")


def holds_composites(value, depth=0):
    if is_composite(value) or is_composite_spec(value) or type(value) is Composite:
        return True
    if depth > 32:
        return False
    if isinstance(value, (list, tuple)):
        return any(holds_composites(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return any(holds_composites(v, depth + 1) for v in value.values())
    return False


def map_nested(value, fn, depth=0):
    """`value` with fn(x) in place of each x that fn changes (returns another object for), looking inside
    lists, tuples (namedtuples kept) and plain dicts, 32 levels deep at most."""
    out = fn(value)
    if out is not value or depth > 32:
        return out
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(map_nested(v, fn, depth + 1) for v in value))
    if isinstance(value, (list, tuple)):
        items = [map_nested(v, fn, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if type(value) is dict:
        return {k: map_nested(v, fn, depth + 1) for k, v in value.items()}
    return value


def _encode_one(value):
    if is_composite(value):
        spec = value._type_spec
        key = spec._trace_key()
        _SPECS.setdefault(key, spec)
        return Composite(key, tuple(spec._to_components(value)))
    if is_composite_spec(value):
        key = value._trace_key()
        _SPECS.setdefault(key, value)
        return Composite(key, tuple(value._component_specs()))
    return value


def encode(value):
    """`value` with each composite (or composite spec) replaced by a Composite of its components (or their
    specs)."""
    return map_nested(value, _encode_one)


def _decode_one(value):
    return _SPECS[value.key]._from_components(list(value.components)) if type(value) is Composite else value


def decode(value):
    """The inverse of encode: Composites rebuilt as RaggedTensors and SparseTensors."""
    return map_nested(value, _decode_one)


def encode_like(value, traced, depth=0):
    """encode(value) for a call of a trace made for `traced` (values or specs): a composite takes the traced
    spec's key where it fits that spec (a SparseTensor of shape (2, 3) for a trace of (None, 3)), so the
    trace accepts it as TF's concrete functions accept compatible values."""
    if is_composite(value) and (is_composite(traced) or is_composite_spec(traced)):
        spec = traced if is_composite_spec(traced) else traced._type_spec
        if type(spec) is type(value._type_spec) and spec.is_compatible_with(value):
            _SPECS.setdefault(spec._trace_key(), spec)
            return Composite(spec._trace_key(), tuple(spec._to_components(value)))
        return encode(value)
    if depth > 32:
        return value
    if isinstance(value, (list, tuple)) and isinstance(traced, (list, tuple)) and len(value) == len(traced) and not (
            isinstance(value, tuple) and hasattr(value, "_fields")):
        items = [encode_like(v, t, depth + 1) for v, t in zip(value, traced)]
        return items if isinstance(value, list) else tuple(items)
    if type(value) is dict and isinstance(traced, dict):
        return {k: encode_like(v, traced[k], depth + 1) if k in traced else encode(v)
                for k, v in value.items()}
    return encode(value)


def spec_to_json(spec):
    """A RaggedTensorSpec or SparseTensorSpec as JSON (saved functions' results, saved datasets)."""
    from .ragged_tensor import RaggedTensorSpec
    shape = None if spec.shape.rank is None else spec.shape.as_list()
    if isinstance(spec, RaggedTensorSpec):
        return {"ragged": {"shape": shape, "dtype": spec.dtype.name, "ragged_rank": spec.ragged_rank,
                           "row_splits_dtype": spec.row_splits_dtype.name}}
    return {"sparse": {"shape": shape, "dtype": spec.dtype.name}}


def spec_from_json(doc):
    from . import dtypes
    from .ragged_tensor import RaggedTensorSpec
    from .sparse_tensor import SparseTensorSpec
    if "ragged" in doc:
        d = doc["ragged"]
        return RaggedTensorSpec(d["shape"], dtypes.as_dtype(d["dtype"]), int(d["ragged_rank"]),
                                dtypes.as_dtype(d["row_splits_dtype"]))
    d = doc["sparse"]
    return SparseTensorSpec(d["shape"], dtypes.as_dtype(d["dtype"]))


def spec_of_key(key):
    """The spec a trace's Composite key stands for: a ragged key says no dims (the first value seen with it
    had its own), so they are unknown; a sparse key holds its static shape."""
    from .ragged_tensor import RaggedTensorSpec
    spec = _SPECS[key]
    if isinstance(spec, RaggedTensorSpec) and spec.shape.rank is not None:
        return RaggedTensorSpec([None] * spec.shape.rank, spec.dtype, spec.ragged_rank, spec.row_splits_dtype)
    return spec
