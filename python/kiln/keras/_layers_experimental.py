"""tf.keras.layers.experimental (Keras 2.15): EinsumDense, SyncBatchNormalization (one device: BatchNormalization)
and the `preprocessing` module of Keras 2.3-2.5 programs (the preprocessing layers under their old names, and
PreprocessingLayer, the base of custom layers that adapt to data: update_state per batch, then finalize_state)."""
import logging
import types

import numpy as np

from .. import _C
from .. import dtypes as _dtypes
from ..tensor_shape import TensorShape
from ._einsum_dense import EinsumDense
from ._layer import Layer
from ._normalization import BatchNormalization


class SyncBatchNormalization(BatchNormalization):
    """Keras' deprecated cross-replica BatchNormalization; on one device it is BatchNormalization."""

    _warned = [False]

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True, beta_initializer="zeros",
                 gamma_initializer="ones", moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                 **kwargs):
        if not self._warned[0]:
            self._warned[0] = True
            logging.warning("`tf.keras.layers.experimental.SyncBatchNormalization` endpoint is deprecated and will be "
                            "removed in a future release. Please use `tf.keras.layers.BatchNormalization` with "
                            "parameter `synchronized` set to True.")
        super().__init__(axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
                         beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
                         moving_mean_initializer=moving_mean_initializer,
                         moving_variance_initializer=moving_variance_initializer, beta_regularizer=beta_regularizer,
                         gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                         gamma_constraint=gamma_constraint, **kwargs)


class PreprocessingLayer(Layer):
    """A layer whose state comes from data: adapt(data) resets the state, calls update_state(batch) on each batch
    (32 rows of an array, or the batches a dataset yields) and then finalize_state()."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._is_compiled = False
        self._is_adapted = False

    @property
    def is_adapted(self):
        return self._is_adapted

    def update_state(self, data):
        raise NotImplementedError

    def reset_state(self):
        raise NotImplementedError

    def finalize_state(self):
        pass

    def compile(self, run_eagerly=None, steps_per_execution=None):
        self._is_compiled = True

    def _batches(self, data, batch_size, steps):
        if isinstance(data, (np.ndarray, _C.Tensor, list)):
            array = data if isinstance(data, _C.Tensor) else np.asarray(data)
            size = batch_size or 32
            batches = (array[i:i + size] for i in range(0, len(array), size))
        else:
            if batch_size is not None:
                raise ValueError("`batch_size` is not supported for datasets, generators or Sequences; they make their "
                                 "own batches.")
            batches = iter(data)
        for step, batch in enumerate(batches):
            if steps is not None and step >= steps:
                return
            yield batch

    def adapt(self, data, batch_size=None, steps=None):
        if not self._is_compiled:
            self.compile()
        if self.built:
            self.reset_state()
            self._is_adapted = False
        for batch in self._batches(data, batch_size, steps):
            if not self.built:
                self._maybe_build(TensorShape(batch.shape if isinstance(batch, _C.Tensor) else np.shape(batch)))
                self.reset_state()
            self.update_state(batch)
        self.finalize_state()
        self._is_adapted = True


class RandomFourierFeatures(Layer):
    """cos(x @ unscaled_kernel / kernel_scale + bias): random features whose inner products approximate a shift
    invariant kernel (Rahimi and Recht); "gaussian" draws the kernel from N(0, 1) (the RBF kernel, scale
    sqrt(input_dim / 2) by default), "laplacian" from a Cauchy distribution (scale 1); the bias from [0, 2 pi).
    Only kernel_scale can train (trainable=True)."""

    _KERNELS = ["gaussian", "laplacian"]

    def __init__(self, output_dim, kernel_initializer="gaussian", scale=None, trainable=False, name=None, **kwargs):
        if output_dim <= 0:
            raise ValueError(f"`output_dim` should be a positive integer. Received: {output_dim}")
        if isinstance(kernel_initializer, str) and kernel_initializer.lower() not in self._KERNELS:
            raise ValueError(f"Unsupported `kernel_initializer`: {kernel_initializer} Expected one of: "
                             f"{self._KERNELS}")
        if scale is not None and scale <= 0.0:
            raise ValueError(f"When provided, `scale` should be a positive float. Received: {scale}")
        super().__init__(trainable=trainable, name=name, **kwargs)
        self.output_dim, self.kernel_initializer, self.scale = output_dim, kernel_initializer, scale

    def build(self, input_shape):
        from . import initializers
        shape = TensorShape(input_shape)
        if shape.rank != 2:
            raise ValueError(f"The rank of the input tensor should be 2. Received input with rank {shape.rank} "
                             f"instead. Full input shape received: {shape}")
        if shape[1] is None:
            raise ValueError(f"The last dimension of the input tensor should be defined. Found `None`. Full input "
                             f"shape received: {shape}")
        input_dim = shape[1]
        kind = self.kernel_initializer.lower() if isinstance(self.kernel_initializer, str) else None
        if kind == "gaussian":
            kernel_init = initializers.RandomNormal(stddev=1.0)
        elif kind == "laplacian":  # Cauchy draws, as Keras makes them (NumPy's global generator)
            kernel_init = initializers.Constant(np.tan(np.pi * (np.random.uniform(size=(input_dim,
                                                                                         self.output_dim)) - 0.5)))
        else:
            kernel_init = self.kernel_initializer
        self.unscaled_kernel = self.add_weight("unscaled_kernel", (input_dim, self.output_dim), dtype="float32",
                                               initializer=kernel_init, trainable=False)
        self.bias = self.add_weight("bias", (self.output_dim,), dtype="float32",
                                    initializer=initializers.RandomUniform(0.0, 2 * np.pi), trainable=False)
        if self.scale is None:
            self.scale = float(np.sqrt(input_dim / 2.0)) if kind == "gaussian" else 1.0
        self.kernel_scale = self.add_weight("kernel_scale", (1,), dtype="float32",
                                            initializer=initializers.Constant(self.scale), trainable=True,
                                            constraint="NonNeg")
        self.built = True

    def call(self, inputs):
        inputs = _C.cast(inputs, _dtypes.float32._enum) if inputs.dtype != _dtypes.float32 else inputs
        kernel = _C.multiply(_C.divide(1.0, self.kernel_scale.read_value()), self.unscaled_kernel.read_value())
        return _C.cos(_C.bias_add(_C.matmul(inputs, kernel, False, False), self.bias.read_value()))

    def compute_output_shape(self, input_shape):
        return TensorShape(TensorShape(input_shape).as_list()[:-1] + [self.output_dim])

    def get_config(self):
        from ._serialization import serialize_keras_object
        initializer = self.kernel_initializer
        if not isinstance(initializer, str):
            initializer = serialize_keras_object(initializer)
        return dict(super().get_config(), output_dim=self.output_dim, kernel_initializer=initializer,
                    scale=self.scale)


def _preprocessing_module():
    from . import layers as _layers
    module = types.ModuleType("kiln.keras.layers.experimental.preprocessing",
                              "The preprocessing layers under tf.keras.layers.experimental.preprocessing (Keras 2.15 "
                              "keeps these names for older programs).")
    for name in ("CategoryEncoding", "CenterCrop", "Discretization", "HashedCrossing", "Hashing", "IntegerLookup", "Normalization",
                 "RandomContrast", "RandomCrop", "RandomFlip", "RandomHeight", "RandomRotation", "RandomTranslation",
                 "RandomWidth", "RandomZoom",
                 "Rescaling", "Resizing", "StringLookup", "TextVectorization"):
        setattr(module, name, getattr(_layers, name))
    module.PreprocessingLayer = PreprocessingLayer
    return module


def experimental_module():
    module = types.ModuleType("kiln.keras.layers.experimental", __doc__)
    module.EinsumDense = EinsumDense
    module.SyncBatchNormalization = SyncBatchNormalization
    module.RandomFourierFeatures = RandomFourierFeatures
    module.preprocessing = _preprocessing_module()
    return module
