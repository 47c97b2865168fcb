"""keras.layers.HashedCrossing (Keras 2.15): crosses scalar features by hashing them together into num_bins, as
tf.sparse.cross_hashed does: h = FingerprintCat64(h, hash of each feature) from the key 0xDECAFCAFFE, a string
hashed by FarmHash's Fingerprint64 and an integer standing for itself, then h % num_bins; "int" bins or their
"one_hot" vectors. Computed in NumPy (a host function inside traces, as the other hashing layers)."""
import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from .._farmhash import cross_fingerprint
from ._layer import KerasTensor, Layer, _to_tensor


def cross_hash(columns, num_bins):
    """The bin of each row of the crossed columns (NumPy arrays of one length)."""
    return np.asarray([cross_fingerprint(values) % num_bins for values in zip(*[c.tolist() for c in columns])],
                      np.int64)


class HashedCrossing(Layer):

    def __init__(self, num_bins, output_mode="int", sparse=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        from ._lookup import _check_output_mode, _no_sparse
        self.num_bins = int(num_bins)
        self.output_mode = _check_output_mode(output_mode, ("int", "one_hot"))
        _no_sparse("HashedCrossing", sparse)
        self.sparse = False
        self._output_dtype = _dtypes.as_dtype(self.dtype)

    def __call__(self, inputs, *args, **kwargs):
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"`HashedCrossing` should be called on a list or tuple of inputs. Received: "
                             f"inputs={inputs}")
        if len(inputs) < 2:
            raise ValueError(f"`HashedCrossing` should be called on at least two inputs. Received: inputs={inputs}")
        if not any(isinstance(x, KerasTensor) for x in inputs):
            inputs = [_to_tensor(x) for x in inputs]
            self._check(inputs)
        return Layer.__call__(self, list(inputs), *args, **kwargs)

    @staticmethod
    def _check(inputs):
        shapes = [TensorShape(x.shape) for x in inputs]
        first = shapes[0]
        if any(s != first for s in shapes) or (first.rank or 0) > 2 or (first.rank == 2 and first[-1] != 1):
            raise ValueError("All `HashedCrossing` inputs should have shape `[]`, `[batch_size]` or `[batch_size, "
                             f"1]`. Received: inputs={inputs}")
        if any(not (x.dtype.is_integer or x.dtype.name == "string") for x in inputs):
            raise ValueError(f"All `HashedCrossing` inputs should have an integer or string dtype. Received: "
                             f"inputs={inputs}")

    def _cross(self, *values):
        shape = np.shape(values[0])
        bins = cross_hash([np.asarray(v).reshape(-1) for v in values], self.num_bins).reshape(shape)
        if self.output_mode == "int":
            return bins
        from ._lookup import encode_numpy
        return encode_numpy(bins.reshape(-1), "one_hot", self.num_bins).reshape(shape[:1] + (self.num_bins,)
                                                                                    if shape else (self.num_bins,))

    def call(self, inputs):
        static = self.compute_output_shape(inputs[0].shape)
        if not any(x._is_symbolic for x in inputs) and not _C.is_tracing():
            return _C.constant(np.asarray(self._cross(*[x.numpy() for x in inputs])), self._output_dtype._enum)
        from ..function import py_function
        out = py_function(lambda *ts: np.asarray(self._cross(*[t.numpy() for t in ts])), list(inputs),
                          self._output_dtype)
        dims = [-1 if d is None else d for d in TensorShape(static).as_list()]
        return _C.reshape(out, dims) if dims.count(-1) <= 1 else out

    def compute_output_shape(self, input_shape):
        shape = TensorShape(input_shape[0] if isinstance(input_shape, list) else input_shape).as_list()
        if self.output_mode == "int":
            return TensorShape(shape)
        return TensorShape(shape[:1] + [self.num_bins] if shape else [self.num_bins])

    def get_config(self):
        return dict(super().get_config(), num_bins=self.num_bins, output_mode=self.output_mode, sparse=self.sparse)
