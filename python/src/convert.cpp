// Python values <-> tensors: TF's literal rules; NumPy memory is shared only
// when nobody can write it.
#include <Python.h>
#include <frameobject.h>

#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <unordered_map>

#include <kiln/profiler.h>

#include "bindings.h"
#include "core/tensor_impl.h"
#include "runtime/dispatch.h"

namespace kiln::python {

namespace {

struct NumpyType {
  DType dtype;
  const char* name;
};
constexpr NumpyType kNumpyTypes[] = {
    {DType::Float32, "float32"}, {DType::Float64, "float64"}, {DType::Int32, "int32"},
    {DType::Int64, "int64"},     {DType::UInt8, "uint8"},     {DType::Bool, "bool"},
    {DType::Float16, "float16"}, {DType::Int8, "int8"},       {DType::Int16, "int16"},
    {DType::UInt16, "uint16"},   {DType::UInt32, "uint32"},   {DType::UInt64, "uint64"},
    {DType::Complex64, "complex64"}, {DType::Complex128, "complex128"},
    // NumPy has no bfloat16 (and Debian no ml_dtypes): its arrays are float32
    // (tensor_to_numpy converts; arrays convert back through float32).
    {DType::BFloat16, "float32"},
};

// The NumPy array's reference, dropped (with the GIL) when the last tensor
// sharing its memory goes. After interpreter shutdown the reference is left.
void release_array(void* owner) noexcept {
  if (!Py_IsInitialized()) return;
  PyGILState_STATE state = PyGILState_Ensure();
  Py_DECREF(static_cast<PyObject*>(owner));
  PyGILState_Release(state);
}

Tensor strings_from_array(const py::array& array) {
  std::vector<std::string> values;
  values.reserve(static_cast<std::size_t>(array.size()));
  py::object flat = array.attr("ravel")();
  for (py::handle item : flat) {
    if (PyBytes_Check(item.ptr())) values.emplace_back(py::cast<std::string>(item));
    else if (PyUnicode_Check(item.ptr())) values.emplace_back(py::cast<std::string>(item));
    else if (py::isinstance<py::bytes>(item) || py::isinstance<py::str>(item)) values.emplace_back(py::str(item));
    else
      throw py::type_error("Failed to convert a NumPy array of dtype object to a Tensor: element " +
                           std::string(py::repr(item)) + " is not a str or bytes (Kiln tensors of objects "
                           "hold strings only)");
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  return detail::make_string_constant(values, Shape(dims), SourceLocation{});
}

bool holds_tensor(py::handle obj, int depth = 0) {
  if (py::isinstance<Tensor>(obj) || py::isinstance<Variable>(obj)) return true;
  if (depth < 32 && (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())))
    for (py::handle item : obj)
      if (holds_tensor(item, depth + 1)) return true;
  return false;
}

Tensor from_python_scalar(py::handle obj, std::optional<DType> dtype) {
  if (PyBool_Check(obj.ptr())) return constant(Scalar(obj.ptr() == Py_True), dtype, SourceLocation{});
  if (PyLong_Check(obj.ptr())) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
    if (overflow)
      throw py::value_error("Can't convert Python int " + std::string(py::str(obj)) +
                            " to a Tensor: it does not fit in int64");
    if (!dtype && (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()))
      dtype = DType::Int64;
    return constant(Scalar(static_cast<int64_t>(v)), dtype.value_or(DType::Int32), SourceLocation{});
  }
  if (PyFloat_Check(obj.ptr()))
    return constant(Scalar(PyFloat_AS_DOUBLE(obj.ptr())), dtype.value_or(DType::Float32), SourceLocation{});
  // str or bytes
  return constant(Scalar(py::cast<std::string>(obj)), dtype, SourceLocation{});
}

}  // namespace

bool is_numpy_float64_beside(py::handle obj, DType dtype) {
  return PyFloat_Check(obj.ptr()) && !PyFloat_CheckExact(obj.ptr()) && !is_floating(dtype) && !is_complex(dtype);
}

bool is_python_scalar(py::handle obj) {
  return PyBool_Check(obj.ptr()) || PyLong_Check(obj.ptr()) || PyFloat_Check(obj.ptr()) ||
         PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr());
}

void check_float_operand(py::handle obj, DType dtype) {
  if (is_floating(dtype) || is_complex(dtype) || dtype == DType::String) return;
  // TF converts no Python float to an integer tensor, 2.0 included; np.float64
  // (a Python float too) is float64 on its own.
  throw OperandDTypeError("Cannot convert " + std::string(py::repr(obj)) + " to EagerTensor of dtype " +
                              std::string(dtype_name(dtype)),
                          PyFloat_CheckExact(obj.ptr()) ? "float32" : "float64");
}

namespace {

// TF's IsCompatible (pywrap_tensor.cc): a value of NumPy kind `kind` converts to
// `dtype` when integers go to integer or float dtypes, floats to float dtypes,
// bools and strings to their own.
bool kind_converts(char kind, DType dtype) {
  bool integer = kind == 'i' || kind == 'u';
  if (is_integer(dtype)) return integer;
  if (is_floating(dtype)) return integer || kind == 'f';
  if (is_complex(dtype)) return integer || kind == 'f' || kind == 'c';
  if (dtype == DType::Bool) return kind == 'b';
  if (dtype == DType::String) return kind == 'O' || kind == 'S' || kind == 'U';
  return true;
}

// The TF dtype name of a NumPy dtype a rejected operand has on its own.
std::string tf_dtype_name(const py::dtype& dtype) {
  char kind = dtype.kind();
  if (kind == 'b') return "bool";
  if (kind == 'O' || kind == 'S' || kind == 'U') return "string";
  return py::cast<std::string>(dtype.attr("name"));  // float32, float64, int64, complex128...
}

// TF's DataTypeString (types.cc), which eager op errors print.
std::string data_type_string(const std::string& name) {
  if (name == "float32") return "float";
  if (name == "float64") return "double";
  if (name == "float16") return "half";
  return name;
}

}  // namespace

void add_dtype_mismatch(const std::string& expected, const std::string& got) {
  if (detail::is_tracing())
    throw py::type_error("Input 'y' of 'AddV2' Op has type " + got + " that does not match type " + expected +
                         " of argument 'x'.");
  throw InvalidArgument("cannot compute AddV2 as input #1(zero-based) was expected to be a " +
                        data_type_string(expected) + " tensor but is a " + data_type_string(got) +
                        " tensor [Op:AddV2]");
}

Tensor operand_tensor(py::handle obj, DType dtype) {
  // NumPy arrays and scalars are cast to `dtype` (TF's PySeqToTFE_TensorHandle converts them with
  // NPY_ARRAY_FORCECAST, eagerly and in graph constants alike); Python lists and tuples pass TF's
  // IsCompatible first.
  bool literal = (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) && !holds_tensor(obj);
  if (literal) {
    py::array array;
    try {
      array = py::module_::import("numpy").attr("asarray")(obj);
    } catch (py::error_already_set&) {
      return to_tensor(obj, dtype);  // a ragged list: to_tensor's error
    }
    char kind = array.dtype().kind();
    if (kind != 'O' && !kind_converts(kind, dtype)) {
      // A list of Python floats is float32 on its own, as TF's literals are.
      py::dtype alone = kind == 'f' ? py::dtype("float32") : py::dtype(array.dtype());
      throw OperandDTypeError("Cannot convert " + std::string(py::repr(obj)) +
                                  " to EagerTensor of dtype " + std::string(dtype_name(dtype)),
                              tf_dtype_name(alone));
    }
  }
  static PyObject* generic = py::object(py::module_::import("numpy").attr("generic")).release().ptr();
  bool numpy = py::isinstance<py::array>(obj) || PyObject_IsInstance(obj.ptr(), generic) == 1;
  if (numpy && dtype != DType::String) {
    py::array array = py::module_::import("numpy").attr("asarray")(obj);
    char kind = array.dtype().kind();
    if (kind != 'O' && kind != 'S' && kind != 'U') return to_tensor(array.attr("astype")(numpy_dtype(dtype)), dtype);
  }
  return to_tensor(obj, dtype);
}

py::dtype numpy_dtype(DType dtype) {
  for (const NumpyType& t : kNumpyTypes)
    if (t.dtype == dtype) return py::dtype(t.name);
  if (dtype == DType::String) return py::dtype("O");
  throw py::type_error("a " + std::string(dtype_name(dtype)) + " tensor has no NumPy form");
}

std::optional<DType> dtype_from_numpy(const py::dtype& dtype) {
  char kind = dtype.kind();
  int size = static_cast<int>(dtype.itemsize());
  if (kind == 'f' && size == 4) return DType::Float32;
  if (kind == 'f' && size == 8) return DType::Float64;
  if (kind == 'f' && size == 2) return DType::Float16;
  if (kind == 'i' && size == 4) return DType::Int32;
  if (kind == 'i' && size == 8) return DType::Int64;
  if (kind == 'i' && size == 1) return DType::Int8;
  if (kind == 'i' && size == 2) return DType::Int16;
  if (kind == 'u' && size == 1) return DType::UInt8;
  if (kind == 'u' && size == 2) return DType::UInt16;
  if (kind == 'u' && size == 4) return DType::UInt32;
  if (kind == 'u' && size == 8) return DType::UInt64;
  if (kind == 'c' && size == 8) return DType::Complex64;
  if (kind == 'c' && size == 16) return DType::Complex128;
  if (kind == 'b') return DType::Bool;
  if (kind == 'O' || kind == 'U' || kind == 'S') return DType::String;
  return std::nullopt;
}

DType dtype_from_python(py::handle obj) {
  // The package passes DType values as ints (kiln.DType._enum).
  if (PyLong_CheckExact(obj.ptr())) {
    long v = PyLong_AsLong(obj.ptr());
    if (v < 0 || v >= kNumDTypes) throw py::value_error("not a Kiln dtype number: " + std::to_string(v));
    return static_cast<DType>(v);
  }
  if (py::hasattr(obj, "_enum")) return static_cast<DType>(py::cast<int>(obj.attr("_enum")));
  if (py::isinstance<DType>(obj)) return py::cast<DType>(obj);
  if (py::isinstance<py::str>(obj)) {
    std::string name = py::cast<std::string>(obj);
    for (int i = 0; i < kNumDTypes; ++i)
      if (static_cast<DType>(i) != DType::Resource && dtype_name(static_cast<DType>(i)) == name)
        return static_cast<DType>(i);
  }
  py::object np_dtype = py::module_::import("numpy").attr("dtype")(obj);
  if (auto d = dtype_from_numpy(py::reinterpret_borrow<py::dtype>(np_dtype))) return *d;
  throw py::type_error("Kiln has no dtype for " + std::string(py::repr(obj)) +
                       " (it has float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, "
                       "uint16, uint32, uint64, complex64, complex128, bool and string)");
}

// The name of the capsules that own the memory of Tensor.numpy() arrays: a
// NumPy array whose base chain ends in one reads a Kiln tensor, which never
// changes.
constexpr const char* kTensorCapsule = "kiln.tensor";

namespace {

bool is_ndarray(PyObject* obj) { return py::detail::npy_api::get().PyArray_Check_(obj); }

// Whether nobody can ever write `array`'s memory: it and every array it views
// are read-only, and the memory belongs to a Kiln tensor or a `bytes` object.
// An array that owns its memory, or views another library's, may be made
// writable again (flags.writeable = True), so it does not count.
bool immutable_memory(const py::array& array) {
  PyObject* obj = array.ptr();
  while (is_ndarray(obj)) {
    if (py::detail::array_proxy(obj)->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) return false;
    obj = py::detail::array_proxy(obj)->base;
    if (!obj) return false;
  }
  if (PyBytes_CheckExact(obj)) return true;
  if (PyMemoryView_Check(obj)) {
    // np.asarray(tensor) views the tensor through the buffer protocol.
    const Py_buffer* view = PyMemoryView_GET_BUFFER(obj);
    return view->readonly && view->obj &&
           (PyBytes_CheckExact(view->obj) || py::isinstance<Tensor>(py::handle(view->obj)));
  }
  return PyCapsule_CheckExact(obj) && PyCapsule_IsValid(obj, kTensorCapsule);
}

}  // namespace

Tensor tensor_from_numpy(py::array array) {
  std::optional<DType> dtype = dtype_from_numpy(array.dtype());
  if (!dtype)
    throw py::type_error("Kiln has no dtype for NumPy dtype " + std::string(py::str(array.dtype())) +
                         "; convert the array first, e.g. with .astype(np.float32)");
  if (*dtype == DType::String) return strings_from_array(array);
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  Shape shape(dims);
  constexpr int kShareable = static_cast<int>(py::array::c_style) | static_cast<int>(py::detail::npy_api::NPY_ARRAY_ALIGNED_);
  bool native = array.dtype().byteorder() != '>';
  bool fresh = false;  // an array only this function holds
  if ((array.flags() & kShareable) != kShareable || !native) {
    array = py::array(array.attr("astype")(array.dtype().attr("newbyteorder")("="), "C"));
    fresh = true;
  }
  if (!fresh && !immutable_memory(array)) {
    // A tensor never changes after it is made: memory its owner may still
    // write is copied (once, into Kiln's own storage).
    Tensor t = core::make_tensor(*dtype, shape);
    std::size_t bytes = static_cast<std::size_t>(array.nbytes());
    if (bytes >= (std::size_t{1} << 20)) {
      py::gil_scoped_release unlocked;  // `array` stays referenced by the caller
      std::memcpy(core::raw_data(t), array.data(), bytes);
    } else if (bytes) {
      std::memcpy(core::raw_data(t), array.data(), bytes);
    }
    return t;
  }
  PyObject* owner = array.ptr();
  Py_INCREF(owner);
  core::Buffer* buffer = core::make_external_buffer(*dtype, array.size(), const_cast<void*>(array.data()),
                                                    release_array, owner);
  return core::adopt_buffer(*dtype, shape, buffer);
}

py::array tensor_to_numpy(const Tensor& t) {
  if (t.is_symbolic())
    throw py::type_error("Tensor.numpy() is only available for eager tensors; inside kiln.function " +
                         core::symbolic_tensor_name(t) +
                         " has no value yet (use kiln.print to see it when the graph runs)");
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  if (t.dtype() == DType::String) {
    const std::string* s = t.data<std::string>();
    py::array out(py::dtype("O"), shape);
    auto** items = static_cast<PyObject**>(out.mutable_data());
    for (int64_t i = 0; i < t.size(); ++i) {
      PyObject* b = PyBytes_FromStringAndSize(s[i].data(), static_cast<py::ssize_t>(s[i].size()));
      if (!b) throw py::error_already_set();
      Py_XDECREF(items[i]);
      items[i] = b;
    }
    return out;
  }
  if (t.dtype() == DType::BFloat16) return tensor_to_numpy(cast(t, DType::Float32, SourceLocation{}));
  auto* keep = new Tensor(t);
  py::capsule base(keep, kTensorCapsule, [](PyObject* cap) {
    delete static_cast<Tensor*>(PyCapsule_GetPointer(cap, kTensorCapsule));
  });
  py::array out(numpy_dtype(t.dtype()), shape, {}, core::raw_data(t), base);
  py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

namespace {
// Keras' autocast scope (enable_auto_cast_variables): the compute dtype of the
// layer whose call runs on this thread, or -1; and the AutoCastVariable class.
thread_local int t_autocast_dtype = -1;
PyTypeObject* g_autocast_variable_type = nullptr;
}  // namespace

int set_autocast_dtype(int dtype) {
  int previous = t_autocast_dtype;
  t_autocast_dtype = dtype;
  return previous;
}

int autocast_dtype() { return t_autocast_dtype; }

void set_autocast_variable_type(py::handle type) {
  if (!PyType_Check(type.ptr())) throw py::type_error("an AutoCastVariable class is required");
  g_autocast_variable_type = reinterpret_cast<PyTypeObject*>(type.inc_ref().ptr());
}

Tensor to_tensor(py::handle obj, std::optional<DType> dtype) {
  RecursionGuard guard(" while converting to a Tensor");  // a list that holds itself
  Tensor t;
  if (py::isinstance<Tensor>(obj)) {
    t = py::cast<const Tensor&>(obj);
  } else if (py::isinstance<Variable>(obj)) {
    t = py::cast<const Variable&>(obj).read_value(user_location());
    if (t_autocast_dtype >= 0 && g_autocast_variable_type && is_floating(t.dtype()) &&
        static_cast<int>(t.dtype()) != t_autocast_dtype && PyObject_TypeCheck(obj.ptr(), g_autocast_variable_type))
        [[unlikely]]
      t = cast(t, static_cast<DType>(t_autocast_dtype), user_location());
  } else if (is_python_scalar(obj)) {
    return from_python_scalar(obj, dtype);
  } else if (py::isinstance<py::array>(obj)) {
    t = tensor_from_numpy(py::reinterpret_borrow<py::array>(obj));
  } else if ((PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) && holds_tensor(obj)) {
    std::vector<Tensor> items;
    for (py::handle item : obj) items.push_back(to_tensor(item, dtype));
    t = kiln::stack(items, 0, user_location());
  } else if (py::hasattr(obj, "__kiln_tensor__")) {
    t = to_tensor(obj.attr("__kiln_tensor__")(), dtype);
  } else {
    py::module_ np = py::module_::import("numpy");
    py::array array;
    try {
      array = np.attr("asarray")(obj);
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_ValueError))
        throw py::value_error("Can't convert non-rectangular Python sequence to Tensor.");
      throw;
    }
    char kind = array.dtype().kind();
    if (kind == 'O' && !(PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())))
      throw py::type_error("Failed to convert object of type " + std::string(py::str(py::type::of(obj))) +
                           " to Tensor. Contents: " + std::string(py::repr(obj)));
    // Python floats to float16 round once, from double (NumPy's conversion, which TF's uses).
    if (dtype == DType::Float16 && kind == 'f') array = array.attr("astype")("float16");
    if (!dtype && (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr()))) {
      // Python numbers in a list follow TF's rules: float32, and int32 when all fit.
      if (kind == 'f') dtype = DType::Float32;
      if (kind == 'i') {
        py::object lo = array.size() ? array.attr("min")() : py::int_(0);
        py::object hi = array.size() ? array.attr("max")() : py::int_(0);
        if (py::cast<int64_t>(lo) >= std::numeric_limits<int32_t>::min() &&
            py::cast<int64_t>(hi) <= std::numeric_limits<int32_t>::max())
          dtype = DType::Int32;
      }
    }
    t = tensor_from_numpy(array);
  }
  if (dtype && *dtype != t.dtype()) {
    if (py::isinstance<Tensor>(obj) || py::isinstance<Variable>(obj))
      throw py::value_error("Tensor conversion requested dtype " + std::string(dtype_name(*dtype)) +
                            " for Tensor with dtype " + std::string(dtype_name(t.dtype())) + ": " +
                            std::string(py::str(obj)));
    // A literal's dtype belongs to the constant: converted now, never a Cast in a traced graph.
    std::optional<runtime::DispatchHandlerGuard> now;
    if (!t.is_symbolic()) now.emplace(nullptr);
    t = cast(t, *dtype, user_location());
  }
  return t;
}

// ---- the user's source line --------------------------------------------------

namespace {

// libstdc++'s std::source_location is one pointer to this record.
struct LocationRecord {
  const char* file;
  const char* function;
  unsigned line;
  unsigned column;
};
static_assert(sizeof(SourceLocation) == sizeof(const LocationRecord*));

std::string package_dir;  // frames from files under it are Kiln's own

SourceLocation interned_location(const std::string& file, const std::string& function, int line) {
  static std::mutex mutex;
  static std::unordered_map<std::string, LocationRecord*> records;
  std::string key = file + '\n' + function + '\n' + std::to_string(line);
  std::lock_guard lock(mutex);
  LocationRecord*& r = records[key];
  if (!r) {
    // Interned for the life of the program: graphs keep pointers to them.
    r = new LocationRecord{(new std::string(file))->c_str(), (new std::string(function))->c_str(),
                           static_cast<unsigned>(line), 0};
  }
  SourceLocation loc;
  const LocationRecord* p = r;
  std::memcpy(static_cast<void*>(&loc), &p, sizeof p);
  return loc;
}

}  // namespace

void set_package_dir(const std::string& dir) { package_dir = dir; }

SourceLocation user_location() {
  // Eager ops skip the frame walk unless the profiler wants their lines.
  if (!detail::is_tracing() && !profiler::active()) return SourceLocation{};
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    std::string file = py::cast<std::string>(py::handle(code->co_filename));
    bool ours = !package_dir.empty() && file.compare(0, package_dir.size(), package_dir) == 0;
    if (!ours) {
      std::string function = py::cast<std::string>(py::handle(code->co_name));
      int line = PyFrame_GetLineNumber(frame);
      Py_DECREF(code);
      Py_DECREF(frame);
      return interned_location(file, function, line);
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  return SourceLocation{};
}

SharedObject share(py::object obj) {
  return SharedObject(new py::object(std::move(obj)), [](py::object* p) {
    if (Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      delete p;
    } else {
      p->release();  // the interpreter is gone: nothing to decrement
      delete p;
    }
  });
}

}  // namespace kiln::python
