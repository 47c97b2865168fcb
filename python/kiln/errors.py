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


# TF's other error classes: no Kiln op raises them, but code catches them by name.
class AbortedError(OpError):
    """An operation was aborted (typically by a concurrent action)."""


class AlreadyExistsError(OpError):
    """An entity that we attempted to create already exists."""


class PermissionDeniedError(OpError):
    """The caller does not have permission to run an operation."""


class UnauthenticatedError(OpError):
    """The request does not have valid authentication credentials."""


class UnavailableError(OpError):
    """The runtime is currently unavailable."""


class UnknownError(OpError):
    """An unknown error."""


# TF's error codes (error_codes.proto), as tf.errors has them.
OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS = 0, 1, 2, 3, 4, 5, 6
PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE = 7, 8, 9, 10, 11
UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED = 12, 13, 14, 15, 16


__all__ = ["OpError", "InvalidArgumentError", "FailedPreconditionError", "OutOfRangeError", "NotFoundError",
           "UnimplementedError", "ResourceExhaustedError", "InternalError", "DeadlineExceededError", "CancelledError",
           "OperatorNotAllowedInGraphError", "DataLossError", "AbortedError", "AlreadyExistsError",
           "PermissionDeniedError", "UnauthenticatedError", "UnavailableError", "UnknownError", "OK", "CANCELLED",
           "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
           "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
           "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]
