"""tf.keras.layers.experimental (Keras 2.15): EinsumDense, SyncBatchNormalization (one device: BatchNormalization)
and the `preprocessing` module of Keras 2.3-2.5 programs (the preprocessing layers under their old names, and
PreprocessingLayer, the base of custom layers that adapt to data: update_state per batch, then finalize_state)."""
import logging
import types

import numpy as np

from .. import _C
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


def _preprocessing_module():
    from . import layers as _layers
    module = types.ModuleType("kiln.keras.layers.experimental.preprocessing",
                              "The preprocessing layers under tf.keras.layers.experimental.preprocessing (Keras 2.15 "
                              "keeps these names for older programs).")
    for name in ("CategoryEncoding", "CenterCrop", "Discretization", "Hashing", "IntegerLookup", "Normalization",
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
    module.preprocessing = _preprocessing_module()
    return module
