"""kiln.GradientTape: records eager ops (and, inside kiln.function, builds the
backward ops into the graph) while its `with` block runs."""
from . import _C


def _flatten(structure, out):
    if isinstance(structure, (list, tuple)):
        for s in structure:
            _flatten(s, out)
    elif isinstance(structure, dict):
        for k in sorted(structure, key=repr):
            _flatten(structure[k], out)
    else:
        out.append(structure)
    return out


def _pack(structure, flat):
    if isinstance(structure, (list, tuple)):
        items = [_pack(s, flat) for s in structure]
        if hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items) if isinstance(structure, tuple) else items
    if isinstance(structure, dict):
        values = {k: _pack(structure[k], flat) for k in sorted(structure, key=repr)}
        return {k: values[k] for k in structure}
    return next(flat)


class _TapeUsedError(RuntimeError, ValueError):
    """A non-persistent tape asked for gradients twice: TF's RuntimeError (Kiln raised ValueError before)."""


class UnconnectedGradients:
    NONE = "none"
    ZERO = "zero"


class GradientTape:
    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = persistent
        self._watch_accessed = watch_accessed_variables
        self._tape = None

    def __enter__(self):
        if self._tape is None:
            self._tape = _C.GradientTape(self._persistent, self._watch_accessed)
        else:
            self._tape.resume()
        return self

    def __exit__(self, *exc):
        self._tape.stop()
        return False

    def _require(self, what):
        if self._tape is None:
            raise ValueError(f"GradientTape.{what} is only valid once the tape's `with` block has started")

    def watch(self, tensor):
        self._require("watch")
        for t in _flatten(tensor, []):
            if not isinstance(t, (_C.Tensor, _C.Variable)):
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not kiln.Tensor or "
                                 "kiln.Variable, to GradientTape.watch")
            self._tape.watch(t)

    def watched_variables(self):
        self._require("watched_variables")
        return tuple(self._tape.watched_variables())

    def stop_recording(self):
        tape = self

        class _Stop:
            def __enter__(self):
                tape._tape.stop()

            def __exit__(self, *exc):
                tape._tape.resume()
                return False
        return _Stop()

    def reset(self):
        self._tape = _C.GradientTape(self._persistent, self._watch_accessed)

    def gradient(self, target, sources, output_gradients=None, unconnected_gradients=UnconnectedGradients.NONE):
        self._require("gradient")
        targets = [_C.constant(t, None) if not isinstance(t, _C.Tensor) else t
                   for t in _flatten(target, [])]
        flat_sources = _flatten(sources, [])
        for s in flat_sources:
            if not isinstance(s, (_C.Tensor, _C.Variable)):
                raise ValueError(f"GradientTape.gradient: a source is {type(s).__name__}, not a kiln.Tensor or "
                                 "kiln.Variable")
        try:
            grads = self._tape.gradient(targets, flat_sources,
                                        None if output_gradients is None else _flatten(output_gradients, []))
        except ValueError as e:
            if not self._persistent and "non-persistent" in str(e):
                raise _TapeUsedError(f"{e}. Create the tape with tf.GradientTape(persistent=True) to compute "
                                     "several.") from None
            raise
        if str(getattr(unconnected_gradients, "value", unconnected_gradients)).lower() == "zero":
            grads = [_C.zeros_like(s.read_value() if isinstance(s, _C.Variable) else s, None) if g is None else g
                     for g, s in zip(grads, flat_sources)]
        return _pack(sources, iter(grads))
