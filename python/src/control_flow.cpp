// cond, while_loop and TensorArray for Python callables and nested
// structures, on the engine's flat forms (one If / While op when traced).
#include "bindings.h"

namespace kiln::python {

namespace {

// Reads a template back from a span of leaves (copied: the span is the
// engine's and stays valid).
py::object rebuild_from(py::handle tmpl, std::span<const Tensor> leaves, const std::vector<int64_t>& sizes) {
  std::vector<Tensor> copies(leaves.begin(), leaves.end());
  detail::ResultReader reader(copies, sizes);
  return unflatten_result(tmpl, reader);
}

void check_same_structure(py::handle expected, py::handle got, const char* what) {
  if (!expected.equal(got))
    throw py::value_error(std::string(what) + " must have the same number, type, and overall structure of return "
                          "values; expected " + std::string(py::repr(expected)) + ", got " +
                          std::string(py::repr(got)) + " (tensors are shown as <object>)");
}

py::object cond(const Tensor& pred, py::function true_fn, py::function false_fn) {
  py::object then_tmpl, else_tmpl;
  std::vector<int64_t> then_sizes;
  auto branch = [](py::function& fn, py::object& tmpl) {
    return [&fn, &tmpl](std::span<const Tensor>, detail::ResultFlattener& out) {
      py::gil_scoped_acquire gil;
      tmpl = flatten_result(fn(), out);
    };
  };
  auto then_call = branch(true_fn, then_tmpl);
  auto else_call = [&](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
    branch(false_fn, else_tmpl)(leaves, out);
    py::gil_scoped_acquire gil;
    check_same_structure(then_tmpl, else_tmpl, "true_fn and false_fn arguments to kiln.cond");
  };
  std::vector<int64_t> sizes;
  SourceLocation loc = user_location();
  std::vector<Tensor> leaves;
  {
    py::gil_scoped_release release;
    leaves = detail::cond_flat(pred, detail::FlatFnRef(then_call), detail::FlatFnRef(else_call), sizes, loc);
  }
  check_same_structure(then_tmpl, else_tmpl, "true_fn and false_fn arguments to kiln.cond");
  detail::ResultReader reader(leaves, sizes);
  return unflatten_result(then_tmpl, reader);
}

// loop_vars: a tuple; shape_invariants: None or one entry per variable (None,
// or a list of dims with None for unknown ones).
py::object while_loop(py::function cond_fn, py::function body_fn, py::tuple loop_vars, py::object shape_invariants,
                      py::object maximum_iterations) {
  detail::ResultFlattener flat;
  detail::LoopVarsInfo info;
  py::list parts;
  for (py::handle v : loop_vars) {
    info.is_tensor.push_back(py::isinstance<Tensor>(v));
    info.first_leaf.push_back(flat.leaves.size());
    parts.append(flatten_result(v, flat));
  }
  py::object tmpl = py::tuple(parts);
  WhileOptions options;
  if (!shape_invariants.is_none()) {
    for (py::handle s : shape_invariants) {
      if (s.is_none()) {
        options.shape_invariants.emplace_back();
        continue;
      }
      py::object dims = py::hasattr(s, "as_list") ? s.attr("as_list")() : py::reinterpret_borrow<py::object>(s);
      if (dims.is_none()) {
        options.shape_invariants.emplace_back(Shape::unknown_rank());
        continue;
      }
      std::vector<int64_t> d;
      for (py::handle x : dims) d.push_back(x.is_none() ? -1 : py::cast<int64_t>(x));
      options.shape_invariants.emplace_back(Shape(d));
    }
  }
  if (!maximum_iterations.is_none()) options.maximum_iterations = to_tensor(maximum_iterations, DType::Int32);
  detail::LoopSpec spec;
  detail::apply_while_options(options, info, flat, spec);
  const std::vector<int64_t> sizes = flat.sizes;
  auto cond_call = [&](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
    py::gil_scoped_acquire gil;
    py::tuple vars = rebuild_from(tmpl, leaves, sizes);
    out.leaf(to_tensor(cond_fn(*vars)));
  };
  auto body_call = [&](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
    py::gil_scoped_acquire gil;
    py::tuple vars = rebuild_from(tmpl, leaves, sizes);
    py::object next = body_fn(*vars);
    if (loop_vars.size() == 1 && !(py::isinstance<py::tuple>(next) || py::isinstance<py::list>(next)))
      next = py::make_tuple(next);
    py::list next_parts;
    for (py::handle v : next) next_parts.append(flatten_result(v, out));
    check_same_structure(tmpl, py::tuple(next_parts), "kiln.while_loop: body");
  };
  SourceLocation loc = user_location();
  std::vector<Tensor> result;
  {
    py::gil_scoped_release release;
    result = detail::while_loop_flat(detail::FlatFnRef(cond_call), detail::FlatFnRef(body_call),
                                     std::move(flat.leaves), sizes, spec, loc);
  }
  return rebuild_from(tmpl, result, sizes);
}

}  // namespace

void bind_control_flow(py::module_& m) {
  m.def("control_flow_intercepted", &detail::control_flow_intercepted);
  m.def("predicate_value", [](py::handle pred) { return detail::predicate_value(to_tensor(pred), "cond"); });
  m.def("cond", &cond);
  m.def("while_loop", &while_loop);

  py::class_<TensorArray>(m, "TensorArray")
      .def(py::init([](py::handle dtype, py::handle size, bool dynamic_size, bool clear_after_read,
                       py::object element_shape) {
             TensorArrayOptions o;
             o.dynamic_size = dynamic_size;
             o.clear_after_read = clear_after_read;
             if (!element_shape.is_none()) {
               py::object dims = py::hasattr(element_shape, "as_list") ? element_shape.attr("as_list")() : element_shape;
               if (!dims.is_none()) {
                 std::vector<int64_t> d;
                 for (py::handle x : dims) d.push_back(x.is_none() ? -1 : py::cast<int64_t>(x));
                 o.element_shape = Shape(d);
               }
             }
             Tensor n = to_tensor(size, DType::Int32);
             return TensorArray(dtype_from_python(dtype), n, o, user_location());
           }),
           py::arg("dtype"), py::arg("size") = 0, py::arg("dynamic_size") = false, py::arg("clear_after_read") = false,
           py::arg("element_shape") = py::none())
      .def("write", [](const TensorArray& a, py::handle index, py::handle value) {
        Tensor i = to_tensor(index, DType::Int32);
        return a.write(i, to_tensor(value, a.dtype()), user_location());
      })
      .def("read", [](const TensorArray& a, py::handle index) {
        Tensor i = to_tensor(index, DType::Int32);
        return a.read(i, user_location());
      })
      .def("gather", [](const TensorArray& a, py::handle indices) {
        return a.gather(to_tensor(indices, DType::Int32), user_location());
      })
      .def("scatter", [](const TensorArray& a, py::handle indices, py::handle values) {
        return a.scatter(to_tensor(indices, DType::Int32), to_tensor(values, a.dtype()), user_location());
      })
      .def("unstack", [](const TensorArray& a, py::handle value) {
        return a.unstack(to_tensor(value, a.dtype()), user_location());
      })
      .def("stack", [](const TensorArray& a) { return a.stack(user_location()); })
      .def("concat", [](const TensorArray& a) { return a.concat(user_location()); })
      .def("size", [](const TensorArray& a) { return a.size(); })
      // Its three state tensors, and a TensorArray of the same options holding
      // others: a dataset loop carries it as its state (data/_dataset.py).
      .def("_leaves",
           [](const TensorArray& a) {
             detail::Flattener f;
             detail::TraceTraits<TensorArray>::flatten(a, f);
             return std::vector<Tensor>(f.leaves.begin(), f.leaves.end());
           })
      .def("_with_leaves",
           [](const TensorArray& a, const std::vector<Tensor>& leaves) {
             if (leaves.size() != 3) throw py::value_error("a TensorArray's state is 3 tensors");
             detail::Rebuilder r(leaves);
             return detail::TraceTraits<TensorArray>::rebuild(a, r);
           })
      .def_property_readonly("_dtype_enum", [](const TensorArray& a) { return static_cast<int>(a.dtype()); })
      .def_property_readonly("dynamic_size", [](const TensorArray& a) { return a.options().dynamic_size; });
}

}  // namespace kiln::python
