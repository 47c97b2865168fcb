"""kiln.keras (tf.keras) in pure Python on Kiln's engine: layers that build on their first call,
Sequential, functional and subclassed Models, losses, metrics, optimizers, callbacks, regularizers and
constraints, compile / fit / evaluate / predict with the training step traced into one graph
(`model.train_function`), and Keras' saving formats (.keras, .weights.h5, .h5)."""
from . import backend, activations, initializers, layers, losses, metrics, optimizers, callbacks  # noqa: F401
from . import regularizers, constraints, mixed_precision  # noqa: F401
from . import datasets, utils  # noqa: F401
from ._layer import Input, InputLayer  # noqa: F401
from . import _symbolic_mask  # noqa: F401  (KerasTensor._keras_mask)
from ._model import Model  # noqa: F401
from ._sequential import Sequential  # noqa: F401
from . import models, saving, preprocessing  # noqa: F401
from . import applications  # noqa: F401

__version__ = "2.15.0"

__all__ = ["Input", "Model", "Sequential", "activations", "applications", "backend", "callbacks", "constraints",
           "datasets", "initializers", "layers", "losses", "metrics", "mixed_precision", "models", "optimizers",
           "preprocessing", "regularizers", "saving", "utils"]
