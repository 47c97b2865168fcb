// Kiln's exceptions as TensorFlow's Python classes (kiln.errors re-exports them).
#include <string_view>

#include "bindings.h"
#include "kiln/cancellation.h"
#include "kiln/function.h"

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
  py::register_exception<DeadlineExceeded>(m, "DeadlineExceededError", op_error.ptr());
  py::register_exception<Cancelled>(m, "CancelledError", op_error.ptr());
  // A graph tensor leaked out of its kiln.function and used by an eager op or
  // another function: TF raises TypeError ("An op outside of the function
  // building code is being passed a Graph tensor"); an InvalidArgumentError too,
  // as Kiln raised before. Registered last, so it is tried first.
  static PyObject* leaked = PyErr_NewException(
      "kiln._C.SymbolicTensorError", py::make_tuple(m.attr("InvalidArgumentError"), py::handle(PyExc_TypeError)).ptr(),
      nullptr);
  m.attr("SymbolicTensorError") = py::handle(leaked);
  // Inputs of different dtypes given to one op while tracing: TF's graph builder
  // raises TypeError ("Input 'y' of 'AddV2' Op has type int32 that does not match
  // ..."), its eager ops InvalidArgumentError. Kiln's class is both while tracing.
  static PyObject* graph_dtypes = PyErr_NewException(
      "kiln._C.GraphDTypeMismatchError",
      py::make_tuple(m.attr("InvalidArgumentError"), py::handle(PyExc_TypeError)).ptr(), nullptr);
  m.attr("GraphDTypeMismatchError") = py::handle(graph_dtypes);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      const std::string_view message = e.what();
      if (message.find("symbolic tensor of a graph") != std::string_view::npos) {
        PyErr_SetString(leaked, e.what());
      } else if (detail::is_tracing() && (message.find("must have the same dtype") != std::string_view::npos ||
                                          message.find("must have one dtype") != std::string_view::npos)) {
        PyErr_SetString(graph_dtypes, e.what());
      } else {
        throw;
      }
    }
  });
  // An argument of the wrong Python type for an op (a float where the op takes
  // ints): TF raises TypeError; pybind11 would raise RuntimeError("Unable to cast").
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const py::cast_error& e) {
      PyErr_SetString(PyExc_TypeError, (std::string(e.what()) + ": an argument has a type this op does not take").c_str());
    }
  });
  // Raised by Python code (a graph tensor used as a bool); a TypeError, as in TF.
  static py::exception<OperatorNotAllowedInGraph> not_in_graph(m, "OperatorNotAllowedInGraphError", PyExc_TypeError);
}

}  // namespace kiln::python
