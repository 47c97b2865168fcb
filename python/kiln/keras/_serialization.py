"""Keras' object (de)serialization: `{"module", "class_name", "config", "registered_name"}` dicts, the registry
of custom classes (keras.saving.register_keras_serializable, "Package>Name") and custom_objects scopes, which
from_config of nested objects (a Dense's regularizer, a model's layers) consult while a load runs."""
import threading

_GLOBAL_CUSTOM_OBJECTS = {}   # registered name ("Package>Name") -> class or function
_GLOBAL_CUSTOM_NAMES = {}     # class or function -> registered name
_scope = threading.local()


def register_keras_serializable(package="Custom", name=None):
    """Class (or function) decorator: makes it known to deserialization as "package>name" (and by its bare name)."""

    def decorator(arg):
        class_name = name if name is not None else arg.__name__
        registered_name = package + ">" + class_name
        if isinstance(arg, type) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() method.")
        _GLOBAL_CUSTOM_OBJECTS[registered_name] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered_name
        return arg
    return decorator


def get_registered_name(obj):
    return _GLOBAL_CUSTOM_NAMES.get(obj, getattr(obj, "__name__", type(obj).__name__))


def get_registered_object(name, custom_objects=None, module_objects=None):
    for table in _scopes()[::-1]:
        if name in table:
            return table[name]
    if custom_objects and name in custom_objects:
        return custom_objects[name]
    if name in _GLOBAL_CUSTOM_OBJECTS:
        return _GLOBAL_CUSTOM_OBJECTS[name]
    for registered, obj in _GLOBAL_CUSTOM_OBJECTS.items():
        if registered.split(">", 1)[-1] == name:
            return obj
    if module_objects and name in module_objects:
        return module_objects[name]
    return None


def get_custom_objects():
    """The global table of custom objects (name -> class): entries added here are found by name."""
    return _GLOBAL_CUSTOM_OBJECTS


def _scopes():
    if not hasattr(_scope, "stack"):
        _scope.stack = []
    return _scope.stack


class CustomObjectScope:
    """`with custom_object_scope({"MyLayer": MyLayer}):` deserialization inside finds these names."""

    def __init__(self, *custom_objects):
        self.custom_objects = {}
        for table in custom_objects:
            self.custom_objects.update(table or {})

    def __enter__(self):
        _scopes().append(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _scopes().pop()
        return False


custom_object_scope = CustomObjectScope


def _public_module(obj):
    """The Keras module a built-in object's class is published in ("keras.layers", ...)."""
    module = type(obj).__module__
    if not module.startswith("kiln.keras"):
        return module
    for part, public in (("regularizers", "keras.regularizers"), ("constraints", "keras.constraints"),
                         ("initializers", "keras.initializers"), ("optimizers", "keras.optimizers"),
                         ("losses", "keras.losses"), ("metrics", "keras.metrics"), ("schedules",
                         "keras.optimizers.schedules")):
        if part in module:
            return public
    return "keras.layers"


def serialize_keras_object(obj):
    """None, plain values and lists as they are; a function by its registered name (or its name); anything with
    get_config as Keras' dict."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if isinstance(obj, (list, tuple)):
        return [serialize_keras_object(v) for v in obj]
    if isinstance(obj, dict):
        return {k: serialize_keras_object(v) for k, v in obj.items()}
    if not hasattr(obj, "get_config"):
        if callable(obj):
            return _GLOBAL_CUSTOM_NAMES.get(obj, getattr(obj, "__name__", repr(obj)))
        raise TypeError(f"Cannot serialize {obj!r}: it has no get_config()")
    registered = _GLOBAL_CUSTOM_NAMES.get(type(obj))
    name_fn = getattr(obj, "_serialized_class_name", None)
    module_fn = getattr(obj, "_serialized_module", None)
    out = {"module": module_fn() if module_fn else (type(obj).__module__ if registered else _public_module(obj)),
           "class_name": name_fn() if name_fn else type(obj).__name__,
           "config": obj.get_config(), "registered_name": registered}
    build_fn = getattr(obj, "get_build_config", None)
    if build_fn is not None:
        build_config = build_fn()
        if build_config:
            out["build_config"] = build_config
    compile_fn = getattr(obj, "get_compile_config", None)
    if compile_fn is not None and getattr(obj, "_compiled", None) is not None:
        out["compile_config"] = compile_fn()
    return out


def _class_of_keras_module(module, class_name):
    """Keras imports the module a class was saved from; the applications' own layers (ConvNeXt's LayerScale, ...)
    are found so in Kiln's module of the same name."""
    for prefix in ("keras.src.applications.", "keras.applications."):
        if isinstance(module, str) and module.startswith(prefix):
            import importlib
            try:
                found = importlib.import_module("kiln.keras.applications." + module[len(prefix):])
            except ImportError:
                return None
            cls = getattr(found, class_name, None)
            return cls if isinstance(cls, type) else None
    return None


def deserialize_keras_object(config, module_objects=None, custom_objects=None, printable_module_name="object"):
    """The object a serialize_keras_object dict (or a name) describes: its class found in the custom_objects
    given, the active scopes, the registry, then module_objects; built with from_config (or the constructor)."""
    if config is None:
        return None
    if isinstance(config, str):
        obj = get_registered_object(config, custom_objects, module_objects)
        if obj is None:
            raise ValueError(f"Unknown {printable_module_name}: '{config}'. Please ensure you are using a "
                             "`keras.utils.custom_object_scope` and that this object is included in the scope. See "
                             "https://www.tensorflow.org/guide/keras/save_and_serialize#registering_the_custom_object "
                             "for details.")
        return obj
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"Could not interpret serialized {printable_module_name}: {config!r}")
    class_name = config["class_name"]
    cls = None
    if config.get("registered_name"):
        cls = get_registered_object(config["registered_name"], custom_objects, None)
    if cls is None:
        cls = get_registered_object(class_name, custom_objects, module_objects)
    if cls is None:
        cls = _class_of_keras_module(config.get("module"), class_name)
    if cls is None:
        raise ValueError(f"Unknown {printable_module_name}: '{class_name}'. Please ensure you are using a "
                         "`keras.utils.custom_object_scope` and that this object is included in the scope. See "
                         "https://www.tensorflow.org/guide/keras/save_and_serialize#registering_the_custom_object "
                         "for details.")
    inner = dict(config.get("config") or {})
    with CustomObjectScope(custom_objects or {}):
        if hasattr(cls, "from_config"):
            obj = cls.from_config(inner)
        else:
            obj = cls(**inner)
    build_config = config.get("build_config")
    if build_config and hasattr(obj, "build_from_config"):
        obj.build_from_config(build_config)
    return obj
