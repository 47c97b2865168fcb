"""Keras' EinsumDense: activation(einsum(equation, inputs, kernel) + bias), the kernel's shape read from the
equation, the input shape and output_shape ("ab,bc->ac"; "...b,bc->...c" and "ab...,bc->ac..." elide dims on
the left or the right), with the bias over bias_axes of the output."""
import re

from .. import _C
from ..tensor_shape import TensorShape
from . import activations as _activations
from . import initializers as _initializers
from ._layer import Layer


def _split(equation):
    """(input spec, kernel spec, output spec, elided on the left) of an equation with at most one '...' side."""
    plain = re.sub(r"\.\.\.", "0", equation)
    for pattern, left in (("([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$", False),
                          ("0([a-zA-Z]+),([a-zA-Z]+)->0([a-zA-Z]+)$", True),
                          ("([a-zA-Z]{2,})0,([a-zA-Z]+)->([a-zA-Z]+)0$", False)):
        found = re.match(pattern, plain)
        if found:
            return found.group(1), found.group(2), found.group(3), left
    raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form [X],[Y]->[Z], "
                     "...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")


def analyze(equation, bias_axes, input_shape, output_shape):
    """(kernel shape, bias shape or None, full output shape) as Keras' _analyze_einsum_string."""
    input_spec, weight_spec, output_spec, left = _split(equation)
    input_shape = list(input_shape)
    elided = len(input_shape) - len(input_spec)
    out = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    out.insert(0, input_shape[0])
    if elided > 0 and left:
        for i in range(1, elided):
            out.insert(1, input_shape[i])
    elif elided > 0:
        out.extend(input_shape[len(input_shape) - elided:])
    if left:
        in_index = {d: i + elided - len(input_shape) for i, d in enumerate(input_spec)}
        out_index = {d: i + elided - len(out) for i, d in enumerate(output_spec)}
    else:
        in_index = {d: i for i, d in enumerate(input_spec)}
        out_index = {d: i for i, d in enumerate(output_spec)}
    for d in input_spec:
        if d in out_index and out[out_index[d]] is not None and out[out_index[d]] != input_shape[in_index[d]]:
            raise ValueError(f"Input shape and output shape do not match at shared dimension '{d}'. Input shape is "
                             f"{input_shape[in_index[d]]}, and output shape is {out[out_index[d]]}.")
    for d in output_spec:  # None in output_shape: the input's dim of that letter (what einsum gives)
        if out[out_index[d]] is None and d in in_index:
            out[out_index[d]] = input_shape[in_index[d]]
    for d in output_spec:
        if d not in input_spec and d not in weight_spec:
            raise ValueError(f"Dimension '{d}' was specified in the output '{output_spec}' but has no corresponding "
                             f"dim in the input spec '{input_spec}' or weight spec '{output_spec}'")
    kernel = []
    for d in weight_spec:
        if d in in_index:
            kernel.append(input_shape[in_index[d]])
        elif d in out_index:
            kernel.append(out[out_index[d]])
        else:
            raise ValueError(f"Weight dimension '{d}' did not have a match in either the input spec '{input_spec}' "
                             f"or the output spec '{output_spec}'. For this layer, the weight must be fully "
                             "specified.")
    bias = None
    if bias_axes is not None:
        for d in bias_axes:
            if d not in output_spec:
                raise ValueError(f"Bias dimension '{d}' was requested, but is not part of the output spec "
                                 f"'{output_spec}'")
        first = min(output_spec.find(d) for d in bias_axes)
        bias = [out[out_index[d]] if d in bias_axes else 1 for d in output_spec[first:]]
        if not left:
            bias += [1] * elided
    return kernel, bias, out


class EinsumDense(Layer):
    """A dense layer written as an einsum: EinsumDense("ab,bc->ac", output_shape=64) is Dense(64)."""

    def __init__(self, equation, output_shape, activation=None, bias_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=activity_regularizer, **kwargs)
        from .layers import _set_penalties
        _set_penalties(self, kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        self.equation = equation
        self.partial_output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
        self.bias_axes = bias_axes
        self.activation = _activations.get(activation)
        self.kernel_initializer = _initializers.get(kernel_initializer)
        self.bias_initializer = _initializers.get(bias_initializer)
        _split(equation)
        self.kernel = self.bias = None
        self.full_output_shape = None

    def build(self, input_shape):
        kernel, bias, out = analyze(self.equation, self.bias_axes, TensorShape(input_shape).as_list(),
                                    self.partial_output_shape)
        self.full_output_shape = out
        self.kernel = self.add_weight("kernel", kernel, initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if bias is not None:
            self.bias = self.add_weight("bias", bias, initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def call(self, inputs):
        y = _C.einsum(self.equation, [inputs, self.kernel.read_value()])
        if self.bias is not None:
            y = _C.add(y, self.bias.read_value())
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        return TensorShape(analyze(self.equation, self.bias_axes, TensorShape(input_shape).as_list(),
                                   self.partial_output_shape)[2])

    def get_config(self):
        from .layers import _penalty_config
        config = super().get_config()
        config.update(output_shape=self.partial_output_shape, equation=self.equation,
                      activation=_activations.serialize(self.activation), bias_axes=self.bias_axes)
        config.update(_penalty_config(self))
        return config
