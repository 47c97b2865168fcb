#pragma once
// kiln._C: the pybind11 extension over Kiln's engine. It holds conversions
// only (Python values <-> tensors, nested structures <-> flat leaves, the
// user's source line); the API users see is the pure-Python package `kiln`.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>

#include <kiln/cancellation.h>
#include <kiln/kiln.h>

namespace kiln::python {

namespace py = pybind11;

// ---- dtypes -----------------------------------------------------------------
py::dtype numpy_dtype(DType dtype);
// The Kiln dtype of a NumPy dtype, or nullopt when Kiln has none.
std::optional<DType> dtype_from_numpy(const py::dtype& dtype);
// A kiln.DType, a NumPy dtype or type, or a name ("float32").
DType dtype_from_python(py::handle obj);

// ---- values ---------------------------------------------------------------------
// Any value TF converts to a tensor: a Tensor, a Variable (its value), a NumPy
// array (shared without a copy when contiguous, aligned, native-endian and of a
// Kiln dtype), a Python scalar, str/bytes, or nested lists (TF's literal rules:
// Python floats are float32, ints int32, or int64 when they do not fit).
// `dtype` converts; for Python values it is the dtype they are made in.
Tensor to_tensor(py::handle obj, std::optional<DType> dtype = std::nullopt);
// A tensor sharing a NumPy array's memory (the array is kept alive), or a copy
// when it cannot be shared.
Tensor tensor_from_numpy(py::array array);
// A read-only NumPy array over a concrete tensor's memory, keeping it alive.
py::array tensor_to_numpy(const Tensor& t);
bool is_python_scalar(py::handle obj);
// A Python float operand beside a tensor of `dtype` (TF's binary ops convert it
// to that dtype): beside an integer or bool tensor it raises TypeError, as TF's
// "Cannot convert 1.5 to EagerTensor of dtype int32" (2.0 included).
void check_float_operand(py::handle obj, DType dtype);
// np.float64 (a Python float subclass, but a NumPy scalar to TF: NumPy casts it)
// beside a tensor of non-float `dtype`: converted by operand_tensor, not as a Python float.
bool is_numpy_float64_beside(py::handle obj, DType dtype);
// The TypeError for an operand that cannot become the other operand's dtype;
// `alone` names the dtype it has on its own ("float32"), for `+`, whose TF op
// reports the mismatch itself.
struct OperandDTypeError : py::type_error {
  OperandDTypeError(const std::string& what, std::string alone_dtype)
      : py::type_error(what), alone(std::move(alone_dtype)) {}
  std::string alone;
};
// A binary op's non-tensor operand in the other operand's `dtype`, by TF's eager
// rule (IsCompatible): NumPy floats and lists of Python floats do not become
// integers (OperandDTypeError), nor bools numbers; while tracing NumPy values
// cast, as TF's graph constants do.
Tensor operand_tensor(py::handle obj, DType dtype);
// TF's AddV2 given x of dtype `expected` and y of dtype `got` (Python names,
// "int32", "float32"): InvalidArgumentError eagerly, TypeError while tracing,
// with TF's messages. `x + 1.5` on an int32 tensor is this, not a TypeError.
[[noreturn]] void add_dtype_mismatch(const std::string& expected, const std::string& got);

// ---- Keras' AutoCastVariable -----------------------------------------------------
// While a Keras layer's `call` runs (enable_auto_cast_variables), variables of
// the registered AutoCastVariable class convert to tensors of that layer's
// compute dtype (a Cast after the read); other variables are read as they are.
// The dtype is a DType's number, -1 for none; set_autocast_dtype returns the
// previous one (the scope is per thread, as Keras').
int set_autocast_dtype(int dtype);
int autocast_dtype();
void set_autocast_variable_type(py::handle type);

// ---- the user's source line -----------------------------------------------------
// The source location of the innermost Python frame outside the kiln package,
// for the nodes traced from Python (errors from graphs name that line).
// SourceLocation{} when not tracing (eager errors surface as Python
// tracebacks, which name the line already).
SourceLocation user_location();
// Frames from files under `dir` (the kiln package) are not the user's.
void set_package_dir(const std::string& dir);

// ---- Python objects held by C++ -------------------------------------------------
// A Python object owned by C++ code that may drop it on any thread: the last
// owner takes the GIL to release it (and leaves it alone once the interpreter
// is gone).
using SharedObject = std::shared_ptr<py::object>;
SharedObject share(py::object obj);

// ---- nested structures ------------------------------------------------------------
// One level of a walk over a nested Python structure. Deeper than Python's
// recursion limit (a structure nested 100,000 deep, or one that contains
// itself) it raises RecursionError, as TF's C++ nest does, instead of
// running the C++ stack out.
class RecursionGuard {
 public:
  explicit RecursionGuard(const char* where) {
    if (Py_EnterRecursiveCall(where)) throw py::error_already_set();
  }
  ~RecursionGuard() { Py_LeaveRecursiveCall(); }
  RecursionGuard(const RecursionGuard&) = delete;
  RecursionGuard& operator=(const RecursionGuard&) = delete;
};

// A kiln.TensorSpec as its `_kiln_spec()` tuple gives it: (dims with -1 for
// None, dtype enum, rank or -1 when unknown).
TensorSpec to_tensor_spec(py::handle kiln_spec);
// Arguments of a function call: the trace key and the tensor leaves.
void flatten_arguments(py::handle obj, detail::Flattener& flat);
// The same structure with every leaf replaced by the next traced tensor.
py::object rebuild_arguments(py::handle obj, detail::Rebuilder& leaves);
// Results: tensor leaves go to `flat`; the returned template is the structure
// with Python values kept and leaves marked.
py::object flatten_result(py::handle obj, detail::ResultFlattener& flat);
py::object unflatten_result(py::handle tmpl, detail::ResultReader& reader);

// ---- graph calls: Ctrl-C and deadlines ------------------------------------------
// A graph call made from Python (with the GIL). On Python's main thread, while
// SIGINT has Python's default handler, a Ctrl-C cancels the call between ops
// and it raises KeyboardInterrupt (not after the graph finishes); `timeout`
// (seconds) bounds it with DeadlineExceeded. Elsewhere (other threads, a
// handler of the user's own) the call runs as before: with neither, each op
// pays one thread-local load; with one, an atomic load (and a clock read for
// a timeout).
class GraphCall {
 public:
  explicit GraphCall(std::optional<double> timeout = std::nullopt);
  ~GraphCall();
  GraphCall(const GraphCall&) = delete;
  GraphCall& operator=(const GraphCall&) = delete;

  // Runs `run` without the GIL under the call's cancellation.
  template <class F> auto operator()(F&& run) -> decltype(run()) {
    try {
      py::gil_scoped_release release;
      std::optional<CancellationScope> scope;
      if (cancellation_.timeout || cancellation_.cancel) scope.emplace(cancellation_);
      return run();
    } catch (...) {
      raise_pending();
      throw;
    }
  }

 private:
  // After a failed call: raises the pending Ctrl-C's KeyboardInterrupt.
  void raise_pending();
  Cancellation cancellation_;
  bool counted_ = false;    // a call of the main thread
  bool outermost_ = false;  // its outermost one
};

// ---- registration ---------------------------------------------------------------
void bind_errors(py::module_& m);
void bind_tensor(py::module_& m);
void bind_ops(py::module_& m);
void bind_linalg(py::module_& m);
void bind_function(py::module_& m);
void bind_control_flow(py::module_& m);
void bind_autodiff(py::module_& m);
void bind_data(py::module_& m);
void bind_saved_model(py::module_& m);
void bind_onnx(py::module_& m);
void bind_distributed(py::module_& m);
void bind_profiler(py::module_& m);
void bind_interrupt(py::module_& m);
void bind_image(py::module_& m);
void bind_signal(py::module_& m);
void bind_graph(py::module_& m);


}  // namespace kiln::python
