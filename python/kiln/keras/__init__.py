"""kiln.keras (tf.keras) in pure Python on Kiln's engine: layers that build on their first call,
Sequential, functional and subclassed Models, losses, metrics, optimizers, and compile / fit /
evaluate / predict with the training step traced into one graph (`model.train_function`)."""
from . import backend, activations, initializers, layers, losses, metrics, optimizers, callbacks  # noqa: F401
from . import datasets, utils  # noqa: F401
from ._layer import Input, InputLayer  # noqa: F401
from ._model import Model, Sequential  # noqa: F401
from . import models  # noqa: F401

__all__ = ["Input", "Model", "Sequential", "activations", "backend", "callbacks", "datasets", "initializers",
           "layers", "losses", "metrics", "models", "optimizers", "utils"]
