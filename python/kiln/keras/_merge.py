"""Keras' merge layers (Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Dot) and their
functional forms (layers.add([a, b]), layers.concatenate(...)). Inputs of the elementwise merges broadcast as
NumPy's do; their output carries the AND of the inputs' masks, as Keras'."""
from .. import _C
from ..tensor_shape import TensorShape
from ._layer import Layer, _is_tensor


def _broadcast_shape(shapes, name):
    ranks = [s.rank for s in shapes]
    if any(r is None for r in ranks):
        return TensorShape(None)
    rank = max(ranks)
    out = []
    for i in range(rank):
        dims = set()
        for s in shapes:
            j = i - (rank - s.rank)
            if j >= 0:
                dims.add(s[j])
        known = {d for d in dims if d is not None and d != 1}
        if len(known) > 1:
            raise ValueError(f"Inputs have incompatible shapes. Received shapes {[tuple(s.as_list()) for s in shapes]}"
                             f" (layer {name})")
        if known:
            out.append(known.pop())
        elif None in dims:
            out.append(None)
        else:
            out.append(1)
    return TensorShape(out)


class _Merge(Layer):
    """A layer of a list of inputs (at least two) with one output."""

    _min_inputs = 2

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def _check_inputs(self, input_shape):
        if not isinstance(input_shape, (list, tuple)) or (input_shape and not isinstance(input_shape[0],
                                                                                         (list, tuple, TensorShape))):
            raise ValueError(f"A merge layer should be called on a list of inputs. Received: input_shape={input_shape}"
                             " (not a list of shapes)")
        if len(input_shape) < self._min_inputs:
            raise ValueError(f"A merge layer should be called on a list of at least {self._min_inputs} inputs. Got "
                             f"{len(input_shape)} inputs. Full input_shape received: {input_shape}")
        return [TensorShape(s) for s in input_shape]

    def build(self, input_shape):
        self._check_inputs(input_shape)
        self.built = True

    def call(self, inputs):
        out = inputs[0]
        for x in inputs[1:]:
            out = self._merge(out, x)
        return out

    def compute_output_shape(self, input_shape):
        return _broadcast_shape(self._check_inputs(input_shape), self.name)

    def compute_mask(self, inputs, mask=None):
        if mask is None or all(m is None for m in mask):
            return None
        masks = [_C.expand_dims(m, 0) for m in mask if m is not None]
        return _C.reduce_all(_C.concat(masks, 0), [0], False)


class Add(_Merge):
    """The sum of the inputs."""

    def _merge(self, a, b):
        return _C.add(a, b)


class Subtract(_Merge):
    """inputs[0] - inputs[1] (exactly two inputs)."""

    def _check_inputs(self, input_shape):
        shapes = super()._check_inputs(input_shape)
        if len(shapes) != 2:
            raise ValueError(f"A `Subtract` layer should be called on exactly 2 inputs. Received: input_shape="
                             f"{input_shape}")
        return shapes

    def _merge(self, a, b):
        return _C.subtract(a, b)


class Multiply(_Merge):
    """The elementwise product of the inputs."""

    def _merge(self, a, b):
        return _C.multiply(a, b)


class Maximum(_Merge):
    def _merge(self, a, b):
        return _C.maximum(a, b)


class Minimum(_Merge):
    def _merge(self, a, b):
        return _C.minimum(a, b)


class Average(_Merge):
    """The mean of the inputs."""

    def call(self, inputs):
        total = inputs[0]
        for x in inputs[1:]:
            total = _C.add(total, x)
        return _C.divide(total, _C.constant(float(len(inputs)), total.dtype._enum))


class Concatenate(_Merge):
    """The inputs joined along `axis` (the others must match)."""

    _min_inputs = 1

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = int(axis)

    def _check_inputs(self, input_shape):
        shapes = super()._check_inputs(input_shape)
        ranks = {s.rank for s in shapes}
        if len(ranks) > 1:
            raise ValueError("A `Concatenate` layer requires inputs with matching shapes except for the concatenation "
                             f"axis. Received: input_shape={[tuple(s.as_list()) for s in shapes]}")
        rank = ranks.pop()
        axis = self.axis % rank
        for i in range(rank):
            if i == axis:
                continue
            dims = {s[i] for s in shapes if s[i] is not None}
            if len(dims) > 1:
                raise ValueError("A `Concatenate` layer requires inputs with matching shapes except for the "
                                 f"concatenation axis. Received: input_shape={[tuple(s.as_list()) for s in shapes]}")
        return shapes

    def call(self, inputs):
        return _C.concat(list(inputs), self.axis)

    def compute_output_shape(self, input_shape):
        shapes = self._check_inputs(input_shape)
        rank = shapes[0].rank
        axis = self.axis % rank
        out = []
        for i in range(rank):
            dims = [s[i] for s in shapes]
            if i == axis:
                out.append(None if any(d is None for d in dims) else sum(dims))
            else:
                known = [d for d in dims if d is not None]
                out.append(known[0] if known else None)
        return TensorShape(out)

    def compute_mask(self, inputs, mask=None):
        if mask is None or all(m is None for m in mask):
            return None
        if self.axis % inputs[0].ndim != inputs[0].ndim - 1 or mask[0] is None or any(m is None for m in mask):
            return super().compute_mask(inputs, mask)
        return _C.reduce_all(_C.stack([m for m in mask], 0), [0], False)

    def get_config(self):
        config = super().get_config()
        config["axis"] = self.axis
        return config


def _l2_normalize(x, axis):
    return _C.l2_normalize(x, [axis], 1e-12)


class Dot(_Merge):
    """The dot product of two batches of samples along `axes` (Keras' batch_dot): [b, n] . [b, n] -> [b, 1];
    [b, m, n] . [b, k, n] with axes=2 -> [b, m, k]. normalize=True: the cosine (inputs L2-normalized first)."""

    def __init__(self, axes, normalize=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(axes, int):
            if not isinstance(axes, (list, tuple)) or len(axes) != 2 or not all(isinstance(a, int) for a in axes):
                raise ValueError("Invalid format for argument `axes`: list of 2 integers or an integer expected. "
                                 f"Received: axes={axes}")
        self.axes = axes
        self.normalize = normalize
        self.supports_masking = False

    def _axes_for(self, shapes):
        axes = [self.axes, self.axes] if isinstance(self.axes, int) else list(self.axes)
        return [a % s.rank if a < 0 else a for a, s in zip(axes, shapes)]

    def _check_inputs(self, input_shape):
        shapes = super()._check_inputs(input_shape)
        if len(shapes) != 2:
            raise ValueError(f"A `Dot` layer should be called on a list of 2 inputs. Received: input_shape="
                             f"{input_shape}")
        a, b = self._axes_for(shapes)
        if shapes[0][a] is not None and shapes[1][b] is not None and shapes[0][a] != shapes[1][b]:
            raise ValueError(f"Incompatible input shapes: axis values {shapes[0][a]} (at axis {a}) != {shapes[1][b]} "
                             f"(at axis {b}). Full input shapes: {shapes[0]}, {shapes[1]}")
        return shapes

    def call(self, inputs):
        x, y = inputs
        a, b = self._axes_for([TensorShape(x.shape), TensorShape(y.shape)])
        if self.normalize:
            x, y = _l2_normalize(x, a), _l2_normalize(y, b)
        letters = "cdefghijklmnopqrstuvwxyz"
        xs = ["b"] + [letters[i] for i in range(x.ndim - 1)]
        ys = ["b"] + [letters[x.ndim - 1 + i] for i in range(y.ndim - 1)]
        ys[b] = xs[a]
        out = [c for i, c in enumerate(xs) if i != a] + [c for i, c in enumerate(ys) if i != b][1:]
        result = _C.einsum(f"{''.join(xs)},{''.join(ys)}->{''.join(out)}", [x, y])
        return _C.expand_dims(result, 1) if len(out) == 1 else result

    def compute_output_shape(self, input_shape):
        s1, s2 = self._check_inputs(input_shape)
        a, b = self._axes_for([s1, s2])
        out = [d for i, d in enumerate(s1.as_list()) if i != a] + [d for i, d in enumerate(s2.as_list()) if i != b][1:]
        return TensorShape(out + [1] if len(out) == 1 else out)

    def compute_mask(self, inputs, mask=None):
        return None

    def get_config(self):
        config = super().get_config()
        config.update(axes=self.axes, normalize=self.normalize)
        return config


def add(inputs, **kwargs):
    return Add(**kwargs)(inputs)


def subtract(inputs, **kwargs):
    return Subtract(**kwargs)(inputs)


def multiply(inputs, **kwargs):
    return Multiply(**kwargs)(inputs)


def average(inputs, **kwargs):
    return Average(**kwargs)(inputs)


def maximum(inputs, **kwargs):
    return Maximum(**kwargs)(inputs)


def minimum(inputs, **kwargs):
    return Minimum(**kwargs)(inputs)


def concatenate(inputs, axis=-1, **kwargs):
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes, normalize=False, **kwargs):
    return Dot(axes=axes, normalize=normalize, **kwargs)(inputs)


__all__ = ["Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum", "Concatenate", "Dot", "add", "subtract",
           "multiply", "average", "maximum", "minimum", "concatenate", "dot"]
del _is_tensor
