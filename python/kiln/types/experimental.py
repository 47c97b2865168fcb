"""kiln.types.experimental (tf.types.experimental): the function types (tf.function's PolymorphicFunction,
its ConcreteFunctions, their common Callable base) and TensorLike, the union of what converts to a Tensor."""
import abc as _abc
import typing as _typing

import numpy as _np

from .. import _C
from ..function import ConcreteFunction, Function

PolymorphicFunction = Function
GenericFunction = Function  # TF 2.15's old name of PolymorphicFunction, kept as its alias


class Callable(metaclass=_abc.ABCMeta):
    """Base of the callables tf.function makes (PolymorphicFunction and ConcreteFunction are its subclasses)."""

    @_abc.abstractmethod
    def __call__(self, *args, **kwargs):
        """Runs the function."""


Callable.register(Function)
Callable.register(ConcreteFunction)

TensorLike = _typing.Union[_C.Tensor, _C.Variable, int, float, bool, str, bytes, complex, tuple, list,
                           _np.ndarray, _np.generic]
