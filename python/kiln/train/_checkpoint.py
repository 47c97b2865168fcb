"""tf.train.Checkpoint, CheckpointManager and the checkpoint readers, in TF's object-based
format: a TensorBundle (_bundle.py) whose keys are object-graph paths
("model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"), whose
"_CHECKPOINTABLE_OBJECT_GRAPH" entry is the TrackableObjectGraph proto, beside the
directory's `checkpoint` file (a CheckpointState in text format).

The graph is found as TF finds it, breadth first from the root: a variable is a leaf;
a list, tuple or dict a node whose children are its items ("0", "1", ... or keys); a
kiln.Module (Keras layers, models, optimizers) a node whose children are the
variables it made (by name), a Functional/Sequential model's "layer_with_weights-N"
and "layer-N", then its attributes that hold anything trackable. An object's key is
its first path found. An optimizer's slots are its graph's slot variables
(".OPTIMIZER_SLOT" keys), as TF writes them."""
import collections as _collections
import os as _os
import time as _time
import weakref as _weakref

import numpy as _np
from google.protobuf import text_format as _text_format

from .. import _C
from .. import errors as _errors
from ..io import _messages as _pb
from ..io._proto import build as _build
from . import _bundle

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VALUE = "VARIABLE_VALUE"
_ITERATOR = "ITERATOR_STATE"
_IGNORED = frozenset({"_layer_weights", "_compiled", "_slots", "_fn_layers", "_seq_layers", "_kiln_tracked",
                      "_learning_rate_var"})

CheckpointState = _build("tensorflow/python/training/checkpoint_state.proto", "tensorflow", messages={
    "CheckpointState": [("model_checkpoint_path", 1, "string"), ("all_model_checkpoint_paths", 2, "string", "repeated"),
                        ("all_model_checkpoint_timestamps", 3, "double", "repeated"),
                        ("last_preserved_timestamp", 4, "double")],
})["CheckpointState"]


# ---- the object graph ------------------------------------------------------------------------

def _escape(name):
    """TF's escaping of a local name in a key: "." -> "..", "/" -> ".S"."""
    return name.replace(".", "..").replace("/", ".S")


def _is_variable(value):
    return isinstance(value, _C.Variable)


def _is_optimizer(value):
    return hasattr(value, "_slot_names") and isinstance(getattr(value, "_slots", None), dict)


def _is_saveable(value):
    """A leaf with a state of its own (a dataset iterator): saved as a string under ITERATOR_STATE."""
    return hasattr(value, "_kiln_checkpoint_state") and not isinstance(value, type)


def _is_table(value):
    """A leaf saved as several named tensors (a tf.lookup mutable table: "table-keys", "table-values")."""
    return hasattr(value, "_kiln_checkpoint_tensors") and not isinstance(value, type)


def _is_leaf(value):
    return _is_variable(value) or _is_saveable(value) or _is_table(value)


def _trackable(value, depth=0):
    if _is_leaf(value) or isinstance(value, (Checkpoint,)) or _is_module(value) or _delegated_children(value):
        return True
    if depth < 8 and isinstance(value, (list, tuple)):
        return any(_trackable(v, depth + 1) for v in value)
    if depth < 8 and isinstance(value, dict):
        return any(_trackable(v, depth + 1) for v in value.values())
    return False


def _is_module(value):
    from ..module import Module
    return isinstance(value, Module)


def _delegated_children(value):
    """An object that names its checkpoint children itself (a wrapper such as Keras' LossScaleOptimizer, which
    delegates to what it wraps, as TF's DelegatingTrackableMixin): its `_checkpoint_children` method."""
    return getattr(type(value), "_checkpoint_children", None)


def _weight_name(variable):
    name = variable.name.rsplit(":", 1)[0]
    return name.rsplit("/", 1)[-1]


def children(obj):
    """The (local name, child) pairs of a node, in TF's order, names unique."""
    out, names = [], set()

    def add(name, value):
        if name not in names and _trackable(value):
            names.add(name)
            out.append((name, value))

    if isinstance(obj, Checkpoint):
        for name, value in obj._kiln_tracked.items():
            add(name, value)
        return out
    if isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            add(str(i), value)
        return out
    if isinstance(obj, dict):
        for key, value in obj.items():
            add(str(key), value)
        return out
    if _is_leaf(obj) or not hasattr(obj, "__dict__"):
        return out
    own = _delegated_children(obj)
    if own is not None:
        for name, value in own(obj):
            add(name, value)
        return out
    if _is_optimizer(obj):  # the names of TF 2.15's Keras optimizers
        if getattr(obj, "_iterations", None) is not None:
            add("_iterations", obj._iterations)
        if getattr(obj, "_learning_rate_var", None) is not None:
            add("_learning_rate", obj._learning_rate_var)
    if getattr(obj, "_is_graph_network", False) or type(obj).__name__ == "Sequential":
        with_weights = 0
        for i, layer in enumerate(obj.layers):
            if getattr(layer, "weights", None):
                add(f"layer_with_weights-{with_weights}", layer)
                with_weights += 1
            add(f"layer-{i}", layer)
    for variable in getattr(obj, "_layer_weights", ()) or ():
        add(_weight_name(variable), variable)
    compiled = getattr(obj, "_compiled", None)
    if compiled is not None and getattr(compiled, "optimizer", None) is not None:
        add("optimizer", compiled.optimizer)  # a compiled Keras model tracks its optimizer, as TF's Model does
    ignored = _IGNORED | getattr(type(obj), "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    for key, value in list(vars(obj).items()):
        if key not in ignored:
            add(key, value)
    return out


def _identity(obj):
    return ("v", obj._state_id()) if _is_variable(obj) else ("o", id(obj))


class _Graph:
    """The live object graph: nodes (breadth first), their paths, children and slots."""

    def __init__(self, root):
        self.nodes, self.paths, self.refs = [root], [[]], [[]]
        self.ids = {_identity(root): 0}
        queue = _collections.deque([0])
        while queue:
            i = queue.popleft()
            for name, child in children(self.nodes[i]):
                key = _identity(child)
                if key not in self.ids:
                    self.ids[key] = len(self.nodes)
                    self.nodes.append(child)
                    self.paths.append(self.paths[i] + [name])
                    self.refs.append([])
                    queue.append(self.ids[key])
                self.refs[i].append((name, self.ids[key]))
        # Slot variables: (optimizer node, original variable node, slot name, slot node).
        self.slots = []
        self.slot_keys = {}
        for opt_id in range(len(self.nodes)):
            opt = self.nodes[opt_id]
            if not _is_optimizer(opt):
                continue
            for state_id, slots in opt._slots.items():
                original = self.ids.get(("v", state_id))
                if original is None:
                    continue
                for slot_name, slot in zip(opt._slot_names, slots):
                    slot_id = len(self.nodes)
                    self.nodes.append(slot)
                    self.paths.append(None)
                    self.refs.append([])
                    self.ids.setdefault(_identity(slot), slot_id)
                    self.slots.append((opt_id, original, slot_name, slot_id))
                    self.slot_keys[slot_id] = (f"{self.path_string(original)}/.OPTIMIZER_SLOT/"
                                               f"{self.path_string(opt_id)}/{_escape(slot_name)}")

    def path_string(self, node_id):
        return "/".join(_escape(p) for p in self.paths[node_id])

    def key(self, node_id):
        base = self.slot_keys.get(node_id) or self.path_string(node_id)
        return f"{base}/.ATTRIBUTES/{_ITERATOR if _is_saveable(self.nodes[node_id]) else _VALUE}"

    def table_tensors(self, node_id):
        """A table's tensors by checkpoint key."""
        base = self.path_string(node_id)
        return {f"{base}/.ATTRIBUTES/{name}": value
                for name, value in self.nodes[node_id]._kiln_checkpoint_tensors().items()}

    def proto(self):
        graph = _pb.TrackableObjectGraph()
        for i, obj in enumerate(self.nodes):
            node = graph.nodes.add()
            for name, child in self.refs[i]:
                node.children.add(node_id=child, local_name=name)
            if _is_variable(obj):
                node.attributes.add(name=_VALUE, full_name=obj.name.rsplit(":", 1)[0], checkpoint_key=self.key(i))
            elif _is_saveable(obj):
                node.attributes.add(name=_ITERATOR, full_name="Iterator", checkpoint_key=self.key(i))
            elif _is_table(obj):
                for key in self.table_tensors(i):
                    node.attributes.add(name=key.rsplit("/", 1)[1], full_name=obj.name, checkpoint_key=key)
        for opt_id, original, slot_name, slot_id in self.slots:
            graph.nodes[opt_id].slot_variables.add(original_variable_node_id=original, slot_name=slot_name,
                                                   slot_variable_node_id=slot_id)
        # has_checkpoint_values: whether a node or anything under it holds a value (TF skips
        # the subtrees without when restoring).
        has = [_is_leaf(obj) for obj in self.nodes]
        for _ in range(len(self.nodes)):
            changed = False
            for i in range(len(self.nodes)):
                if not has[i] and (any(has[c] for _, c in self.refs[i]) or
                                   any(has[s] for o, _, _, s in self.slots if o == i)):
                    has[i] = changed = True
            if not changed:
                break
        for node, value in zip(graph.nodes, has):
            node.has_checkpoint_values.value = value
        return graph


def _value_of(variable):
    value = variable.numpy()
    return _np.asarray(value)


def _save_tensors(root):
    graph = _Graph(root)
    tensors = {graph.key(i): _value_of(obj) for i, obj in enumerate(graph.nodes) if _is_variable(obj)}
    tensors.update({graph.key(i): _np.array(obj._kiln_checkpoint_state(), dtype=object)
                    for i, obj in enumerate(graph.nodes) if _is_saveable(obj)})
    for i, obj in enumerate(graph.nodes):
        if _is_table(obj):
            tensors.update(graph.table_tensors(i))
    tensors[OBJECT_GRAPH_KEY] = _np.array(graph.proto().SerializeToString(), dtype=object)
    return tensors


# ---- restoring ---------------------------------------------------------------------------------

def _assign(variable, value, key, prefix):
    shape = list(variable.shape.as_list())
    if list(value.shape) != shape:
        raise ValueError(f"Received incompatible tensor with shape {list(value.shape)} when attempting to restore "
                         f"variable with shape {shape} and name {key} (checkpoint {prefix}).")
    from .._ops import convert_to_tensor
    with _C.init_scope():  # a variable made while a function traces takes its value now, not in the graph
        variable.assign(convert_to_tensor(value.astype(variable.dtype._np) if value.dtype != object else value,
                                          variable.dtype))


class LoadStatus:
    """What a restore matched (tf.train.Checkpoint.restore's status object). Asked when its
    assertions run, so values restored later (variables made after restore()) count."""

    def __init__(self, restoration):
        self._restoration = restoration
        self._prefix = None if restoration is None else restoration.prefix

    def assert_consumed(self):
        """Every value in the checkpoint went to an object, and every object got one."""
        unmatched = self._restoration.unmatched_checkpoint_keys()
        if unmatched:
            raise AssertionError(f"Unresolved object in checkpoint {self._prefix}: {', '.join(sorted(unmatched))}")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        unmatched = self._restoration.unmatched_live_keys()
        if unmatched:
            raise AssertionError(f"Object not assigned a value from checkpoint {self._prefix}: "
                                 f"{', '.join(sorted(unmatched))}")
        return self

    def assert_nontrivial_match(self):
        if not self._restoration.assigned:
            raise AssertionError(f"Nothing except the root object matched a checkpointed value ({self._prefix}).")
        return self

    def expect_partial(self):
        """Silences the check that every value was used (Kiln prints no such warning)."""
        return self

    def run_restore_ops(self, session=None):
        """Values are restored when restore() runs (eagerly), or when their variables are made."""


class _NoCheckpointStatus(LoadStatus):
    def __init__(self):
        super().__init__(None)

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed


def _read_object_graph(reader, prefix):
    if OBJECT_GRAPH_KEY not in reader.entries:
        raise _errors.UnimplementedError(f"{prefix}: a name-based (TF1) checkpoint without an object graph; "
                                         "Kiln restores object-based checkpoints")
    try:
        return _pb.TrackableObjectGraph.FromString(reader.get(OBJECT_GRAPH_KEY).item())
    except _errors.OpError:
        raise
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError
        raise _errors.DataLossError(f"{prefix}{_bundle.DATA_SUFFIX}: the object graph is damaged ({e})") from None


class _Restoration:
    """One restore(): the saved graph matched against the live objects by path. Values go to
    the variables that exist now; what the checkpoint holds for objects not made yet waits
    (kiln.train._deferred) and is matched again whenever a Keras layer makes variables, so a
    layer built after restore() starts from the saved values, as in TF."""

    def __init__(self, root, prefix):
        self.prefix = prefix
        self.reader = _bundle.BundleReader(prefix)
        self.saved = _read_object_graph(self.reader, prefix)
        # Held weakly: a restoration waiting for variables must not keep the model alive. A dropped
        # Checkpoint (`Checkpoint(model=m).restore(p)`) is stood in for by its children, as in TF,
        # where the waiting values hang on the objects themselves.
        self._root_ref = _reference(root)
        self._children_refs = [(name, _reference(value)) for name, value in root._kiln_tracked.items()] \
            if isinstance(root, Checkpoint) else []
        self.assigned = {}  # saved node id -> identity of the live variable that took its value
        self.keys = {node_id: attribute.checkpoint_key for node_id, node in enumerate(self.saved.nodes)
                     for attribute in node.attributes}

    def match(self):
        """Maps saved nodes to live objects (breadth first, as TF) and restores every variable
        not restored yet. Returns whether values are still waiting for their variables."""
        saved, root = self.saved, self.root()
        if root is None:
            return False
        live_of = {0: root}
        queue = _collections.deque([0])
        while queue:
            node_id = queue.popleft()
            obj = live_of[node_id]
            if _is_optimizer(obj) and getattr(obj, "_iterations", None) is None and saved.nodes[node_id].children:
                obj.build([])  # the optimizer's own variables, to take the saved step count and rate
            live_children = dict(children(obj))
            for ref in saved.nodes[node_id].children:
                child = live_children.get(ref.local_name)
                if child is not None and ref.node_id not in live_of:
                    live_of[ref.node_id] = child
                    queue.append(ref.node_id)
        # Slots: made now for the variables the checkpoint has them for (TF restores them when made).
        for node_id, node in enumerate(saved.nodes):
            opt = live_of.get(node_id)
            if opt is None or not _is_optimizer(opt):
                continue
            for slot in node.slot_variables:
                variable = live_of.get(slot.original_variable_node_id)
                if variable is None or not _is_variable(variable):
                    continue
                opt.build([variable])
                live_of[slot.slot_variable_node_id] = opt.get_slot(variable, slot.slot_name)
        for node_id, key in self.keys.items():
            obj = live_of.get(node_id)
            if obj is None or not _is_leaf(obj) or self.assigned.get(node_id) == _identity(obj):
                continue
            if _is_saveable(obj):
                obj._kiln_restore_state(self.reader.get(key).item())
            elif _is_table(obj):
                obj._kiln_restore_tensors({a.name: self.reader.get(a.checkpoint_key)
                                           for a in self.saved.nodes[node_id].attributes})
            else:
                _assign(obj, self.reader.get(key), key, self.prefix)
            self.assigned[node_id] = _identity(obj)
        return len(self.assigned) < len(self.keys)

    def root(self):
        root = self._root_ref()
        if root is not None or not self._children_refs:
            return root
        alive = [(name, ref()) for name, ref in self._children_refs]
        if all(value is None for _, value in alive):
            return None
        view = Checkpoint()
        for name, value in alive:
            if value is not None:
                view._kiln_tracked[name] = value
        return view

    def unmatched_checkpoint_keys(self):
        return [key for node_id, key in self.keys.items() if node_id not in self.assigned]

    def unmatched_live_keys(self):
        restored = set(self.assigned.values())
        root = self.root()
        if root is None:
            return []
        live = _Graph(root)
        return [live.key(i) for i, obj in enumerate(live.nodes) if _is_leaf(obj) and _identity(obj) not in restored]


def _reference(value):
    """A weak reference where Python allows one (lists and dicts hold theirs strongly)."""
    try:
        return _weakref.ref(value)
    except TypeError:
        return lambda: value


class _NameBasedStatus(LoadStatus):
    """TF's NameBasedSaverStatus: a TF 1 checkpoint (no object graph) restored by variable
    names; it can tell only which live variables found no value."""

    def __init__(self, prefix, unmatched):
        super().__init__(None)
        self._prefix, self._unmatched = prefix, unmatched

    def assert_consumed(self):
        raise AssertionError("Restoring a name-based checkpoint. No load status is available.")

    def assert_existing_objects_matched(self):
        if self._unmatched:
            raise AssertionError(f"Some objects had attributes which were not restored from {self._prefix}: "
                                 f"{', '.join(sorted(self._unmatched))}")
        return self

    def assert_nontrivial_match(self):
        return self.assert_consumed()


def _restore_by_name(root, reader, prefix):
    """TF 2's fallback for a TF 1 checkpoint: each live variable takes the value saved under its
    name without the ":0" (global names, so fragile, as TF warns)."""
    import warnings
    warnings.warn("Restoring a name-based tf.train.Saver checkpoint using the object-based restore API. This mode "
                  "uses global names to match variables, and so is somewhat fragile. It also adds new restore ops to "
                  "the graph each time it is called when graph building. Prefer re-encoding training checkpoints in "
                  "the object-based format: run save() on the object-based saver (the same one this message is "
                  "coming from) and use that checkpoint in the future.", stacklevel=3)
    unmatched = []
    for obj in _Graph(root).nodes:
        if not _is_variable(obj):
            continue
        name = obj.name[:-2] if obj.name.endswith(":0") else obj.name
        if name in reader.entries:
            _assign(obj, reader.get(name), name, prefix)
        else:
            unmatched.append(name)
    return _NameBasedStatus(prefix, unmatched)


def _restore(root, prefix):
    reader = _bundle.BundleReader(prefix)
    if OBJECT_GRAPH_KEY not in reader.entries:
        return _restore_by_name(root, reader, prefix)
    restoration = _Restoration(root, prefix)
    if restoration.match():
        from . import _deferred
        _deferred.wait_for_variables(restoration)
    return LoadStatus(restoration)


# ---- tf.train.Checkpoint ------------------------------------------------------------------------

def _value_added():
    """A trackable joined a Checkpoint (or one of its lists): a restore still waiting for objects at that path
    gives them their values now, as TF restores on attribute assignment."""
    from . import _deferred
    _deferred.variables_created()


class ListWrapper(list):
    """A list assigned to a Checkpoint attribute (TF's ListWrapper): tracked even while empty, and what is
    appended to it later is restored from a waiting restore()."""

    def _changed(self):
        if any(_trackable(v) for v in self):
            _value_added()

    def append(self, value):
        super().append(value)
        self._changed()

    def extend(self, values):
        super().extend(values)
        self._changed()

    def insert(self, index, value):
        super().insert(index, value)
        self._changed()

    def __setitem__(self, index, value):
        super().__setitem__(index, value)
        self._changed()

    def __repr__(self):
        return f"ListWrapper({list.__repr__(self)})"


class Checkpoint:
    """tf.train.Checkpoint(root=None, **kwargs): the objects to save, each a child of
    this root by its keyword (attributes set later are tracked too)."""

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_kiln_tracked", _collections.OrderedDict())
        object.__setattr__(self, "_save_counter", None)
        if root is not None:
            for name, value in children(root):
                self._kiln_tracked[name] = value
        for name, value in sorted(kwargs.items()):
            if not _trackable(value):
                raise ValueError(f"`Checkpoint` was expecting value to be a trackable object (an object derived from "
                                 f"`Trackable`), got {value}. If you believe this object should be trackable (i.e. "
                                 "it is part of the TensorFlow Python API and manages state), please open an issue.")
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if type(value) is list and not name.startswith("_"):
            value = ListWrapper(value)
        object.__setattr__(self, name, value)
        if not name.startswith("_") and (_trackable(value) or isinstance(value, ListWrapper)):
            self._kiln_tracked[name] = value
            _value_added()

    @property
    def save_counter(self):
        """An int64 variable: how many times save() has run (saved and restored with the rest)."""
        if self._save_counter is None:
            with _C.init_scope():
                counter = _C.Variable(_C.constant(0, _dtypes().int64._enum), False, "save_counter", None)
            object.__setattr__(self, "_save_counter", counter)
            self._kiln_tracked["save_counter"] = counter
        return self._save_counter

    def write(self, file_prefix, options=None):
        """Writes the checkpoint at exactly `file_prefix` (no counter, no `checkpoint` file)."""
        prefix = _path(file_prefix)
        _bundle.write(prefix, _save_tensors(self))
        return prefix

    def save(self, file_prefix, options=None):
        """Writes `<file_prefix>-<save_counter>` and records it in the directory's `checkpoint` file."""
        counter = self.save_counter
        counter.assign(_C.constant(int(counter.numpy()) + 1, _dtypes().int64._enum))
        path = self.write(f"{_path(file_prefix)}-{int(counter.numpy())}")
        update_checkpoint_state(_os.path.dirname(path) or ".", path, [path], [_time.time()])
        return path

    def read(self, save_path, options=None):
        return _restore(self, _path(save_path))

    def restore(self, save_path, options=None):
        """Restores the values saved at `save_path` into the objects that match them by path;
        the status object tells what matched (assert_consumed, expect_partial, ...)."""
        if save_path is None:
            return _NoCheckpointStatus()
        path = _path(save_path)
        if _os.path.isdir(path):
            raise _errors.InvalidArgumentError(f"{path} is a directory: pass a checkpoint prefix (for example "
                                               "tf.train.latest_checkpoint(directory))")
        if self._save_counter is None and _has_save_counter(path):
            self.save_counter  # noqa: B018 - made now so it takes the saved count
        return _restore(self, path)


def _has_save_counter(prefix):
    try:
        return "save_counter/.ATTRIBUTES/VARIABLE_VALUE" in _bundle.BundleReader(prefix).entries
    except _errors.OpError:
        return False


def _dtypes():
    from .. import dtypes
    return dtypes


def _path(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    return value.decode() if isinstance(value, bytes) else _os.fspath(value)


# ---- the `checkpoint` state file -------------------------------------------------------------

def _relative(path, directory):
    return _os.path.relpath(path, directory) if _os.path.dirname(path) == directory.rstrip("/") or \
        _os.path.abspath(_os.path.dirname(path)) == _os.path.abspath(directory) else path


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            all_model_checkpoint_timestamps=None, last_preserved_timestamp=None, latest_filename=None):
    state = CheckpointState(model_checkpoint_path=_relative(model_checkpoint_path, save_dir))
    state.all_model_checkpoint_paths.extend(_relative(p, save_dir) for p in (all_model_checkpoint_paths or []))
    state.all_model_checkpoint_timestamps.extend(all_model_checkpoint_timestamps or [])
    state.last_preserved_timestamp = last_preserved_timestamp if last_preserved_timestamp is not None else \
        (all_model_checkpoint_timestamps or [_time.time()])[-1]
    _bundle._atomic_write(_os.path.join(save_dir, latest_filename or "checkpoint"),
                          _text_format.MessageToString(state).encode())


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """tf.train.get_checkpoint_state: the directory's CheckpointState, or None."""
    path = _os.path.join(_path(checkpoint_dir), latest_filename or "checkpoint")
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return None
    try:
        state = _text_format.Parse(text, CheckpointState())
    except _text_format.ParseError as e:
        raise _errors.DataLossError(f"{path}: not a valid checkpoint state file ({e})") from None
    directory = _path(checkpoint_dir)
    if state.model_checkpoint_path and not _os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = _os.path.join(directory, state.model_checkpoint_path)
    paths = [p if _os.path.isabs(p) else _os.path.join(directory, p) for p in state.all_model_checkpoint_paths]
    del state.all_model_checkpoint_paths[:]
    state.all_model_checkpoint_paths.extend(paths)
    return state


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint the directory's `checkpoint` file names, if its
    index exists; else None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    path = state.model_checkpoint_path
    return path if _os.path.exists(path + _bundle.INDEX_SUFFIX) else None


class CheckpointManager:
    """tf.train.CheckpointManager: numbered saves in `directory`, the `max_to_keep` newest kept
    (None: all), the `checkpoint` file kept up to date."""

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError(f"`checkpoint` must be a tf.train.Checkpoint, got {type(checkpoint)}")
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        self._checkpoint = checkpoint
        self._directory = _path(directory)
        self._max_to_keep = max_to_keep
        self._keep_every_s = None if keep_checkpoint_every_n_hours is None else keep_checkpoint_every_n_hours * 3600
        self._prefix = _os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._last_step = None
        self._init_fn = init_fn
        state = get_checkpoint_state(self._directory)
        self._kept = []  # (path, timestamp), oldest first
        self._last_preserved = _time.time()
        if state is not None:
            times = list(state.all_model_checkpoint_timestamps)
            paths = list(state.all_model_checkpoint_paths)
            times = times if len(times) == len(paths) else [_time.time()] * len(paths)
            self._kept = [(p, t) for p, t in zip(paths, times) if _os.path.exists(p + _bundle.INDEX_SUFFIX)]
            self._last_preserved = state.last_preserved_timestamp or self._last_preserved

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def checkpoints(self):
        return [p for p, _ in self._kept]

    @property
    def latest_checkpoint(self):
        return self._kept[-1][0] if self._kept else None

    @property
    def checkpoint_interval(self):
        return self._interval

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        if self._interval is not None and check_interval:
            if self._step_counter is None:
                raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
            step = int(_np.asarray(self._step_counter.numpy() if hasattr(self._step_counter, "numpy")
                                   else self._step_counter))
            if self._last_step is not None and step < self._last_step + self._interval:
                return None
            self._last_step = step
        counter = self._checkpoint.save_counter
        counter.assign(_C.constant(int(counter.numpy()) + 1, _dtypes().int64._enum))
        if checkpoint_number is None:
            checkpoint_number = int(counter.numpy())
        elif hasattr(checkpoint_number, "numpy"):
            checkpoint_number = int(checkpoint_number.numpy())
        path = self._checkpoint.write(f"{self._prefix}-{int(checkpoint_number)}")
        now = _time.time()
        self._kept = [(p, t) for p, t in self._kept if p != path] + [(path, now)]
        self._sweep()
        update_checkpoint_state(self._directory, path, [p for p, _ in self._kept], [t for _, t in self._kept],
                                self._last_preserved)
        return path

    def _sweep(self):
        if self._max_to_keep is None:
            return
        while len(self._kept) > self._max_to_keep:
            path, stamp = self._kept.pop(0)
            if self._keep_every_s is not None and stamp - self._last_preserved >= self._keep_every_s:
                self._last_preserved = stamp  # kept on disk, no longer managed
                continue
            for suffix in (_bundle.INDEX_SUFFIX, _bundle.DATA_SUFFIX):
                try:
                    _os.remove(path + suffix)
                except FileNotFoundError:
                    pass

    def restore_or_initialize(self):
        latest = self.latest_checkpoint
        if latest is not None:
            self._checkpoint.restore(latest)
            return latest
        if self._init_fn is not None:
            self._init_fn()
        return None


# ---- reading a checkpoint's variables ------------------------------------------------------------

def _prefix_of(ckpt_dir_or_file):
    path = _path(ckpt_dir_or_file)
    if _os.path.isdir(path):
        latest = latest_checkpoint(path)
        if latest is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return latest
    return path


class CheckpointReader:
    """tf.train.load_checkpoint's reader: the keys, their shapes and dtypes, their values."""

    def __init__(self, prefix):
        self._reader = _bundle.BundleReader(prefix)

    def get_variable_to_shape_map(self):
        return {k: self._reader.shape(k) for k in self._reader.entries}

    def get_variable_to_dtype_map(self):
        from .. import dtypes
        return {k: dtypes.as_dtype(self._reader.dtype_name(k)) for k in self._reader.entries}

    def has_tensor(self, name):
        return name in self._reader.entries

    def get_tensor(self, name):
        value = self._reader.get(name)
        return value.item() if value.dtype == object and value.ndim == 0 else value


def load_checkpoint(ckpt_dir_or_file):
    return CheckpointReader(_prefix_of(ckpt_dir_or_file))


def list_variables(ckpt_dir_or_file):
    """(key, shape) of every tensor in the checkpoint, sorted by key."""
    reader = load_checkpoint(ckpt_dir_or_file)
    return sorted(reader.get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)

