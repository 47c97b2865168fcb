"""Keras' file formats, read and written with h5py:

* `.keras` (Keras v3's zip, as tf.keras 2.15 writes it): config.json (the model's serialize_keras_object dict,
  with its build_config and compile_config), metadata.json ({"keras_version", "date_saved"}) and
  model.weights.h5, whose groups follow the objects: "<path>/vars/<i>" holds the i-th own weight of the object
  at <path>, the path made of attribute names ("layers", "optimizer", a wrapped layer's "forward_layer") and,
  inside a list, the snake_case class name numbered per class ("layers/dense", "layers/dense_1"); the model's
  own weights are "/vars".
* `.weights.h5`: that weights file alone (save_weights / load_weights).
* `.h5` (Keras 2's legacy HDF5): attributes "layer_names", "backend", "keras_version" and one group per layer
  with its "weight_names" attribute and a dataset per weight name; model.save("m.h5") puts that under
  "model_weights" beside the "model_config" attribute."""
import datetime
import io
import json
import os
import warnings
import zipfile

import numpy as np

from . import backend
from .. import _C
from ._layer import _NOT_WEIGHT_HOLDERS, InputLayer, Layer
from ._serialization import serialize_keras_object

KERAS_VERSION = "2.15.0"
_CONFIG_FILENAME = "config.json"
_METADATA_FILENAME = "metadata.json"
_VARS_FNAME = "model.weights.h5"


def _h5py():
    try:
        import h5py
    except ImportError as e:  # pragma: no cover - setup.sh installs it
        raise ImportError("`save_weights` / `model.save` require h5py (Debian: apt-get install python3-h5py).") from e
    return h5py


# ---- walking the objects that own weights ------------------------------------------------------

def _is_trackable(obj):
    from .optimizers import Optimizer
    return isinstance(obj, (Layer, Optimizer))


def _own_variables(obj):
    from .optimizers import Optimizer
    if isinstance(obj, Optimizer):
        # Keras 2.15's optimizer variables: the iteration count, then the slots in the order they were made.
        if obj._iterations is None:
            return []
        return [obj._iterations] + [v for slots in obj._slots.values() for v in slots]
    # Keras 2's Layer tracks tf.Variables assigned to its attributes (in lists and dicts too) as its own
    # weights, after those add_weight made: a layer that makes tf.Variables in build saves and loads them.
    own, seen = [], set()

    def add(value, depth=0):
        if isinstance(value, _C.Variable):
            if value._state_id() not in seen:
                seen.add(value._state_id())
                own.append(value)
        elif isinstance(value, (list, tuple)) and depth < 8:
            for item in value:
                add(item, depth + 1)
        elif isinstance(value, dict) and depth < 8:
            for item in value.values():
                add(item, depth + 1)
    for v in obj._layer_weights:
        add(v)
    for key, value in vars(obj).items():
        if key not in _NOT_WEIGHT_HOLDERS:
            add(value)
    return [v for v in own if v.trainable] + [v for v in own if not v.trainable]


def _children(obj):
    """(attribute name, child) pairs in Keras' order (sorted names): layers and optimizers, and lists of them."""
    from ._model import Model
    from .optimizers import Optimizer
    if isinstance(obj, Optimizer):
        return []
    out = {}
    if isinstance(obj, Model):
        out["layers"] = obj.layers
        if obj._compiled is not None:
            # A LossScaleOptimizer saves its inner optimizer's variables there (Keras': its `variables`).
            optimizer = obj._compiled.optimizer
            out["optimizer"] = getattr(optimizer, "inner_optimizer", optimizer)
    for key, value in vars(obj).items():
        if key.startswith("_") or key in out:
            continue
        if _is_trackable(value) or (isinstance(value, (list, tuple, dict)) and any(
                _is_trackable(v) for v in (value.values() if isinstance(value, dict) else value))):
            out[key] = value
    return sorted(out.items())


def _walk(obj, path, visit, visited):
    """Calls visit(obj, path) for obj and every object below it, each once (the first path found)."""
    if id(obj) in visited:
        return
    visited.add(id(obj))
    visit(obj, path)
    for name, child in _children(obj):
        child_path = f"{path}/{name}" if path else name
        if _is_trackable(child):
            _walk(child, child_path, visit, visited)
        else:
            used = {}
            items = child.values() if isinstance(child, dict) else child
            for item in items:
                if not _is_trackable(item):
                    continue
                base = backend.to_snake_case(type(item).__name__)
                if base in used:
                    used[base] += 1
                    base = f"{base}_{used[base]}"
                else:
                    used[base] = 0
                _walk(item, f"{child_path}/{base}", visit, visited)


def _write_weights(model, h5file):
    def visit(obj, path):
        group = h5file.create_group(f"{path}/vars" if path else "vars")
        for i, v in enumerate(_own_variables(obj)):
            group.create_dataset(str(i), data=v.numpy())
    _walk(model, "", visit, set())


def _read_weights(model, h5file, skip_mismatch=False):
    from .optimizers import Optimizer

    def visit(obj, path):
        key = f"{path}/vars" if path else "vars"
        variables = _own_variables(obj)
        group = h5file[key] if key in h5file else {}
        index = list(range(len(variables)))
        if isinstance(obj, Optimizer) and len(group) == len(variables) + 1 and len(variables) \
                and np.ndim(group["1"]) == 0:
            # Keras 3 keeps the learning rate as the optimizer's variable 1, after the iteration count.
            index = [0] + list(range(2, len(group)))
            if getattr(obj, "_schedule", None) is None and hasattr(obj, "learning_rate"):
                obj.learning_rate.assign(float(np.asarray(group["1"])))
        elif isinstance(obj, Optimizer):
            if len(group) != len(variables):
                if len(group):
                    warnings.warn(f"Skipping variable loading for optimizer '{obj.name}', because it has "
                                  f"{len(variables)} variables whereas the saved optimizer has {len(group)} "
                                  "variables.", stacklevel=4)
                return
        elif len(group) != len(variables):
            message = (f"Layer '{obj.name}' expected {len(variables)} variables, but received {len(group)} variables "
                       "during loading.")
            if skip_mismatch:
                warnings.warn(message, stacklevel=4)
                return
            raise ValueError(message + f" Expected: {[v.name for v in variables]}")
        for i, v in zip(index, variables):
            value = np.asarray(group[str(i)])
            if tuple(value.shape) != tuple(v.shape.as_list()):
                message = (f"Layer '{obj.name}' weight {i} ({v.name}) has shape {tuple(v.shape.as_list())}; the file's "
                           f"has shape {value.shape}")
                if skip_mismatch:
                    warnings.warn(message, stacklevel=4)
                    continue
                raise ValueError(message)
            v.assign(value.astype(v.dtype.as_numpy_dtype, copy=False))
    _walk(model, "", visit, set())


# ---- .weights.h5 and .keras ----------------------------------------------------------------------

def save_weights_only(model, filepath):
    h5py = _h5py()
    with h5py.File(filepath, "w") as f:
        _write_weights(model, f)


def load_weights_only(model, filepath, skip_mismatch=False):
    h5py = _h5py()
    filepath = str(filepath)
    if filepath.endswith(".keras"):
        with zipfile.ZipFile(filepath, "r") as zf, zf.open(_VARS_FNAME, "r") as raw:
            with h5py.File(io.BytesIO(raw.read()), "r") as f:
                _read_weights(model, f, skip_mismatch)
        return
    with h5py.File(filepath, "r") as f:
        _read_weights(model, f, skip_mismatch)


def save_model(model, filepath):
    h5py = _h5py()
    filepath = str(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"Invalid `filepath` argument: expected a `.keras` extension. Received: filepath={filepath}")
    if not model.built:
        warnings.warn("You are saving a model that has not yet been built. It might not contain any weights yet. "
                      "Consider building the model first by calling it on some data.", stacklevel=3)
    config_json = json.dumps(serialize_keras_object(model))
    metadata_json = json.dumps({"keras_version": KERAS_VERSION,
                                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")})
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as f:
        _write_weights(model, f)
    with zipfile.ZipFile(filepath, "w") as zf:
        zf.writestr(_METADATA_FILENAME, metadata_json)
        zf.writestr(_CONFIG_FILENAME, config_json)
        zf.writestr(_VARS_FNAME, buffer.getvalue())


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002 - Keras' name
    filepath = str(filepath)
    if os.path.isdir(filepath):
        def read(name):
            path = os.path.join(filepath, name)
            if not os.path.exists(path):
                raise ValueError(f"{filepath} is not a Keras model directory written by kiln (no {name}): a plain "
                                 "SavedModel loads with kiln.saved_model.load")
            with open(path, "rb") as f:
                return f.read()
        try:
            return _load_from(read, custom_objects, compile, safe_mode)
        except ValueError as e:
            if not str(e).startswith("Unknown") or not os.path.exists(os.path.join(filepath, "saved_model.json")):
                raise
            return _revive(filepath, json.loads(read(_CONFIG_FILENAME)), e)
    with zipfile.ZipFile(filepath, "r") as zf:
        if _VARS_FNAME not in zf.namelist():
            raise ValueError(f"Expected a {_VARS_FNAME} file.")
        return _load_from(zf.read, custom_objects, compile, safe_mode)


def _load_from(read, custom_objects, compile, safe_mode):  # noqa: A002
    from . import _lambda
    h5py = _h5py()
    config = json.loads(read(_CONFIG_FILENAME))
    if not compile:
        config["compile_config"] = None
    _lambda._SAFE_MODE.append(bool(safe_mode))
    try:
        model = deserialize_model(config, custom_objects)
    finally:
        _lambda._SAFE_MODE.pop()
    with h5py.File(io.BytesIO(read(_VARS_FNAME)), "r") as f:
        _read_weights(model, f)
    return model


def save_saved_model_dir(model, dirpath):
    """TF 2.15's default format, a SavedModel directory: kiln.saved_model writes the variables and a serving
    signature (the model called with training=False on its Input specs); the Keras files sit beside it, in
    place of TF's keras_metadata.pb, for load_model."""
    from .. import saved_model
    from ..function import TensorSpec, function
    from ._layer import KerasTensor
    from ._sequential import Sequential
    from ..tensor_shape import TensorShape
    signature, specs = None, None
    inputs = model.inputs if model._is_graph_network else None
    if inputs and all(isinstance(t, KerasTensor) for t in inputs):
        specs = [TensorSpec(t.shape, t.dtype, name=t._node.layer.name) for t in inputs]
    elif isinstance(model, Sequential) and model.built and model.layers:
        name = model._input_name or f"{model.layers[0].name}_input"
        specs = [TensorSpec(TensorShape(model._build_input_shape), model.layers[0].dtype, name=name)]
    elif model.built and isinstance(model._build_input_shape, TensorShape) and model._build_input_shape.rank:
        # A subclassed model called on one input: its call for any batch size (TF saves the traces it made).
        shape = TensorShape([None] + model._build_input_shape.as_list()[1:])
        specs = [TensorSpec(shape, model.dtype, name="input_1")]
    if specs:
        if len(specs) == 1:
            signature = function(lambda inputs: model(inputs, training=False), input_signature=specs)
        else:
            signature = function(lambda *args: model(list(args), training=False), input_signature=specs)
    # The call is also the loaded object's __call__ (tf.saved_model.load(dir)(x), as TF's Keras SavedModels).
    if signature is not None:
        vars(model)["__call__"] = signature
    try:
        saved_model.save(model, dirpath, signatures=signature)
    finally:
        vars(model).pop("__call__", None)
    with open(os.path.join(dirpath, _CONFIG_FILENAME), "w") as f:
        f.write(json.dumps(serialize_keras_object(model)))
    with open(os.path.join(dirpath, _METADATA_FILENAME), "w") as f:
        f.write(json.dumps({"keras_version": KERAS_VERSION,
                            "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}))
    save_weights_only(model, os.path.join(dirpath, _VARS_FNAME))


def _revive(dirpath, config, error):
    """A SavedModel directory whose model class is not known here: as TF's Keras loader, a Model of the same class
    name whose call is the saved call trace and whose weights are the saved variables (it predicts and evaluates,
    eagerly; it has no get_config)."""
    from .. import saved_model
    from ._model import Model
    loaded = saved_model.load(dirpath)
    call = loaded.__dict__.get("__call__")
    if call is None:
        raise error
    class_name = config.get("class_name", "Model") if isinstance(config, dict) else "Model"
    name = (config.get("config") or {}).get("name") if isinstance(config, dict) else None

    def revived_call(self, inputs, training=None, mask=None):
        return self._revived_fn(inputs)

    # A loaded trace runs on values only (not inside another trace), so fit / evaluate / predict run eagerly.
    cls = type(class_name, (Model,), {"call": revived_call, "__module__": "kiln.keras.saving.legacy.saved_model.load",
                                      "run_eagerly": property(lambda self: True, lambda self, value: None)})
    model = cls(name=name)
    model._revived_fn = call
    model._revived_loaded = loaded  # its variables are the model's weights
    model.built = True
    return model


def deserialize_model(config, custom_objects=None):
    from . import layers as _layers
    model = _layers.deserialize(config, custom_objects=custom_objects)
    compile_config = config.get("compile_config") if isinstance(config, dict) else None
    if compile_config:
        model.compile_from_config(compile_config)
    return model


# ---- Keras 2's legacy .h5 ---------------------------------------------------------------------------

def _weight_layers(model):
    """The layers whose weights a legacy h5 file lists, in the model's order (nested models flattened, as
    Keras' own layers only)."""
    return [layer for layer in model.layers if not isinstance(layer, InputLayer)]


def _write_legacy_weights(model, group):
    layers = _weight_layers(model)
    group.attrs["layer_names"] = np.array([layer.name.encode("utf8") for layer in layers])
    group.attrs["backend"] = b"tensorflow"
    group.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
    for layer in layers:
        g = group.create_group(layer.name)
        weights = layer.weights
        names = [v.name.encode("utf8") for v in weights]
        g.attrs["weight_names"] = np.array(names, dtype="S") if names else np.zeros((0,), dtype="S1")
        for v, name in zip(weights, names):
            g.create_dataset(name.decode("utf8"), data=v.numpy())


def _read_legacy_weights(model, group, by_name=False, skip_mismatch=False):
    def decoded(values):
        return [x.decode("utf8") if isinstance(x, bytes) else str(x) for x in values]

    saved = decoded(group.attrs["layer_names"])
    saved_with_weights = [name for name in saved if len(group[name].attrs["weight_names"])]
    layers = [layer for layer in _weight_layers(model) if layer.weights]
    if by_name:
        pairs = [(layer, layer.name) for layer in layers if layer.name in saved]
    else:
        if len(saved_with_weights) != len(layers):
            raise ValueError(f"Layer count mismatch when loading weights from file. Model expected {len(layers)} "
                             f"layers, found {len(saved_with_weights)} saved layers.")
        pairs = list(zip(layers, saved_with_weights))
    for layer, name in pairs:
        g = group[name]
        values = [np.asarray(g[w]) for w in decoded(g.attrs["weight_names"])]
        weights = layer.weights
        if len(values) != len(weights) or any(tuple(a.shape) != tuple(v.shape.as_list())
                                              for a, v in zip(values, weights)):
            message = (f"Weight count or shapes mismatch for layer {layer.name}: the model has "
                       f"{[tuple(v.shape.as_list()) for v in weights]}, the file {[a.shape for a in values]}")
            if skip_mismatch:
                warnings.warn(message, stacklevel=4)
                continue
            raise ValueError(message)
        for v, a in zip(weights, values):
            v.assign(a.astype(v.dtype.as_numpy_dtype, copy=False))


def save_legacy_h5_weights(model, filepath):
    h5py = _h5py()
    with h5py.File(filepath, "w") as f:
        _write_legacy_weights(model, f)


def load_legacy_h5_weights(model, filepath, by_name=False, skip_mismatch=False):
    h5py = _h5py()
    with h5py.File(filepath, "r") as f:
        group = f["model_weights"] if "layer_names" not in f.attrs and "model_weights" in f else f
        _read_legacy_weights(model, group, by_name, skip_mismatch)


def save_legacy_h5_model(model, filepath):
    h5py = _h5py()
    with h5py.File(filepath, "w") as f:
        f.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps({"class_name": _class_name(model), "config": model.get_config()})
        if model._compiled is not None:
            f.attrs["training_config"] = json.dumps(model.get_compile_config())
        _write_legacy_weights(model, f.create_group("model_weights"))


def load_legacy_h5_model(filepath, custom_objects=None, compile=True):  # noqa: A002
    h5py = _h5py()
    with h5py.File(filepath, "r") as f:
        raw = f.attrs.get("model_config")
        if raw is None:
            raise ValueError(f"No model config found in the file at {filepath}.")
        config = json.loads(raw.decode("utf8") if isinstance(raw, bytes) else raw)
        model = deserialize_model(config, custom_objects)
        training = f.attrs.get("training_config")
        if compile and training is not None:
            model.compile_from_config(json.loads(training.decode("utf8") if isinstance(training, bytes) else training))
        _read_legacy_weights(model, f["model_weights"])
    return model


def _class_name(obj):
    fn = getattr(obj, "_serialized_class_name", None)
    return fn() if fn else type(obj).__name__


def model_from_json(json_string, custom_objects=None):
    return deserialize_model(json.loads(json_string), custom_objects)
