"""tf.keras.applications.imagenet_utils: the input preprocessing of the ImageNet models, decoding their
predictions, and the input-shape rules they share.

Kiln downloads nothing: ImageNet weights and the class index are read from Keras' cache
(`$KERAS_HOME/models`, by default `~/.keras/models`) when a file of Keras' name is there."""
import json
import os
import warnings

import numpy as np

from .. import backend

_CLASS_INDEX = None
_CLASS_INDEX_FILE = "imagenet_class_index.json"
_MEANS_CAFFE = (103.939, 116.779, 123.68)   # BGR
_MEANS_TORCH = (0.485, 0.456, 0.406)
_STDS_TORCH = (0.229, 0.224, 0.225)


def cached_file(name, what):
    """The path of `name` in Keras' cache of downloaded models; an error naming it when it is absent."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    path = os.path.join(home, "models", name)
    if not os.path.exists(path):
        raise Exception(f"{what}: Kiln downloads nothing, and {path} is not there. Download {name} with TensorFlow "
                        "(or from Keras' storage) into that folder, or pass weights=None or a weights file's path.")
    return path


def preprocess_input(x, data_format=None, mode="caffe"):
    """Scales a batch of images as a model's ImageNet weights expect: "caffe" RGB to BGR less the ImageNet
    means, "tf" to [-1, 1], "torch" to [0, 1] then standardized per channel. A NumPy float array is changed in
    place (as Keras does); a tensor gives a new tensor."""
    if mode not in {"caffe", "tf", "torch"}:
        raise ValueError(f"Expected mode to be one of `caffe`, `tf` or `torch`. Received: mode={mode}")
    data_format = data_format or backend.image_data_format()
    if data_format not in {"channels_first", "channels_last"}:
        raise ValueError(f"Unknown data_format {data_format}")
    if isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.floating):
            x = x.astype(backend.floatx())
        return _preprocess(x, data_format, mode)
    return _preprocess_tensor(x, data_format, mode)


def _preprocess_tensor(x, data_format, mode):
    """The same on a tensor (a KerasTensor or a traced value too), with Kiln's ops."""
    import kiln
    x = kiln.convert_to_tensor(x)
    if not x.dtype.is_floating:
        x = kiln.cast(x, backend.floatx())
    if mode == "tf":
        return x / 127.5 - 1.0
    rank = len(x.shape)
    axis = (0 if rank == 3 else 1) if data_format == "channels_first" else rank - 1
    shape = [1] * rank
    shape[axis] = 3
    if mode == "torch":
        means, stds = _MEANS_TORCH, _STDS_TORCH
        x = x / 255.0
    else:
        means, stds = _MEANS_CAFFE, None
        x = kiln.gather(x, [2, 1, 0], axis=axis)
    x = x - kiln.constant(np.reshape(means, shape), dtype=x.dtype)
    if stds is not None:
        x = x / kiln.constant(np.reshape(stds, shape), dtype=x.dtype)
    return x


def _preprocess(x, data_format, mode):
    if mode == "tf":
        x /= 127.5
        x -= 1.0
        return x
    axis = (0 if x.ndim == 3 else 1) if data_format == "channels_first" else x.ndim - 1
    if mode == "torch":
        x /= 255.0
        means, stds = _MEANS_TORCH, _STDS_TORCH
    else:
        x = np.flip(x, axis=axis)  # RGB -> BGR (a view: the subtraction below writes through it)
        means, stds = _MEANS_CAFFE, None
    shape = [1] * x.ndim
    shape[axis] = 3
    x -= np.asarray(means, x.dtype).reshape(shape)
    if stds is not None:
        x /= np.asarray(stds, x.dtype).reshape(shape)
    return x


def decode_predictions(preds, top=5):
    """The `top` classes of each row of ImageNet predictions: [(class_id, class_name, score), ...] per sample,
    best first. The class index is Keras' imagenet_class_index.json, read from Keras' cache."""
    global _CLASS_INDEX
    preds = np.asarray(preds)
    if preds.ndim != 2 or preds.shape[1] != 1000:
        raise ValueError("`decode_predictions` expects a batch of predictions (i.e. a 2D array of shape (samples, "
                         f"1000)). Found array with shape: {preds.shape}")
    if _CLASS_INDEX is None:
        with open(cached_file(_CLASS_INDEX_FILE, "decode_predictions")) as f:
            _CLASS_INDEX = json.load(f)
    results = []
    for row in preds:
        best = row.argsort()[-top:][::-1]
        found = [tuple(_CLASS_INDEX[str(i)]) + (row[i],) for i in best]
        found.sort(key=lambda entry: entry[2], reverse=True)
        results.append(found)
    return results


def obtain_input_shape(input_shape, default_size, min_size, data_format, require_flatten, weights=None):
    """The model's input shape from the user's (None: the default), checked as Keras checks it."""
    first = data_format == "channels_first"
    if weights != "imagenet" and input_shape and len(input_shape) == 3:
        channels = input_shape[0] if first else input_shape[-1]
        if channels not in {1, 3}:
            warnings.warn("This model usually expects 1 or 3 input channels. However, it was passed an input_shape "
                          f"with {channels} input channels.", stacklevel=3)
        default_shape = (channels, default_size, default_size) if first else (default_size, default_size, channels)
    else:
        default_shape = (3, default_size, default_size) if first else (default_size, default_size, 3)
    if weights == "imagenet" and require_flatten:
        if input_shape is not None and tuple(input_shape) != default_shape:
            raise ValueError("When setting `include_top=True` and loading `imagenet` weights, `input_shape` should be "
                             f"{default_shape}.  Received: input_shape={input_shape}")
        return default_shape
    if input_shape:
        input_shape = tuple(input_shape)
        if len(input_shape) != 3:
            raise ValueError("`input_shape` must be a tuple of three integers.")
        channels, spatial = (input_shape[0], input_shape[1:]) if first else (input_shape[-1], input_shape[:2])
        if channels != 3 and weights == "imagenet":
            raise ValueError(f"The input must have 3 channels; Received `input_shape={input_shape}`")
        if any(d is not None and d < min_size for d in spatial):
            raise ValueError(f"Input size must be at least {min_size}x{min_size}; Received: "
                             f"input_shape={input_shape}")
    else:
        input_shape = default_shape if require_flatten else ((3, None, None) if first else (None, None, 3))
    if require_flatten and None in input_shape:
        raise ValueError("If `include_top` is True, you should specify a static `input_shape`. Received: "
                         f"input_shape={input_shape}")
    return input_shape


def correct_pad(inputs, kernel_size):
    """The ((top, bottom), (left, right)) zero padding of a strided 'valid' convolution that Keras' models use in
    place of 'same' padding."""
    size = tuple(inputs.shape)[1:3]
    if isinstance(kernel_size, int):
        kernel_size = (kernel_size, kernel_size)
    adjust = (1, 1) if size[0] is None else (1 - size[0] % 2, 1 - size[1] % 2)
    correct = (kernel_size[0] // 2, kernel_size[1] // 2)
    return ((correct[0] - adjust[0], correct[0]), (correct[1] - adjust[1], correct[1]))


def validate_activation(classifier_activation, weights):
    if weights is None:
        return
    from .. import activations
    if classifier_activation not in {None, "softmax"} and \
            activations.get(classifier_activation) is not activations.get("softmax"):
        raise ValueError("Only `None` and `softmax` activations are allowed for the `classifier_activation` argument "
                         "when using pretrained weights, with `include_top=True`; Received: "
                         f"classifier_activation={classifier_activation}")


def check_weights_argument(weights, include_top, classes):
    """Keras' checks of `weights` and `classes`, shared by every application."""
    if not (weights in {"imagenet", None} or os.path.exists(weights)):
        raise ValueError("The `weights` argument should be either `None` (random initialization), `imagenet` "
                         "(pre-training on ImageNet), or the path to the weights file to be loaded.  Received "
                         f"`weights={weights}`")
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError('If using `weights` as `"imagenet"` with `include_top` as true, `classes` should be 1000. '
                         f"Received `classes={classes}`")


def input_of(input_tensor, input_shape):
    """The model's Input: the one given, or a new one of `input_shape`."""
    from .. import Input
    from .._layer import KerasTensor
    if input_tensor is None:
        return Input(shape=input_shape)
    if not isinstance(input_tensor, KerasTensor):
        raise ValueError(f"input_tensor is not a Keras tensor; Received `input_tensor={input_tensor}`")
    return input_tensor


def load_weights(model, weights, file_name):
    """weights="imagenet": Keras' file of that name from its cache; a path: that file; None: as initialized."""
    if weights == "imagenet":
        model.load_weights(cached_file(file_name, f"{model.name} with weights='imagenet'"))
    elif weights is not None:
        model.load_weights(weights)


def model_input(include_top, weights, input_tensor, input_shape, classes, default_size, min_size):
    """The checks every application starts with, then its Input (of the checked input shape)."""
    return checked_input(include_top, weights, input_tensor, input_shape, classes, default_size, min_size)[0]


def checked_input(include_top, weights, input_tensor, input_shape, classes, default_size, min_size=32):
    """model_input's Input and the input shape it was checked against (whose channels decide the preprocessing
    of the models that normalize their inputs)."""
    from .. import backend
    check_weights_argument(weights, include_top, classes)
    input_shape = obtain_input_shape(input_shape, default_size=default_size, min_size=min_size,
                                     data_format=backend.image_data_format(), require_flatten=include_top,
                                     weights=weights)
    return input_of(input_tensor, input_shape), input_shape


def classified_model(inputs, x, model_name, include_top, weights, pooling, classes, classifier_activation,
                     pool_names=(None, None)):
    """The usual end of an application: global average pooling ("avg_pool") and the "predictions" Dense, or
    the pooling asked for (named pool_names, or unnamed); the Model, with its weights loaded from Keras'
    "<model_name>_weights_tf_dim_ordering_tf_kernels[_notop].h5"."""
    from .._model import Model
    x = head(x, include_top, weights, pooling, classes, classifier_activation, pool_names)
    model = Model(inputs, x, name=model_name)
    suffix = "" if include_top else "_notop"
    load_weights(model, weights, f"{model_name}_weights_tf_dim_ordering_tf_kernels{suffix}.h5")
    return model


def head(x, include_top, weights, pooling, classes, classifier_activation, pool_names=(None, None),
         top_pool_name="avg_pool", dropout_rate=0.0, **dense_kwargs):
    """The top most applications end with: global average pooling (top_pool_name), Dropout ("top_dropout",
    when dropout_rate > 0) and the "predictions" Dense; without the top, the pooling asked for (named
    pool_names, or unnamed) or none."""
    from .. import layers
    if include_top:
        x = layers.GlobalAveragePooling2D(name=top_pool_name)(x)
        if dropout_rate > 0:
            x = layers.Dropout(dropout_rate, name="top_dropout")(x)
        validate_activation(classifier_activation, weights)
        return layers.Dense(classes, activation=classifier_activation, name="predictions", **dense_kwargs)(x)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=pool_names[1])(x)
    return x
