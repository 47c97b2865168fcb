// kiln.function's engine side: the engine's trace cache keyed by Python
// values, tracing that calls back into Python, results rebuilt in the
// callable's own structure. Graph calls run without the GIL.
#include <map>
#include <mutex>

#include "bindings.h"
#include "function/traced_graph.h"
#include "kiln/threading.h"

namespace kiln::python {

namespace {

// A call's arguments are keyed one by one ("arg 0", "arg 1"), as C++'s are.
void flatten_call(const py::tuple& args, detail::Flattener& flat) {
  for (py::handle a : args) flatten_arguments(a, flat);
}

// The graph's parameters take the Python parameters' names, as TF's
// placeholders do: `x` for a tensor argument x, then `x_1`, `x_2`... for
// further tensors inside it (arg<i> for arguments without a name). Asked for
// by the engine only when a call traces.
struct CallNames {
  const py::tuple* args;
  const std::vector<std::string>* names;

  static std::vector<std::string> leaf_names(const void* source) {
    const auto& self = *static_cast<const CallNames*>(source);
    py::gil_scoped_acquire gil;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < self.args->size(); ++i) {
      detail::Flattener one(/*specs_allowed=*/true);
      flatten_arguments((*self.args)[i], one);
      const std::string base = i < self.names->size() ? (*self.names)[i] : "arg" + std::to_string(i);
      for (std::size_t k = 0; k < one.leaves.size(); ++k) out.push_back(k == 0 ? base : base + "_" + std::to_string(k));
    }
    return out;
  }
  void attach(detail::Flattener& flat) const {
    if (!names->empty()) flat.leaf_names = {&CallNames::leaf_names, this};
  }
};

py::tuple rebuild_call(const py::tuple& args, detail::Rebuilder& leaves) {
  py::tuple out(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) out[i] = rebuild_arguments(args[i], leaves);
  return out;
}

// What a trace returned, as a template (Python values kept, leaves marked):
// kept in the traced graph's cache entry, so a thread that finds the entry
// another thread is still returning from finds its template too.
py::object template_of(const detail::TracedGraph& concrete) {
  if (!concrete.front_end_data)
    throw Internal("kiln.function: no result structure recorded for " + concrete.name);
  return *static_cast<const py::object*>(concrete.front_end_data.get());
}

class PyFunction {
 public:
  PyFunction(py::object fn, FunctionOptions options, std::vector<std::string> arg_names)
      : fn_(std::move(fn)),
        core_(std::make_shared<detail::FunctionCore>(std::move(options))),
        arg_names_(std::move(arg_names)) {}

  // Traces: calls the Python callable on the arguments with their leaves
  // replaced by the graph's tensors, and records its result template.
  auto make_trace(const py::tuple& args) {
    return [this, &args](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
      py::gil_scoped_acquire gil;
      detail::Rebuilder rebuilder(leaves);
      py::tuple rebuilt = rebuild_call(args, rebuilder);
      py::object result = fn_(*rebuilt);
      out.front_end_data = share(flatten_result(result, out));
    };
  }


  // `args`: the call's arguments, bound to the Python parameters (a tuple).
  py::object call(py::tuple args) {
    detail::Flattener flat;
    flatten_call(args, flat);
    CallNames names{&args, &arg_names_};
    names.attach(flat);
    auto trace = make_trace(args);
    detail::TraceFnRef ref(trace);
    detail::CallResult result = GraphCall()([&] {
      return detail::is_tracing() ? core_->call_in_trace(flat, ref) : core_->call(flat, ref);
    });
    py::object tmpl = template_of(*result.concrete);
    detail::ResultReader reader(std::span<Tensor>(result.leaves.data(), result.leaves.size()), result.sizes());
    return unflatten_result(tmpl, reader);
  }

  // The traced graph for these arguments (TensorSpecs allowed), and the
  // result template of that trace.
  std::pair<ConcreteFunction, py::object> concrete(py::tuple args) {
    detail::Flattener flat(/*specs_allowed=*/true);
    flatten_call(args, flat);
    CallNames names{&args, &arg_names_};
    names.attach(flat);
    auto trace = make_trace(args);
    detail::TraceFnRef ref(trace);
    std::shared_ptr<const detail::TracedGraph> impl;
    {
      py::gil_scoped_release release;
      impl = core_->concrete(flat, ref);
    }
    return {ConcreteFunction(impl), template_of(*impl)};
  }

  detail::FunctionCore& core() { return *core_; }
  std::vector<std::pair<ConcreteFunction, py::object>> concrete_functions() {
    std::vector<std::pair<ConcreteFunction, py::object>> out;
    for (auto& impl : core_->concrete_functions()) out.emplace_back(ConcreteFunction(impl), template_of(*impl));
    return out;
  }

 private:
  py::object fn_;
  std::shared_ptr<detail::FunctionCore> core_;
  std::vector<std::string> arg_names_;  // the Python parameters', per argument
};

py::object call_concrete(const ConcreteFunction& f, py::handle tmpl, py::tuple args) {
  detail::Flattener flat;
  flatten_call(args, flat);
  Outputs outs = GraphCall()([&] { return f.call_flat(flat); });
  std::vector<Tensor> leaves = outs.values();
  detail::ResultReader reader(leaves, f.impl()->result_sizes);
  return unflatten_result(tmpl, reader);
}

std::string cause_name(RetraceCause c) {
  switch (c) {
    case RetraceCause::Shape: return "shape";
    case RetraceCause::DType: return "dtype";
    case RetraceCause::Value: return "value";
    case RetraceCause::Structure: return "structure";
    case RetraceCause::Relaxed: return "relaxed";
    case RetraceCause::NewVariable: return "new_variable";
  }
  return "unknown";
}

TensorSpec spec_from_python(py::handle obj) {
  py::tuple spec = obj.attr("_kiln_spec")();
  std::vector<int64_t> dims = py::cast<std::vector<int64_t>>(spec[0]);
  Shape shape = py::cast<int>(spec[2]) < 0 ? Shape::unknown_rank() : Shape(dims);
  return TensorSpec(shape, static_cast<DType>(py::cast<int>(spec[1])));
}

// A tf.errors class raised by a host function keeps its class, as in TF's
// py_function (a ResourceExhaustedError stays one); other exceptions become
// InvalidArgumentError. A Ctrl-C's KeyboardInterrupt stops the graph and is
// raised again when the call returns to Python (GraphCall).
void rethrow_op_error(py::error_already_set& e, const std::string& text) {
  if (e.matches(PyExc_KeyboardInterrupt)) {
    PyErr_SetInterrupt();
    throw Cancelled(text);
  }
  py::module_ c = py::module_::import("kiln._C");
  if (e.matches(c.attr("CancelledError"))) throw Cancelled(text);
  if (e.matches(c.attr("DeadlineExceededError"))) throw DeadlineExceeded(text);
  if (e.matches(c.attr("ResourceExhaustedError"))) throw ResourceExhausted(text);
  if (e.matches(c.attr("OutOfRangeError"))) throw OutOfRange(text);
  if (e.matches(c.attr("FailedPreconditionError"))) throw FailedPrecondition(text);
  if (e.matches(c.attr("NotFoundError"))) throw NotFound(text);
  if (e.matches(c.attr("UnimplementedError"))) throw Unimplemented(text);
  if (e.matches(c.attr("InternalError"))) throw Internal(text);
}

}  // namespace

void bind_function(py::module_& m) {
  py::class_<RetraceRecord>(m, "RetraceRecord")
      .def_readonly("trace_number", &RetraceRecord::trace_number)
      .def_readonly("path", &RetraceRecord::path)
      .def_readonly("old_spec", &RetraceRecord::old_spec)
      .def_readonly("new_spec", &RetraceRecord::new_spec)
      .def_property_readonly("cause", [](const RetraceRecord& r) { return cause_name(r.cause); })
      .def("text", &RetraceRecord::text)
      .def("__repr__", [](const RetraceRecord& r) { return "<RetraceRecord " + r.text() + ">"; });
  py::class_<CacheInfo>(m, "CacheInfo")
      .def_readonly("hits", &CacheInfo::hits)
      .def_readonly("misses", &CacheInfo::misses)
      .def_readonly("traces", &CacheInfo::traces)
      .def_readonly("entries", &CacheInfo::entries)
      .def("__repr__", [](const CacheInfo& c) {
        return "CacheInfo(hits=" + std::to_string(c.hits) + ", misses=" + std::to_string(c.misses) +
               ", traces=" + std::to_string(c.traces) + ", entries=" + std::to_string(c.entries) + ")";
      });

  py::class_<PyFunction>(m, "FunctionCore")
      .def(py::init([](py::object fn, py::object input_signature, std::string name, bool exact_shapes, bool verify,
                       int max_cache_entries, std::vector<std::string> arg_names) {
             FunctionOptions o;
             if (!input_signature.is_none()) {
               std::vector<TensorSpec> specs;
               for (py::handle s : input_signature) specs.push_back(spec_from_python(s));
               o.input_signature = std::move(specs);
             }
             o.name = std::move(name);
             o.exact_shapes = exact_shapes;
             o.verify = verify;
             o.max_cache_entries = max_cache_entries;
             return new PyFunction(std::move(fn), std::move(o), std::move(arg_names));
           }),
           py::arg("fn"), py::arg("input_signature"), py::arg("name"), py::arg("exact_shapes"), py::arg("verify"),
           py::arg("max_cache_entries"), py::arg("arg_names"))
      .def("call", &PyFunction::call)
      .def("concrete", &PyFunction::concrete)
      .def("concrete_functions", &PyFunction::concrete_functions)
      .def("tracing_count", [](PyFunction& f) { return f.core().tracing_count(); })
      .def("retrace_log", [](PyFunction& f) { return f.core().retrace_log(); })
      .def("cache_info", [](PyFunction& f) { return f.core().cache_info(); })
      .def("expect_max_traces", [](PyFunction& f, int n) { f.core().expect_max_traces(n); });

  py::class_<ConcreteFunction>(m, "ConcreteFunctionCore")
      .def("call", &call_concrete)
      .def_property_readonly("name", &ConcreteFunction::name)
      .def("to_string", &ConcreteFunction::to_string)
      .def("graph_text", [](const ConcreteFunction& f) { return f.graph().to_string(); })
      .def("graph_dot", [](const ConcreteFunction& f) { return f.graph().to_dot(); })
      .def("num_nodes", [](const ConcreteFunction& f) { return f.graph().num_nodes(); })
      .def("graph_nodes", [](const ConcreteFunction& f) {
        // (name, op, inputs) of each node, inputs named as a GraphDef names them ("add", "split:1").
        py::list out;
        for (const auto& n : f.impl()->graph->nodes()) {
          py::list inputs;
          for (const auto& v : n->inputs)
            inputs.append(v.node->outputs.size() == 1 && v.index == 0 ? v.node->name
                                                                       : v.node->name + ":" + std::to_string(v.index));
          out.append(py::make_tuple(n->name, std::string(n->op->name), inputs));
        }
        return out;
      })
      .def("input_specs", [](const ConcreteFunction& f) {
        py::list out;
        for (const TensorSpec& s : f.inputs())
          out.append(py::make_tuple(s.shape.to_vector(), static_cast<int>(s.dtype), s.shape.rank()));
        return out;
      })
      .def("output_specs", [](const ConcreteFunction& f) {
        py::list out;
        for (const TensorSpec& s : f.outputs())
          out.append(py::make_tuple(s.shape.to_vector(), static_cast<int>(s.dtype), s.shape.rank()));
        return out;
      });

  m.def("run_functions_eagerly", &config::run_functions_eagerly);
  m.def("functions_run_eagerly", &config::functions_run_eagerly);
  m.def("set_intra_op_parallelism_threads", &config::set_intra_op_parallelism_threads);
  m.def("get_intra_op_parallelism_threads", &config::get_intra_op_parallelism_threads);
  m.def("enable_check_numerics", &debugging::enable_check_numerics);
  m.def("disable_check_numerics", &debugging::disable_check_numerics);

  // tf.py_function: `fn` runs on every call (eagerly now, or in the graph).
  // Python exceptions become InvalidArgument naming their type, as TF's do.
  m.def("host_function", [](py::function fn, std::vector<Tensor> inputs, py::list dtype_objects) {
    std::vector<DType> dtypes;
    for (py::handle d : dtype_objects) dtypes.push_back(dtype_from_python(d));
    HostCallbackFn callback = [fn](const std::vector<Tensor>& in) -> std::vector<Tensor> {
      py::gil_scoped_acquire gil;
      try {
        py::list args;
        for (const Tensor& t : in) args.append(py::cast(t));
        py::object result = fn(*args);
        std::vector<Tensor> out;
        if (py::isinstance<py::tuple>(result) || py::isinstance<py::list>(result)) {
          for (py::handle r : result) out.push_back(to_tensor(r));
        } else if (!result.is_none()) {
          out.push_back(to_tensor(result));
        }
        return out;
      } catch (py::error_already_set& e) {
        std::string text = std::string(py::str(e.type().attr("__name__"))) + ": " + std::string(py::str(e.value()));
        rethrow_op_error(e, text);
        throw InvalidArgument(text);
      }
    };
    SourceLocation loc = user_location();
    return GraphCall()([&] { return host_function(std::move(callback), inputs, dtypes, loc); });
  });
}

}  // namespace kiln::python
