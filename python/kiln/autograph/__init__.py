"""kiln.autograph (tf.autograph): Python `if`, `while` and `for` on tensors become
graph control flow inside kiln.function.

kiln.function(f) (autograph=True, the default) calls `_convert(f)` once before
tracing: f's source is converted with the standard `ast` module (once per code
object) into code whose statements dispatch at run time (see operators.py), and
the user functions it calls are converted the same way when called."""
from . import conversion as _conversion
from . import operators as _operators
from . import experimental  # noqa: F401

__all__ = ["to_code", "to_graph", "experimental"]


def _convert(f):
    """The converted callable for `f` (same signature; methods, closures, defaults and
    decorators keep working), or `f` itself, with one warning, when its source cannot
    be read."""
    return _conversion.convert(f)


def to_graph(entity, recursive=True, experimental_optional_features=None):
    """tf.autograph.to_graph: the converted function (its control flow builds graph
    ops when called inside kiln.function, and runs as Python otherwise)."""
    return _conversion.convert(entity)


def to_code(entity, recursive=True, experimental_optional_features=None):
    """tf.autograph.to_code: the converted source of `entity` as a string."""
    return _conversion.source_of(entity)


Undefined = _operators.Undefined


_verbosity = [0]


def set_verbosity(level, alsologtostdout=False):
    """How much AutoGraph logs of its conversions (TF's AUTOGRAPH_VERBOSITY); Kiln's converter logs
    nothing more at any level, and warns as it does when it cannot convert a function."""
    _verbosity[0] = int(level)


def trace(*args):
    """Prints args when the code runs in Python: while a function is traced, once per trace."""
    print(*args)
