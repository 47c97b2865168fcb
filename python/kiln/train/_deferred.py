"""Deferred restoration: checkpoint values whose variables do not exist yet at restore()
(a subclassed Keras model or a layer not built yet, and the optimizer slots of its
variables) are restored when those variables are made, as TF restores them on creation.

A restoration with values still waiting is kept here. Keras layers make their variables in
`add_weight` and, for `tf.Variable` attributes, in `build`; after either, every waiting
restoration matches its saved graph against the live objects again (kiln.train._checkpoint
`_Restoration.match`) and assigns the new variables. The hooks wrap Layer.add_weight and
Layer._maybe_build from here, installed when the first restoration has to wait, so Keras
needs no knowledge of checkpoints (a direct call from add_weight would do the same). A
tf.Module that assigns a variable (or a module) to an attribute later, as the guide "Introduction
to modules" builds its FlexibleDenseModule, is matched then too (TF's AutoTrackable restores on
attribute assignment)."""
import functools
import threading

_waiting = []  # restorations with values not yet restored
_lock = threading.RLock()
_active = threading.local()  # set while matching: variables made by the match itself do not re-enter
_hooks_installed = False


def wait_for_variables(restoration):
    """Keeps `restoration` until its values have all found their variables (or its objects are gone)."""
    with _lock:
        _install_hooks()
        if restoration not in _waiting:
            _waiting.append(restoration)


def variables_created():
    """Matches every waiting restoration against the objects as they are now."""
    if not _waiting or getattr(_active, "matching", False):
        return
    with _lock:
        _active.matching = True
        try:
            for restoration in list(_waiting):
                if not restoration.match():
                    _waiting.remove(restoration)
        finally:
            _active.matching = False


def _after(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        result = method(*args, **kwargs)
        if _waiting:
            variables_created()
        return result

    wrapper._kiln_deferred_restore = True
    return wrapper


def _module_setattr(self, name, value):
    object.__setattr__(self, name, value)
    if _waiting:
        from .. import _C
        from ..module import Module
        if isinstance(value, (_C.Variable, Module)):
            variables_created()


def _install_hooks():
    global _hooks_installed
    if _hooks_installed:
        return
    from ..keras import _layer
    from ..module import Module
    for name in ("add_weight", "_maybe_build"):
        method = getattr(_layer.Layer, name)
        if not getattr(method, "_kiln_deferred_restore", False):
            setattr(_layer.Layer, name, _after(method))
    if "__setattr__" not in vars(Module):
        Module.__setattr__ = _module_setattr  # installed only once a restoration waits
    _hooks_installed = True
