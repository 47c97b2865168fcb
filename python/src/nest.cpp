// Nested Python structures <-> trace keys and flat tensor leaves, by TF's
// rules: tensors by dtype and shape, Python scalars and strings by value,
// lists, tuples, dicts, namedtuples and dataclasses by structure, variables by
// spec, other objects by identity.
#include "bindings.h"

namespace kiln::python {

namespace {

using Kind = detail::KeyAtom::Kind;

// Markers in a result template for the values that come back from a call.
// Handles that are never released: Python objects must not be destroyed
// after the interpreter has finalized.
py::handle leaf_marker() {
  static py::handle m = py::module_::import("builtins").attr("object")().release();
  return m;
}
py::handle tensor_array_marker() {
  static py::handle m = py::module_::import("builtins").attr("object")().release();
  return m;
}

bool is_namedtuple(py::handle obj) { return PyTuple_Check(obj.ptr()) && py::hasattr(obj, "_fields"); }
bool is_dataclass(py::handle obj) {
  return !PyType_Check(obj.ptr()) && py::hasattr(py::type::of(obj), "__dataclass_fields__");
}
std::string type_name(py::handle obj) {
  py::handle t = py::type::of(obj);
  return py::cast<std::string>(t.attr("__module__")) + "." + py::cast<std::string>(t.attr("__qualname__"));
}
py::list sorted_keys(py::handle dict) { return py::module_::import("builtins").attr("sorted")(dict, py::arg("key") = py::module_::import("builtins").attr("repr")); }
py::list dataclass_fields(py::handle obj) {
  py::list names;
  for (py::handle f : py::module_::import("dataclasses").attr("fields")(obj)) names.append(f.attr("name"));
  return names;
}

// NumPy arrays and NumPy scalars (np.float32(1.5)) are tensors to
// kiln.function, as to tf.function.
bool is_numpy_value(py::handle obj) {
  if (py::isinstance<py::array>(obj)) return true;
  static py::handle generic = py::object(py::module_::import("numpy").attr("generic")).release();
  return PyObject_IsInstance(obj.ptr(), generic.ptr()) == 1;
}

// A unique number for an object for as long as it lives (kiln/_identity.py;
// a new object never takes a dead one's number, as id() may).
int64_t identity_key(py::handle obj) {
  static py::handle fn = py::object(py::module_::import("kiln._identity").attr("identity_key")).release();
  return py::cast<int64_t>(fn(obj));
}

}  // namespace

TensorSpec to_tensor_spec(py::handle kiln_spec) {
  py::tuple spec = py::reinterpret_borrow<py::tuple>(kiln_spec);
  std::vector<int64_t> dims = py::cast<std::vector<int64_t>>(spec[0]);
  Shape shape = py::cast<int>(spec[2]) < 0 ? Shape::unknown_rank() : Shape(dims);
  return TensorSpec(shape, static_cast<DType>(py::cast<int>(spec[1])));
}

void flatten_arguments(py::handle obj, detail::Flattener& f) {
  RecursionGuard guard(" in flatten");
  PyObject* p = obj.ptr();
  if (py::isinstance<Tensor>(obj)) return f.tensor(py::cast<const Tensor&>(obj));
  if (is_numpy_value(obj)) return f.tensor(to_tensor(obj));
  if (PyBool_Check(p)) return f.boolean(p == Py_True);
  if (PyLong_Check(p)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(p, &overflow);
    if (overflow) return f.string("int:" + std::string(py::str(obj)));
    return f.integer(v, DType::Int64);
  }
  if (PyFloat_Check(p)) return f.floating(PyFloat_AS_DOUBLE(p), DType::Float64);
  if (PyUnicode_Check(p)) return f.string(py::cast<std::string>(obj));
  if (PyBytes_Check(p)) return f.string("bytes:" + py::cast<std::string>(obj));
  if (obj.is_none()) {
    f.begin(Kind::Optional, 0);
    return f.end();
  }
  if (py::isinstance<Variable>(obj)) {
    const Variable& v = py::cast<const Variable&>(obj);
    return f.variable(v.handle(), v.dtype(), v.shape());
  }
  if (py::isinstance<TensorArray>(obj)) return detail::Traits<TensorArray>::flatten(py::cast<const TensorArray&>(obj), f);
  if (py::hasattr(obj, "_kiln_spec")) return f.spec(to_tensor_spec(obj.attr("_kiln_spec")()));
  if (is_namedtuple(obj)) {
    f.begin(Kind::Struct, static_cast<int64_t>(py::len(obj)), type_name(obj));
    for (py::handle item : obj) flatten_arguments(item, f);
    return f.end();
  }
  if (PyTuple_Check(p) || PyList_Check(p)) {
    f.begin(PyTuple_Check(p) ? Kind::Tuple : Kind::List, static_cast<int64_t>(py::len(obj)));
    for (py::handle item : obj) flatten_arguments(item, f);
    return f.end();
  }
  if (PyDict_Check(p)) {
    py::list keys = sorted_keys(obj);
    f.begin(Kind::Map, static_cast<int64_t>(keys.size()));
    for (py::handle k : keys) {
      f.string(py::repr(k));
      flatten_arguments(obj[k], f);
    }
    return f.end();
  }
  if (is_dataclass(obj)) {
    py::list names = dataclass_fields(obj);
    f.begin(Kind::Struct, static_cast<int64_t>(names.size()), type_name(obj));
    for (py::handle n : names) flatten_arguments(obj.attr(n), f);
    return f.end();
  }
  // After the containers, so that their (commonest) arguments pay no failed lookup.
  if (py::hasattr(obj, "_kiln_engine_dataset")) {
    // A kiln.data.Dataset: keyed by its elements' structure and the engine
    // dataset's element spec (fed to the graph), as TF keys datasets.
    f.begin(Kind::Struct, 1, type_name(obj) + py::cast<std::string>(obj.attr("_kiln_structure_key")()));
    detail::Traits<data::Dataset>::flatten(py::cast<const data::Dataset&>(obj.attr("_kiln_engine_dataset")), f);
    return f.end();
  }
  if (py::hasattr(obj, "_kiln_trace_key")) {
    // An object that states its own key.
    f.begin(Kind::Struct, 1, type_name(obj));
    flatten_arguments(obj.attr("_kiln_trace_key")(), f);
    return f.end();
  }
  f.begin(Kind::Struct, 0, type_name(obj) + "#" + std::to_string(identity_key(obj)));
  f.end();
}

py::object rebuild_arguments(py::handle obj, detail::Rebuilder& r) {
  RecursionGuard guard(" in flatten");
  PyObject* p = obj.ptr();
  if (py::isinstance<Tensor>(obj) || is_numpy_value(obj) || py::hasattr(obj, "_kiln_spec"))
    return py::cast(r.next());
  if (py::isinstance<Variable>(obj)) {
    const Variable& v = py::cast<const Variable&>(obj);
    py::object rebuilt = py::cast(v.with_handle(r.next()));
    return rebuilt;
  }
  if (py::isinstance<TensorArray>(obj))
    return py::cast(detail::Traits<TensorArray>::rebuild(py::cast<const TensorArray&>(obj), r));
  if (is_namedtuple(obj)) {
    py::list items;
    for (py::handle item : obj) items.append(rebuild_arguments(item, r));
    return py::type::of(obj)(*items);
  }
  if (PyTuple_Check(p) || PyList_Check(p)) {
    py::list items;
    for (py::handle item : obj) items.append(rebuild_arguments(item, r));
    if (PyTuple_Check(p)) return py::tuple(items);
    return std::move(items);
  }
  if (PyDict_Check(p)) {
    py::dict out;
    for (py::handle k : sorted_keys(obj)) out[k] = rebuild_arguments(obj[k], r);
    // Keep the caller's key order.
    py::dict ordered;
    for (py::handle k : obj) ordered[k] = out[k];
    return std::move(ordered);
  }
  if (is_dataclass(obj)) {
    py::dict changes;
    for (py::handle n : dataclass_fields(obj)) changes[n] = rebuild_arguments(obj.attr(n), r);
    return py::module_::import("dataclasses").attr("replace")(obj, **changes);
  }
  if (py::hasattr(obj, "_kiln_engine_dataset")) {
    const auto& ds = py::cast<const data::Dataset&>(obj.attr("_kiln_engine_dataset"));
    return obj.attr("_kiln_with_engine_dataset")(detail::Traits<data::Dataset>::rebuild(ds, r));
  }
  return py::reinterpret_borrow<py::object>(obj);
}

py::object flatten_result(py::handle obj, detail::ResultFlattener& f) {
  RecursionGuard guard(" in flatten");
  PyObject* p = obj.ptr();
  if (py::isinstance<Tensor>(obj)) {
    f.leaf(py::cast<const Tensor&>(obj));
    return py::reinterpret_borrow<py::object>(leaf_marker());
  }
  if (py::isinstance<Variable>(obj)) {
    f.leaf(py::cast<const Variable&>(obj).read_value(user_location()));
    return py::reinterpret_borrow<py::object>(leaf_marker());
  }
  if (py::isinstance<TensorArray>(obj)) {
    detail::Traits<TensorArray>::flatten_result(py::cast<const TensorArray&>(obj), f);
    return py::reinterpret_borrow<py::object>(tensor_array_marker());
  }
  if (is_namedtuple(obj)) {
    py::list items;
    for (py::handle item : obj) items.append(flatten_result(item, f));
    return py::type::of(obj)(*items);
  }
  if (PyTuple_Check(p) || PyList_Check(p)) {
    py::list items;
    for (py::handle item : obj) items.append(flatten_result(item, f));
    if (PyTuple_Check(p)) return py::tuple(items);
    return std::move(items);
  }
  if (PyDict_Check(p)) {
    py::dict out;
    for (py::handle k : sorted_keys(obj)) out[k] = flatten_result(obj[k], f);
    py::dict ordered;
    for (py::handle k : obj) ordered[k] = out[k];
    return std::move(ordered);
  }
  return py::reinterpret_borrow<py::object>(obj);  // a Python value, returned as it is
}

py::object unflatten_result(py::handle tmpl, detail::ResultReader& reader) {
  RecursionGuard guard(" in flatten");
  PyObject* p = tmpl.ptr();
  if (tmpl.is(leaf_marker())) return py::cast(reader.leaf());
  if (tmpl.is(tensor_array_marker())) return py::cast(detail::Traits<TensorArray>::unflatten(reader));
  if (is_namedtuple(tmpl)) {
    py::list items;
    for (py::handle item : tmpl) items.append(unflatten_result(item, reader));
    return py::type::of(tmpl)(*items);
  }
  if (PyTuple_Check(p) || PyList_Check(p)) {
    py::list items;
    for (py::handle item : tmpl) items.append(unflatten_result(item, reader));
    if (PyTuple_Check(p)) return py::tuple(items);
    return std::move(items);
  }
  if (PyDict_Check(p)) {
    // Leaves were read in sorted key order.
    py::dict values;
    for (py::handle k : sorted_keys(tmpl)) values[k] = unflatten_result(tmpl[k], reader);
    py::dict ordered;
    for (py::handle k : tmpl) ordered[k] = values[k];
    return std::move(ordered);
  }
  return py::reinterpret_borrow<py::object>(tmpl);
}

}  // namespace kiln::python
