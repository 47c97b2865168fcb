"""Products: dot, matmul, vdot, inner, outer, kron, tensordot, einsum, cross (NumPy's rules for
1-D and scalar operands)."""
from ... import _ops, _array_ops
from ._convert import promote


def _rank(x):
    return x.shape.rank


def _product(a, b):
    return _ops.logical_and(a, b) if a.dtype.is_bool else a * b


def dot(a, b):
    a, b = promote(a, b)
    if _rank(a) == 0 or _rank(b) == 0:
        return _product(a, b)
    if _rank(b) == 1:
        return _array_ops.tensordot(a, b, [[-1 % _rank(a)], [0]])
    return _array_ops.tensordot(a, b, [[_rank(a) - 1], [_rank(b) - 2]])


def matmul(x1, x2):
    a, b = promote(x1, x2)
    if _rank(a) == 0 or _rank(b) == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions (a scalar)")
    if _rank(a) == 1 and _rank(b) == 1:
        return _ops.reduce_sum(_product(a, b))
    if _rank(a) == 1:
        return _ops.squeeze(_ops.matmul(_ops.expand_dims(a, 0), b), [-2])
    if _rank(b) == 1:
        return _ops.squeeze(_ops.matmul(a, _ops.expand_dims(b, -1)), [-1])
    return _ops.matmul(a, b)


def vdot(a, b):
    a, b = promote(a, b)
    a = _ops.reshape(a, [-1])
    if a.dtype.is_complex:
        a = _ops.conj(a)
    return _ops.reduce_sum(_product(a, _ops.reshape(b, [-1])))


def inner(a, b):
    a, b = promote(a, b)
    if _rank(a) == 0 or _rank(b) == 0:
        return _product(a, b)
    return _array_ops.tensordot(a, b, [[_rank(a) - 1], [_rank(b) - 1]])


def outer(a, b):
    a, b = promote(a, b)
    return _product(_ops.reshape(a, [-1, 1]), _ops.reshape(b, [1, -1]))


def kron(a, b):
    a, b = promote(a, b)
    r = max(_rank(a), _rank(b))
    a = _ops.reshape(a, [1] * (r - _rank(a)) + a.shape.as_list())
    b = _ops.reshape(b, [1] * (r - _rank(b)) + b.shape.as_list())
    sa, sb = a.shape.as_list(), b.shape.as_list()
    # a[i, 1, j, 1, ...] * b[1, k, 1, l, ...] -> [i, k, j, l, ...] -> [i * k, j * l, ...]
    a_spread = _ops.reshape(a, [d for s in sa for d in (s, 1)])
    b_spread = _ops.reshape(b, [d for s in sb for d in (1, s)])
    return _ops.reshape(_product(a_spread, b_spread), [x * y for x, y in zip(sa, sb)])


def tensordot(a, b, axes=2):
    a, b = promote(a, b)
    return _array_ops.tensordot(a, b, axes)


def einsum(subscripts, *operands, **kwargs):
    casting = kwargs.pop("casting", "safe")
    kwargs.pop("optimize", None)
    if casting != "safe":
        raise ValueError(f"casting policy not supported: {casting}")
    if kwargs:
        raise TypeError(f"einsum got unexpected arguments: {sorted(kwargs)}")
    operands = promote(*operands)
    return _ops.einsum(subscripts, *operands)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross products of 3-vectors (2-vectors read with a zero third component; two 2-vectors give the scalar
    z component), along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    a = _ops.transpose(a, [i for i in range(_rank(a)) if i != axisa % _rank(a)] + [axisa % _rank(a)])
    b = _ops.transpose(b, [i for i in range(_rank(b)) if i != axisb % _rank(b)] + [axisb % _rank(b)])
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    ax, ay = a[..., 0], a[..., 1]
    bx, by = b[..., 0], b[..., 1]
    z = ax * by - ay * bx
    if na == 2 and nb == 2:
        return z
    az = a[..., 2] if na == 3 else _ops.zeros_like(ax)
    bz = b[..., 2] if nb == 3 else _ops.zeros_like(bx)
    out = _ops.stack([ay * bz - az * by, az * bx - ax * bz, z], -1)
    r = _rank(out)
    axisc %= r
    return _ops.transpose(out, list(range(axisc)) + [r - 1] + list(range(axisc, r - 1)))
