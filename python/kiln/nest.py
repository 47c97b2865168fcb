"""kiln.nest (tf.nest): nested structures of tuples, lists, dicts and namedtuples
whose leaves are anything else. Dicts are walked in sorted key order, as TF does,
so a structure and its flat leaves always line up. With expand_composites=True a
RaggedTensor or SparseTensor (or its spec) is a structure of its component tensors
(flat values then row splits; indices, values, dense_shape), as in TF."""
import collections as _collections

__all__ = ["is_nested", "flatten", "flatten_up_to", "pack_sequence_as", "map_structure", "assert_same_structure"]


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_nested(structure):
    """Whether `structure` is a tuple, list, dict or namedtuple (not a leaf)."""
    return isinstance(structure, (tuple, list, dict, _collections.abc.Mapping))


def _children(structure):
    if isinstance(structure, _collections.abc.Mapping):
        return [structure[k] for k in sorted(structure)]
    return list(structure)


def _components(x):
    """A composite's components (a composite spec's component specs), or None for anything else."""
    if hasattr(x, "_component_specs"):
        return list(x._component_specs())
    if hasattr(type(x), "_type_spec"):
        return list(x._type_spec._to_components(x))
    return None


def flatten(structure, expand_composites=False):
    """The leaves of `structure`, depth first (a leaf alone gives [leaf])."""
    out = []

    def walk(s):
        parts = _components(s) if expand_composites else None
        if parts is not None:
            out.extend(parts)
        elif is_nested(s):
            for c in _children(s):
                walk(c)
        else:
            out.append(s)

    walk(structure)
    return out


def flatten_up_to(shallow_tree, input_tree):
    """The parts of `input_tree` at the leaves of `shallow_tree` (deeper nesting in
    `input_tree`, e.g. a list standing for one tensor, stays whole)."""
    out = []

    def walk(shallow, value):
        if not is_nested(shallow):
            out.append(value)
            return
        if not is_nested(value) or len(_children(value)) != len(_children(shallow)):
            raise ValueError(f"The two structures don't have the same sequence length. Input structure: "
                             f"{input_tree!r}, shallow structure: {shallow_tree!r}.")
        if isinstance(shallow, _collections.abc.Mapping) and sorted(shallow) != sorted(value):
            raise ValueError(f"The two structures don't have the same keys. Input structure has keys "
                             f"{sorted(value)}, while shallow structure has keys {sorted(shallow)}.")
        for s, v in zip(_children(shallow), _children(value)):
            walk(s, v)

    walk(shallow_tree, input_tree)
    return out


def _rebuild(structure, children):
    if isinstance(structure, _collections.abc.Mapping):
        by_key = dict(zip(sorted(structure), children))
        return type(structure)((k, by_key[k]) for k in structure)
    if _is_namedtuple(structure):
        return type(structure)(*children)
    if isinstance(structure, tuple):
        return tuple(children)
    return list(children)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`structure` with its leaves replaced, in order, by `flat_sequence`."""
    flat = list(flat_sequence)
    expected = len(flatten(structure, expand_composites))
    if len(flat) != expected:
        raise ValueError(f"Could not pack sequence. Structure had {expected} atoms, but flat_sequence had "
                         f"{len(flat)} items. Structure: {structure!r}, flat_sequence: {flat!r}.")
    pos = 0

    def build(s):
        nonlocal pos
        parts = _components(s) if expand_composites else None
        if parts is not None:
            spec = s if hasattr(s, "_component_specs") else s._type_spec
            pos += len(parts)
            return spec._from_components(flat[pos - len(parts):pos])
        if is_nested(s):
            return _rebuild(s, [build(c) for c in _children(s)])
        pos += 1
        return flat[pos - 1]

    return build(structure)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """Raises ValueError (or TypeError when the container types differ) unless the two
    structures nest the same way."""
    def check(a, b):
        if is_nested(a) != is_nested(b):
            raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                             f"{nest1!r}\n\nSecond structure: {nest2!r}")
        if not is_nested(a):
            return
        if check_types and type(a) is not type(b):
            raise TypeError(f"The two structures don't have the same sequence type. Input structure has type "
                            f"{type(a)!r}, while shallow structure has type {type(b)!r}.")
        ca, cb = _children(a), _children(b)
        if len(ca) != len(cb) or (isinstance(a, _collections.abc.Mapping) and sorted(a) != sorted(b)):
            raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                             f"{nest1!r}\n\nSecond structure: {nest2!r}")
        for x, y in zip(ca, cb):
            check(x, y)

    check(nest1, nest2)


def map_structure(func, *structure, **kwargs):
    """`func` applied leaf by leaf over structures of the same shape."""
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=kwargs.get("check_types", True))
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
