"""tf.name_scope: a stack of scope names per thread. Eagerly as in graphs, the names of
variables made inside take the scope as a prefix (`demo_module/Variable:0`), as in TF2."""
import threading

_local = threading.local()


def current():
    """The innermost scope's name, "a/b/" (or "" outside every scope)."""
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else ""


class name_scope:  # noqa: N801 - TF's name
    """tf.name_scope(name): `with` it, names made inside start with "name/" (nested in the
    current scope; a name ending in "/" is the whole scope, as TF's). Reusable."""

    def __init__(self, name):
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name_scope's name must be a string, got {name!r}")
        self._name = name

    @property
    def name(self):
        return self._name

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        if not self._name:
            scope = ""
        elif self._name.endswith("/"):
            scope = self._name
        else:
            scope = current() + self._name + "/"
        stack.append(scope)
        return scope

    def __exit__(self, *exc):
        _local.stack.pop()
        return False


def scoped_variable_name(name):
    """A new variable's name inside the current scope (None outside every scope: the engine's default)."""
    scope = current()
    if not scope:
        return name
    return scope + (name if name else "Variable")
