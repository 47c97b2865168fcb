"""ONNX in and out: a kiln.function's graph as an .onnx model (opset 17) that other
runtimes serve, and an .onnx model read back as a Kiln signature.

    serve = kiln.function(model, input_signature=[kiln.TensorSpec([None, 28, 28, 1])])
    kiln.onnx.export(serve, "mnist.onnx", input_names=["images"])
    probs = kiln.onnx.import_model("mnist.onnx")(images=x)["output_0"]
"""
import numbers

from . import _C
from .function import ConcreteFunction, Function
from .saved_model import _LoadedSignature, _one_trace

__all__ = ["export", "import_model", "OPSET_VERSION"]

OPSET_VERSION = 17


def export(fn, path, input_names=None):
    """Writes `fn` to `path` as an ONNX model.

    `fn` is a kiln.function with exactly one trace (an input_signature, or one call), a
    ConcreteFunction, or a loaded saved model's signature (its input names are kept).
    Inputs are named `input_names` (default: the function's parameter names), outputs
    output_0, output_1, ... Variables become initializers holding their values now; unknown
    dims stay symbolic. An op with no ONNX form raises UnimplementedError naming the op and
    its node.
    """
    if isinstance(fn, _LoadedSignature):
        if input_names is not None:
            raise ValueError("kiln.onnx.export: a loaded signature keeps its own input names")
        _C.onnx_export_signature(fn._core, str(path))
        return
    if not isinstance(fn, (Function, ConcreteFunction)):
        raise TypeError(f"kiln.onnx.export: expected a kiln.function, a ConcreteFunction or a loaded signature, "
                        f"got {type(fn).__name__}")
    concrete = _one_trace(fn, "kiln.onnx.export")
    _C.onnx_export(concrete._core, str(path), list(input_names or []))


def import_model(path, timeout=None):
    """Reads an ONNX model as a signature: call it with the model's inputs by keyword; it
    returns a dict of the model's outputs by name. Raises UnimplementedError naming the node
    for an op Kiln does not have, InvalidArgumentError for a damaged model.

    `timeout` (seconds) bounds each call: the file controls its loops (a `Loop` may run 2^62
    times), so a call still running after `timeout` stops between two ops with
    DeadlineExceededError, and the model stays usable."""
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
            raise TypeError(f"kiln.onnx.import_model: timeout must be a number of seconds, "
                            f"got {type(timeout).__name__}")
        timeout = float(timeout)
        if not timeout > 0:
            raise ValueError(f"kiln.onnx.import_model: timeout must be a positive number of seconds, "
                             f"got {timeout}")
    return _LoadedSignature(str(path), _C.onnx_import(str(path)), timeout=timeout)
