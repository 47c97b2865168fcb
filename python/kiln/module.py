"""kiln.Module (tf.Module): tracks the variables and submodules assigned to its
attributes (also inside lists, tuples and dicts)."""
import functools
import re

from . import _C
from . import _scope


def _camel_to_snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class Module:
    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name=None):
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not re.match(r"^[A-Za-z_][\w.-]*$", name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid Python identifiers "
                             "(e.g. a valid class name).")
        self._set_name(name)

    def _set_name(self, name):
        """Keras' layers and metrics take any string as their name (a metric named "cross entropy"), unchecked."""
        self._name = name
        # TF's: the scope is the module's name inside the scope it was made in.
        with _scope.name_scope(name) as scope_name:
            self._scope_name = scope_name

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        """A tf.name_scope of the module's scope: variables made inside are "module_name/..."."""
        scope_name = getattr(self, "_scope_name", None) or self._name + "/"
        return _scope.name_scope(scope_name)

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: the method runs inside its module's name_scope."""
        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return method_with_name_scope

    def _walk(self, predicate, recurse_modules=True, seen=None):
        seen = set() if seen is None else seen
        out = []

        def visit(value, depth):
            if depth > 64:
                return
            if isinstance(value, _C.Variable):
                key = ("v", value._state_id())
            else:
                key = ("o", id(value))
            if key in seen:
                return
            if isinstance(value, (_C.Variable, Module)) or isinstance(value, (list, tuple, dict)):
                seen.add(key)
            if predicate(value):
                out.append(value)
            if isinstance(value, Module):
                if recurse_modules or depth == 0:
                    for k in sorted(vars(value)):
                        if k not in type(value)._TF_MODULE_IGNORED_PROPERTIES:
                            visit(vars(value)[k], depth + 1)
            elif isinstance(value, dict):
                for k in sorted(value, key=repr):
                    visit(value[k], depth + 1)
            elif isinstance(value, (list, tuple)):
                for v in value:
                    visit(v, depth + 1)

        seen.add(("o", id(self)))
        for k in sorted(vars(self)):
            if k not in type(self)._TF_MODULE_IGNORED_PROPERTIES:
                visit(vars(self)[k], 1)
        return out

    @property
    def variables(self):
        return tuple(self._walk(lambda v: isinstance(v, _C.Variable)))

    @property
    def trainable_variables(self):
        return tuple(self._walk(lambda v: isinstance(v, _C.Variable) and v.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._walk(lambda v: isinstance(v, _C.Variable) and not v.trainable))

    @property
    def submodules(self):
        return tuple(self._walk(lambda v: isinstance(v, Module)))
