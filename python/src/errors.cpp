// Kiln's exceptions as TensorFlow's Python classes (kiln.errors re-exports them).
#include "bindings.h"

namespace kiln::python {

namespace {
struct OperatorNotAllowedInGraph {};
}  // namespace

void bind_errors(py::module_& m) {
  // pybind11 tries the most recently registered translator first: bases go first.
  static py::exception<Error> op_error(m, "OpError", PyExc_Exception);
  py::register_exception<InvalidArgument>(m, "InvalidArgumentError", op_error.ptr());
  py::register_exception<FailedPrecondition>(m, "FailedPreconditionError", op_error.ptr());
  py::register_exception<OutOfRange>(m, "OutOfRangeError", op_error.ptr());
  py::register_exception<NotFound>(m, "NotFoundError", op_error.ptr());
  py::register_exception<Unimplemented>(m, "UnimplementedError", op_error.ptr());
  py::register_exception<ResourceExhausted>(m, "ResourceExhaustedError", op_error.ptr());
  py::register_exception<Internal>(m, "InternalError", op_error.ptr());
  // Raised by Python code (a graph tensor used as a bool); a TypeError, as in TF.
  static py::exception<OperatorNotAllowedInGraph> not_in_graph(m, "OperatorNotAllowedInGraphError", PyExc_TypeError);
}

}  // namespace kiln::python
