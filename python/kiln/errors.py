"""TensorFlow's exception classes (tf.errors). Kiln's engine errors arrive as these."""
from . import _C

OpError = _C.OpError
InvalidArgumentError = _C.InvalidArgumentError
FailedPreconditionError = _C.FailedPreconditionError
OutOfRangeError = _C.OutOfRangeError
NotFoundError = _C.NotFoundError
UnimplementedError = _C.UnimplementedError
ResourceExhaustedError = _C.ResourceExhaustedError
InternalError = _C.InternalError
DeadlineExceededError = _C.DeadlineExceededError
CancelledError = _C.CancelledError
OperatorNotAllowedInGraphError = _C.OperatorNotAllowedInGraphError


class DataLossError(OpError):
    """Unrecoverable data loss or corruption (a damaged TFRecord or checkpoint file)."""


__all__ = ["OpError", "InvalidArgumentError", "FailedPreconditionError", "OutOfRangeError", "NotFoundError",
           "UnimplementedError", "ResourceExhaustedError", "InternalError", "DeadlineExceededError", "CancelledError",
           "OperatorNotAllowedInGraphError", "DataLossError"]
