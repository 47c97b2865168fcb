// kiln.Tensor: properties, NumPy and DLPack, printing, operators.
#include <dlpack/dlpack.h>

#include <cstring>

#include "bindings.h"
#include "kiln/bitwise.h"
#include "core/tensor_impl.h"
#include "ops/creation.h"

namespace kiln::python {

namespace {

// Set once by the package; never released (no Python object may be destroyed
// after the interpreter has finalized).
py::handle dtype_objects;  // kiln.DType objects by DType value (kiln/dtypes.py)
py::handle shape_class;    // kiln.TensorShape

py::object dtype_object(DType d) {
  return py::reinterpret_borrow<py::object>(PyList_GET_ITEM(dtype_objects.ptr(), static_cast<int>(d)));
}

py::object shape_object(const Shape& s) {
  if (!s.has_known_rank()) return shape_class(py::none());
  py::list dims;
  for (int64_t d : s.dims()) dims.append(d < 0 ? py::object(py::none()) : py::object(py::int_(d)));
  return shape_class(dims);
}

// A binary op's other operand: a Python number stays a weakly typed scalar (it
// takes the tensor's dtype, as in TF); anything else becomes a tensor, a
// NumPy array or list in the tensor's dtype (operand_tensor: TF's eager rule).
struct OtherOperand {
  Tensor tensor;
  std::optional<Scalar> scalar;
  OtherOperand(py::handle obj, const Tensor& self) {
    if (py::isinstance<Tensor>(obj)) tensor = py::cast<const Tensor&>(obj);
    else if (PyBool_Check(obj.ptr())) scalar.emplace(obj.ptr() == Py_True);
    else if (PyLong_Check(obj.ptr())) scalar.emplace(py::cast<int64_t>(obj));
    else if (PyFloat_Check(obj.ptr()) && !is_numpy_float64_beside(obj, self.dtype())) {
      check_float_operand(obj, self.dtype());
      scalar.emplace(PyFloat_AS_DOUBLE(obj.ptr()));
    } else if (py::isinstance<Variable>(obj)) tensor = to_tensor(obj);
    else tensor = operand_tensor(obj, self.dtype());
  }
  Operand operand(const SourceLocation& loc) const {
    if (scalar) return Operand(*scalar, loc);
    return Operand(tensor, loc);
  }
};

using BinaryFn = Tensor (*)(const Operand&, const Operand&, SourceLocation);

// The number slots (nb_add...) of kiln.Tensor, called by the interpreter
// for `a + b` directly: the `__add__` methods pybind11 defines call them too,
// but going through those costs a method lookup and the generic overload
// dispatcher on every operator (about half of an eager `a + b` on small tensors).
PyTypeObject* tensor_type = nullptr;

const Tensor& tensor_of(PyObject* obj) {
  auto* inst = reinterpret_cast<py::detail::instance*>(obj);
  return *static_cast<const Tensor*>(inst->get_value_and_holder().value_ptr());
}

PyObject* translate_current_exception() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    if (!py::detail::apply_exception_translators(py::detail::get_local_internals().registered_exception_translators) &&
        !py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators))
      PyErr_SetString(PyExc_SystemError, "kiln: an exception escaped every translator");
  }
  return nullptr;
}

// TF's binary_op_wrapper (math_ops.py): when `x <op> y` raises TypeError or
// ValueError, a `y` whose type has the reflected method gets a try
// (`y.__rmul__(x)`); its NotImplemented, TypeError or ValueError restore x's
// error. So `int_tensor * np.float32(1.5)` is NumPy's result, a NumPy array,
// as in TF. Called with x's error set; returns the result or nullptr.
PyObject* reflected_fallback(PyObject* x, PyObject* y, const char* rname) {
  if (!PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError)) return nullptr;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject* out = nullptr;
  if (PyObject_HasAttrString(reinterpret_cast<PyObject*>(Py_TYPE(y)), rname)) {
    out = PyObject_CallMethod(y, rname, "O", x);
    if (out == Py_NotImplemented) {
      Py_DECREF(out);
      out = nullptr;
    } else if (!out && !PyErr_ExceptionMatches(PyExc_TypeError) && !PyErr_ExceptionMatches(PyExc_ValueError)) {
      Py_XDECREF(type);  // y's own error propagates, as in TF
      Py_XDECREF(value);
      Py_XDECREF(traceback);
      return nullptr;
    }
    PyErr_Clear();
  }
  if (out) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return out;
  }
  PyErr_Restore(type, value, traceback);
  return nullptr;
}

// The reflected methods TF's fallback tries (template arguments).
constexpr char kRAdd[] = "__radd__", kRSub[] = "__rsub__", kRMul[] = "__rmul__", kRDiv[] = "__rtruediv__",
               kRFloorDiv[] = "__rfloordiv__", kRMod[] = "__rmod__", kRPow[] = "__rpow__", kRAnd[] = "__rand__",
               kROr[] = "__ror__", kRXor[] = "__rxor__";

// `rname`: the reflected method TF's fallback tries, or nullptr (comparisons).
// `is_add`: `+`, whose TF op reports a dtype mismatch itself (add_dtype_mismatch).
template <BinaryFn fn, const char* rname, bool is_add = false>
PyObject* binary_slot(PyObject* a, PyObject* b) noexcept {
  // The interpreter calls a Tensor's slot for `a + b` and for `b + a` alike,
  // with the operands in source order.
  bool forward = PyObject_TypeCheck(a, tensor_type);
  try {
    const Tensor& self = tensor_of(forward ? a : b);
    std::optional<OtherOperand> o;
    try {
      o.emplace(py::handle(forward ? b : a), self);
    } catch (const OperandDTypeError& e) {
      // TF converts `+`'s y with x's dtype as a hint only; the op then rejects it.
      if (is_add && forward) add_dtype_mismatch(std::string(dtype_name(self.dtype())), e.alone);
      throw;
    }
    SourceLocation loc = user_location();
    Tensor out = forward ? fn(Operand(self, loc), o->operand(loc), loc) : fn(o->operand(loc), Operand(self, loc), loc);
    return py::cast(std::move(out)).release().ptr();
  } catch (...) {
    translate_current_exception();
    if constexpr (rname != nullptr) {
      // A tensor y's reflected method is this op again (TF's has no fallback): x's error stands.
      if (forward && !PyObject_TypeCheck(b, tensor_type)) return reflected_fallback(a, b, rname);
    }
    return nullptr;
  }
}

// Why a tensor cannot lend its memory (nullptr: it can).
const char* buffer_refusal(const Tensor& t) {
  if (t.is_symbolic() || t.dtype() == DType::String || t.dtype() == DType::Resource)
    return "only eager tensors of numbers or bools expose their memory";
  if (t.dtype() == DType::BFloat16)
    return "bfloat16 tensors expose no memory (NumPy has no bfloat16): use .numpy(), which gives float32";
  return nullptr;
}

// pybind11 calls def_buffer's function from the C buffer protocol, where an
// exception cannot pass (it terminated the process: np.asarray of a string
// tensor). The refusals are answered here, as BufferError, before pybind11's.
getbufferproc pybind11_getbuffer_proc = nullptr;
int tensor_getbuffer(PyObject* obj, Py_buffer* view, int flags) {
  try {
    if (const char* why = buffer_refusal(py::cast<const Tensor&>(py::handle(obj)))) {
      PyErr_SetString(PyExc_BufferError, why);
      return -1;
    }
  } catch (...) {
    PyErr_SetString(PyExc_BufferError, "this tensor exposes no memory");
    return -1;
  }
  return pybind11_getbuffer_proc(obj, view, flags);
}

void guard_buffer_protocol(py::class_<Tensor>& c) {
  PyTypeObject* type = reinterpret_cast<PyTypeObject*>(c.ptr());
  pybind11_getbuffer_proc = type->tp_as_buffer->bf_getbuffer;
  type->tp_as_buffer->bf_getbuffer = tensor_getbuffer;
  PyType_Modified(type);
}

py::object slot_result(PyObject* out) {
  if (!out) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(out);
}

// The explicit methods (`x.__add__(y)`, `x.__radd__(y)`): the slots' conversions and errors.
template <BinaryFn fn, const char* rname, bool is_add = false>
void def_binary(py::class_<Tensor>& c, const char* name) {
  c.def(name, [](py::handle self, py::handle other) {
    return slot_result(binary_slot<fn, rname, is_add>(self.ptr(), other.ptr()));
  }, py::is_operator());
  if constexpr (rname != nullptr)
    c.def(rname, [](py::handle self, py::handle other) {
      // other <op> self: a tensor `other` is the forward operand, anything else the reflected one.
      return slot_result(binary_slot<fn, rname, is_add>(other.ptr(), self.ptr()));
    }, py::is_operator());
}

void set_number_slots(py::class_<Tensor>& c) {
  tensor_type = reinterpret_cast<PyTypeObject*>(c.ptr());
  PyNumberMethods* n = tensor_type->tp_as_number;
  n->nb_add = binary_slot<add, kRAdd, true>;
  n->nb_subtract = binary_slot<subtract, kRSub>;
  n->nb_multiply = binary_slot<multiply, kRMul>;
  n->nb_true_divide = binary_slot<divide, kRDiv>;
  n->nb_floor_divide = binary_slot<floordiv, kRFloorDiv>;
  n->nb_remainder = binary_slot<mod, kRMod>;
  PyType_Modified(tensor_type);
}

Tensor matmul_operands(const Tensor& a, const Tensor& b) { return matmul(a, b, false, false, user_location()); }

// ---- DLPack -------------------------------------------------------------------
struct DLPackHolder {
  Tensor tensor;
  std::vector<int64_t> shape;
  DLManagedTensor managed;
};

DLDataType dlpack_dtype(DType d) {
  switch (d) {
    case DType::Float32: return {kDLFloat, 32, 1};
    case DType::Float64: return {kDLFloat, 64, 1};
    case DType::Int32: return {kDLInt, 32, 1};
    case DType::Int64: return {kDLInt, 64, 1};
    case DType::UInt8: return {kDLUInt, 8, 1};
    case DType::Float16: return {kDLFloat, 16, 1};
    case DType::BFloat16: return {kDLBfloat, 16, 1};
    case DType::Int8: return {kDLInt, 8, 1};
    case DType::Int16: return {kDLInt, 16, 1};
    case DType::UInt16: return {kDLUInt, 16, 1};
    case DType::UInt32: return {kDLUInt, 32, 1};
    case DType::UInt64: return {kDLUInt, 64, 1};
    case DType::Complex64: return {kDLComplex, 64, 1};
    case DType::Complex128: return {kDLComplex, 128, 1};
    default:  // bool has a DLPack code only from DLPack 0.8 (Debian ships 0.6)
      throw py::type_error("a " + std::string(dtype_name(d)) + " tensor has no DLPack form");
  }
}

// The deleter of the DLPack tensors Kiln makes: importing one of those shares
// a tensor's memory, which never changes.
void delete_holder(DLManagedTensor* m) { delete static_cast<DLPackHolder*>(m->manager_ctx); }

py::capsule to_dlpack(const Tensor& t) {
  core::require_concrete(t, "to_dlpack");
  auto* h = new DLPackHolder{t, t.shape().to_vector(), {}};
  DLTensor& dl = h->managed.dl_tensor;
  dl.data = core::raw_data(t);
  dl.device = {kDLCPU, 0};
  dl.ndim = t.rank();
  dl.dtype = dlpack_dtype(t.dtype());
  dl.shape = h->shape.data();
  dl.strides = nullptr;
  dl.byte_offset = 0;
  h->managed.manager_ctx = h;
  h->managed.deleter = delete_holder;
  return py::capsule(&h->managed, "dltensor", [](PyObject* cap) {
    // A consumer renames the capsule "used_dltensor" and owns it from then on.
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    } else {
      PyErr_Clear();
    }
  });
}

void release_dlpack(void* owner) noexcept {
  auto* m = static_cast<DLManagedTensor*>(owner);
  if (m->deleter) m->deleter(m);
}

Tensor from_dlpack(py::object obj) {
  py::capsule cap = py::hasattr(obj, "__dlpack__") ? py::capsule(obj.attr("__dlpack__")())
                                                   : py::reinterpret_borrow<py::capsule>(obj);
  if (!PyCapsule_IsValid(cap.ptr(), "dltensor"))
    throw py::value_error("from_dlpack: expected a DLPack capsule named 'dltensor' (one not consumed yet)");
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  const DLTensor& dl = m->dl_tensor;
  if (dl.device.device_type != kDLCPU)
    throw py::value_error("from_dlpack: only CPU tensors can be shared with Kiln");
  std::optional<DType> dtype;
  for (int i = 0; i < kNumDTypes; ++i) {
    auto d = static_cast<DType>(i);
    if (d == DType::Bool || d == DType::String || d == DType::Resource) continue;
    DLDataType t = dlpack_dtype(d);
    if (t.code == dl.dtype.code && t.bits == dl.dtype.bits && dl.dtype.lanes == 1) dtype = d;
  }
  if (!dtype)
    throw py::type_error("from_dlpack: Kiln has no dtype for DLPack type code " + std::to_string(dl.dtype.code) +
                         " with " + std::to_string(dl.dtype.bits) + " bits");
  // A producer's header is checked before any of it is trusted, as NumPy's
  // from_dlpack does: a bad one is a ValueError, never a crash.
  if (dl.ndim < 0 || dl.ndim > Shape::kMaxRank)
    throw py::value_error("from_dlpack: the tensor has " + std::to_string(dl.ndim) +
                          " dimensions; Kiln takes 0 to " + std::to_string(Shape::kMaxRank));
  if (dl.ndim > 0 && !dl.shape) throw py::value_error("from_dlpack: the tensor has no shape array");
  std::vector<int64_t> dims(dl.shape, dl.shape + dl.ndim);
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) throw py::value_error("from_dlpack: negative dimensions are not allowed (shape has " + std::to_string(d) + ")");
    if (__builtin_mul_overflow(count, d, &count) || count > Shape::kMaxElements)
      throw py::value_error("from_dlpack: the tensor is too big (its dimensions multiply past 2^48 elements)");
  }
  if (count > 0 && !dl.data) throw py::value_error("from_dlpack: the tensor has elements but no data pointer");
  if (dl.strides && count > 0) {
    int64_t expected = 1;
    for (int i = dl.ndim - 1; i >= 0; --i) {
      if (dims[i] != 1 && dl.strides[i] != expected)
        throw py::value_error("from_dlpack: the tensor is not contiguous (row-major); Kiln shares only "
                              "row-major memory");
      expected *= dims[i];
    }
  }
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  if (m->deleter != delete_holder) {
    // Another library's memory, which it may still write: copied, so the
    // tensor never changes, and handed back at once.
    Tensor t;
    try {
      t = core::make_tensor(*dtype, Shape(dims));
    } catch (...) {
      if (m->deleter) m->deleter(m);
      throw;
    }
    std::memcpy(core::raw_data(t), data, static_cast<std::size_t>(count) * dtype_size(*dtype));
    if (m->deleter) m->deleter(m);
    return t;
  }
  core::Buffer* buffer = core::make_external_buffer(*dtype, count, data, release_dlpack, m);
  return core::adopt_buffer(*dtype, Shape(dims), buffer);
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::enum_<DType>(m, "DTypeEnum")
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .value("int32", DType::Int32)
      .value("int64", DType::Int64)
      .value("uint8", DType::UInt8)
      .value("bool", DType::Bool)
      .value("string", DType::String)
      .value("resource", DType::Resource)
      .value("float16", DType::Float16)
      .value("bfloat16", DType::BFloat16)
      .value("int8", DType::Int8)
      .value("int16", DType::Int16)
      .value("uint16", DType::UInt16)
      .value("uint32", DType::UInt32)
      .value("uint64", DType::UInt64)
      .value("complex64", DType::Complex64)
      .value("complex128", DType::Complex128);
  m.def("_set_python_types", [](py::object dtypes, py::object shape) {
    dtype_objects = dtypes.release();
    shape_class = shape.release();
  });
  m.def("_set_package_dir", &set_package_dir);

  py::class_<Tensor> c(m, "Tensor", py::buffer_protocol());
  c.def_property_readonly("dtype", [](const Tensor& t) { return dtype_object(t.dtype()); })
      .def_property_readonly("shape", [](const Tensor& t) { return shape_object(t.shape()); })
      .def_property_readonly("ndim", [](const Tensor& t) -> py::object {
        if (t.rank() < 0) return py::none();
        return py::int_(t.rank());
      })
      .def_property_readonly("_is_symbolic", &Tensor::is_symbolic)
      .def_property_readonly("_dims", [](const Tensor& t) { return t.shape().to_vector(); })
      .def_property_readonly("_rank", &Tensor::rank)
      .def_property_readonly("name", [](const Tensor& t) -> py::object {
        if (t.is_symbolic()) return py::str(core::symbolic_tensor_name(t));
        return py::none();
      })
      .def("numpy", [](const Tensor& t) -> py::object {
        // TF's EagerTensor.numpy() hands out a writable copy (programs write into it); the
        // zero-copy read-only view stays np.asarray's.
        py::array a = tensor_to_numpy(t);
        if (t.rank() == 0) return a[py::tuple()];
        return a.attr("copy")();
      })
      .def("__array__", [](const Tensor& t, py::object dtype) -> py::object {
        py::array a = tensor_to_numpy(t);
        if (!dtype.is_none()) return a.attr("astype")(dtype);
        return std::move(a);
      }, py::arg("dtype") = py::none())
      .def("__dlpack__", [](const Tensor& t, py::object stream) { return to_dlpack(t); },
           py::arg("stream") = py::none())
      .def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(static_cast<int>(kDLCPU), 0); })
      .def("__str__", [](const Tensor& t) { return to_string(t); })
      .def("_scalar_value", [](const Tensor& t) -> py::object {
        // The value of a one-element eager tensor as a Python object.
        py::array a = tensor_to_numpy(t);
        if (t.size() != 1)
          throw py::value_error("only a tensor with one element has a Python value; this one has shape " +
                                t.shape().to_string());
        return a.attr("item")();
      })
      .def("__hash__", [](const Tensor&) -> py::int_ {
        throw py::type_error("Tensor is unhashable. Instead, use tensor.ref() as the key.");
      })
      .def("__neg__", [](const Tensor& t) { return negative(t, user_location()); })
      .def("__abs__", [](const Tensor& t) { return abs(t, user_location()); })
      // TF's Tensor: logical_not of bools, bitwise invert of integers (and no << or >>).
      .def("__invert__", [](const Tensor& t) { return invert_(t, user_location()); })
      .def("__matmul__", [](const Tensor& a, py::handle b) { return matmul_operands(a, to_tensor(b, a.dtype())); },
           py::is_operator())
      .def("__rmatmul__", [](const Tensor& a, py::handle b) { return matmul_operands(to_tensor(b, a.dtype()), a); },
           py::is_operator());
  c.def_buffer([](const Tensor& t) -> py::buffer_info {  // refusals: tensor_getbuffer, before this
    py::ssize_t item = static_cast<py::ssize_t>(dtype_size(t.dtype()));
    std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides(shape.size());
    py::ssize_t stride = item;
    for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
      strides[i] = stride;
      stride *= shape[i];
    }
    std::string format = t.dtype() == DType::Bool         ? "?"
                         : t.dtype() == DType::Complex64  ? "Zf"  // PEP 3118's complex codes
                         : t.dtype() == DType::Complex128 ? "Zd"
                                                          : std::string(py::str(numpy_dtype(t.dtype()).attr("char")));
    return py::buffer_info(core::raw_data(t), item, format, static_cast<py::ssize_t>(shape.size()), shape,
                           strides, /*readonly=*/true);
  });
  guard_buffer_protocol(c);
  def_binary<add, kRAdd, true>(c, "__add__");
  def_binary<subtract, kRSub>(c, "__sub__");
  def_binary<multiply, kRMul>(c, "__mul__");
  def_binary<divide, kRDiv>(c, "__truediv__");
  def_binary<floordiv, kRFloorDiv>(c, "__floordiv__");
  def_binary<mod, kRMod>(c, "__mod__");
  def_binary<kiln::pow, kRPow>(c, "__pow__");
  // TF's tensor_equals / tensor_not_equals: `t == None` is False, `t != None` True.
  // Tensor.set_shape of a graph tensor: the Python object takes the
  // EnsureShape made of what it held (TF refines the graph tensor in place;
  // a Kiln tensor never changes once made).
  c.def("_rebind", [](Tensor& self, const Tensor& refined) {
    if (!self.is_symbolic() || !refined.is_symbolic())
      throw py::type_error("_rebind: only a graph tensor takes a refined graph tensor (set_shape)");
    self = refined;
  });
  c.def("__eq__", [](py::handle self, py::handle other) -> py::object {
    if (other.is_none()) return py::bool_(false);
    return slot_result(binary_slot<equal, nullptr>(self.ptr(), other.ptr()));
  }, py::is_operator());
  c.def("__ne__", [](py::handle self, py::handle other) -> py::object {
    if (other.is_none()) return py::bool_(true);
    return slot_result(binary_slot<not_equal, nullptr>(self.ptr(), other.ptr()));
  }, py::is_operator());
  def_binary<less, nullptr>(c, "__lt__");
  def_binary<less_equal, nullptr>(c, "__le__");
  def_binary<greater, nullptr>(c, "__gt__");
  def_binary<greater_equal, nullptr>(c, "__ge__");
  // TF's Tensor: logical on bools, bitwise on integers (math_ops.and_, or_, xor_).
  def_binary<and_, kRAnd>(c, "__and__");
  def_binary<or_, kROr>(c, "__or__");
  def_binary<xor_, kRXor>(c, "__xor__");
  set_number_slots(c);

  m.def("constant", [](py::handle value, py::object dtype, bool node) {
    std::optional<DType> d;
    if (!dtype.is_none()) d = dtype_from_python(dtype);
    Tensor t = to_tensor(value, d);
    // tf.constant while tracing is a Const node, as TF's: the graph passes fold what hangs on it alone.
    if (node && !t.is_symbolic()) return ops::const_op(std::move(t), user_location());
    return t;
  }, py::arg("value"), py::arg("dtype") = py::none(), py::arg("node") = false);
  m.def("to_numpy", &tensor_to_numpy);
  m.def("to_dlpack", &to_dlpack);
  m.def("from_dlpack", &from_dlpack);
  m.def("is_tracing", &detail::is_tracing);
  m.def("truth_value", [](const Tensor& t) { return static_cast<bool>(t); });
}

}  // namespace kiln::python
