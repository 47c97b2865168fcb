"""Shape lists that mix Python ints and scalar tensors (`[tf.shape(x)[0], 3]`), as TF's
shape arguments take them. The engine's creation ops and reshape take static dims (-1 for
one unknown), so a dim known only when the graph runs is resolved here:

- an eager scalar tensor is its value;
- `tf.shape(x)[i]` (remembered when it is made) is x's static dim i when the trace knows it;
- otherwise creation ops build the shape by broadcasting: zeros of the static dims plus, per
  run-time dim, a vector of that length (from x's dim i, or from kiln.range(n) for any n),
  and reshape turns its one run-time dim into -1."""
import collections

from . import _C

# id(tensor) -> (tensor, x, axes): the tensor is tf.shape(x)[axes] (axes an int: one dim, a
# scalar; a tuple: those dims, a vector, as tf.shape(x) itself or a slice of it).
_SHAPE_SOURCES = collections.OrderedDict()


def _remember(t, x, axes):
    _SHAPE_SOURCES[id(t)] = (t, x, axes)
    while len(_SHAPE_SOURCES) > 1024:
        _SHAPE_SOURCES.popitem(last=False)


def _entry(t):
    entry = _SHAPE_SOURCES.get(id(t))
    return entry if entry is not None and entry[0] is t else None


def note_shape(result, x):
    """`result` is tf.shape(x): its elements are x's dims."""
    if result._is_symbolic and x.ndim is not None:
        _remember(result, x, tuple(range(x.ndim)))


def note_index(result, x, key):
    """`result` is x[key]; when x is (a slice of) tf.shape(y), result is y's dim or dims."""
    entry = _entry(x)
    if entry is None or not isinstance(entry[2], tuple):
        return
    axes = entry[2]
    if isinstance(key, int) and -len(axes) <= key < len(axes):
        _remember(result, entry[1], axes[key])
    elif isinstance(key, slice) and all(p is None or isinstance(p, int) for p in (key.start, key.stop, key.step)):
        _remember(result, entry[1], axes[key])


def dim_source(t):
    """(x, axis) when the scalar tensor t is tf.shape(x)[axis], else None."""
    entry = _entry(t)
    if entry is None or not isinstance(entry[2], int):
        return None
    return entry[1], entry[2]


def unpack(shape):
    """A symbolic 1-D shape tensor of known length (tf.shape(x), a slice of it, a stack...) as
    a list of its elements, resolved; the tensor itself when its length is unknown."""
    if shape.ndim != 1 or shape.shape.as_list()[0] is None:
        return shape
    from ._indexing import getitem
    return resolve([getitem(shape, i) for i in range(shape.shape.as_list()[0])])


class DynamicDims:
    """A shape list with at least one dim known only at run time: ints and symbolic scalars."""
    __slots__ = ("dims",)

    def __init__(self, dims):
        self.dims = dims

    def symbolic(self):
        return [i for i, d in enumerate(self.dims) if not isinstance(d, int)]


def _static_dim(x, axis):
    shape = x.shape
    if shape.rank is None:
        return None
    return shape.as_list()[axis]


def resolve(dims):
    """A list of ints when every dim is known now, else DynamicDims."""
    out = []
    for d in dims:
        if isinstance(d, _C.Variable):
            d = d.read_value()
        if isinstance(d, _C.Tensor):
            if d.ndim not in (0, None):
                raise ValueError(f"A shape's dims must be scalars; got a tensor of shape {d.shape}")
            if not d.dtype.is_integer:
                raise TypeError(f"A shape's dims must be integers; got a {d.dtype.name} tensor")
            if not d._is_symbolic:
                out.append(int(d._scalar_value()))
                continue
            source = dim_source(d)
            known = None if source is None else _static_dim(*source)
            out.append(known if known is not None else d)
        else:
            out.append(-1 if d is None else int(d))
    if all(isinstance(d, int) for d in out):
        return out
    return DynamicDims(out)


def _length_vector(d, dtype):
    """Zeros of shape [d] for a run-time scalar d."""
    source = dim_source(d)
    if source is not None and source[0].ndim is not None:
        x, axis = source
        axis = axis % x.ndim
        zeros = _C.zeros_like(x, dtype._enum)
        others = [a for a in range(x.ndim) if a != axis]
        return _C.reduce_sum(zeros, others, False) if others else zeros
    from ._ops import _dynamic_range
    return _C.zeros_like(_dynamic_range(0, d, 1), dtype._enum)


def zeros(dyn, dtype):
    """Zeros of dtype whose shape is `dyn`, built by broadcasting."""
    rank = len(dyn.dims)
    out = _C.zeros([d if isinstance(d, int) else 1 for d in dyn.dims], dtype._enum)
    for axis in dyn.symbolic():
        shape = [1] * rank
        shape[axis] = -1
        out = _C.add(out, _C.reshape(_length_vector(dyn.dims[axis], dtype), shape))
    return out


def _same(a, b):
    """Whether two Python objects hold the same tensor (a conversion may make a new object;
    a graph tensor's name is unique in its graph)."""
    if a is b:
        return True
    return (isinstance(a, _C.Tensor) and isinstance(b, _C.Tensor) and a._is_symbolic and b._is_symbolic
            and a.name == b.name and a.dtype == b.dtype)


def reshape_dims(tensor, dyn):
    """Static dims for reshaping `tensor` to `dyn`: its one run-time dim becomes -1; a -1 beside
    it is solved when the run-time dim is tf.shape(tensor)[i] and tensor's other dims are static
    (`[tf.shape(z)[0], -1]` flattens each row)."""
    dims = list(dyn.dims)
    symbolic = dyn.symbolic()
    if len(symbolic) != 1:
        raise _unsupported(dyn)
    at = symbolic[0]
    unknown = [i for i, d in enumerate(dims) if isinstance(d, int) and d == -1]
    if unknown:
        source = dim_source(dims[at])
        shape = tensor.shape
        if source is None or not _same(source[0], tensor) or shape.rank is None:
            raise _unsupported(dyn)
        kept_axis = source[1] % shape.rank
        rest = [d for a, d in enumerate(shape.as_list()) if a != kept_axis]
        if None in rest:
            raise _unsupported(dyn)
        total = 1
        for d in rest:
            total *= d
        inner = 1
        for i, d in enumerate(dims):
            if i != at and i not in unknown:
                inner *= d
        if inner == 0 or total % inner:
            raise ValueError(f"kiln.reshape: cannot reshape a tensor of shape {shape} to {dims}")
        dims[unknown[0]] = total // inner
    dims[at] = -1
    return dims


def _unsupported(dyn):
    return ValueError(
        f"kiln.reshape: the shape {dyn.dims} has more than one dim known only when the graph runs; Kiln's "
        "reshape takes one (-1, or a run-time dim), or [tf.shape(x)[i], -1] with x's other dims static.")
