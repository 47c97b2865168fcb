"""Keras' Hashing layer: FarmHash's Fingerprint64 (kiln._farmhash) modulo the number of bins, as
tf.strings.to_hash_bucket_fast (StringLookup's extra OOV buckets use it too). On the host (a host function while
tracing)."""
import numpy as np

from .. import dtypes as _dtypes
from .._farmhash import fingerprint64
from ..tensor_shape import TensorShape
from ._layer import Layer
from ._lookup import _WholeInputs


def _as_string(value):
    """tf.strings.as_string of an integer / the bytes of a string."""
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return str(int(value)).encode("ascii")


class Hashing(_WholeInputs, Layer):
    """Hashes strings (and integers, as their decimal text) into num_bins bins with FarmHash, as
    tf.strings.to_hash_bucket_fast; mask_value, when given, takes bin 0 and the others 1 .. num_bins - 1;
    output_mode "int", or "one_hot" / "multi_hot" / "count" vectors."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):
        if kwargs.get("dtype") is None:
            kwargs["dtype"] = "int64" if output_mode == "int" else "float32"
        super().__init__(**kwargs)
        from ._lookup import _check_output_mode, _no_sparse
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"The `num_bins` for `Hashing` cannot be `None` or non-positive values. Received: "
                             f"num_bins={num_bins}.")
        if salt is not None:
            raise NotImplementedError("kiln.keras.layers.Hashing: salt (SipHash, to_hash_bucket_strong) is not "
                                      "supported")
        self.output_mode = _check_output_mode(output_mode, ("int", "one_hot", "multi_hot", "count"))
        _no_sparse("Hashing", sparse)
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = None
        self.sparse = False
        self._output_dtype = _dtypes.int64 if output_mode == "int" else _dtypes.float32

    def _hash(self, values):
        array = np.asarray(values, dtype=object)
        bins = self.num_bins
        masked = self.mask_value is not None and bins > 1
        if masked:
            bins -= 1
            mask_bytes = _as_string(self.mask_value)
        out = np.empty(array.size, np.int64)
        for i, v in enumerate(array.reshape(-1).tolist()):
            data = _as_string(v)
            if masked and data == mask_bytes:
                out[i] = 0
            else:
                out[i] = fingerprint64(data) % bins + (1 if masked else 0)
        out = out.reshape(array.shape)
        if self.output_mode == "int":
            return out
        from ._lookup import encode_numpy
        return encode_numpy(out, self.output_mode, self.num_bins)

    def call(self, inputs):
        from ._lookup import _run_numpy
        return _run_numpy(self._hash, inputs, self._output_dtype, self.compute_output_shape(inputs.shape))

    def compute_output_shape(self, input_shape):
        if self.output_mode == "int":
            return TensorShape(input_shape)
        from ._lookup import CategoryEncoding
        return CategoryEncoding(self.num_bins, self.output_mode).compute_output_shape(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update(num_bins=self.num_bins, salt=self.salt, mask_value=self.mask_value,
                      output_mode=self.output_mode, sparse=self.sparse)
        return config



