// The engine side of tf.Graph, tf.Operation and tf.gradients: a graph's nodes
// as Python reads them (a traced function's, or the graph being traced), a
// graph built outside kiln.function (`with tf.Graph().as_default():`), and
// the symbolic gradient of the graph being traced.
#include "bindings.h"
#include "core/tensor_impl.h"
#include "function/traced_graph.h"
#include "trace/tracing_context.h"

namespace kiln::python {

namespace {

using GraphPtr = std::shared_ptr<graph::Graph>;

std::string value_name(const graph::Value& v) {
  return v.node->outputs.size() == 1 && v.index == 0 ? v.node->name : v.node->name + ":" + std::to_string(v.index);
}

trace::TracingContext* current_trace() { return dynamic_cast<trace::TracingContext*>(runtime::thread_state.handler); }

// A graph held for Python: finished (a concrete function's) or still growing
// (the graph being traced, a tf.Graph being built).
struct GraphView {
  GraphPtr graph;

  bool is_current() const {
    trace::TracingContext* ctx = current_trace();
    return ctx && &ctx->graph() == graph.get();
  }
  // (name, op, input names, outputs as (dims, dtype, rank), control input names) per node.
  py::list nodes() const {
    py::list out;
    for (const auto& n : graph->nodes()) {
      py::list inputs, outputs, control;
      for (const graph::Value& v : n->inputs) inputs.append(value_name(v));
      for (const schema::TensorType& t : n->outputs)
        outputs.append(py::make_tuple(t.shape.to_vector(), static_cast<int>(t.dtype), t.shape.rank()));
      for (const graph::Node* c : n->control_inputs) control.append(c->name);
      out.append(py::make_tuple(n->name, std::string(n->op->name), inputs, outputs, control));
    }
    return out;
  }
  const graph::Node* find(const std::string& name) const {
    for (const auto& n : graph->nodes())
      if (n->name == name) return n.get();
    throw py::key_error("The name '" + name + "' refers to an Operation not in the graph.");
  }
  // A symbolic tensor of the graph being traced: one to compute with.
  Tensor symbolic(const std::string& node, int index) const {
    trace::TracingContext* ctx = current_trace();
    if (!ctx || &ctx->graph() != graph.get())
      throw py::value_error("a tensor of graph '" + graph->name() + "' is usable only while that graph is built");
    const graph::Node* n = find(node);
    if (index < 0 || index >= static_cast<int>(n->outputs.size()))
      throw py::value_error("node '" + node + "' has no output " + std::to_string(index));
    return ctx->symbolic({const_cast<graph::Node*>(n), index});
  }
  py::list names(const std::vector<graph::Value>& values) const {
    py::list out;
    for (const graph::Value& v : values) out.append(value_name(v));
    return out;
  }
};

// `with tf.Graph().as_default():` ops append nodes to this graph instead of
// running, as they do while kiln.function traces.
class GraphBuilder {
 public:
  GraphBuilder() : graph_(std::make_shared<graph::Graph>("graph")), ctx_(graph_) {}
  void enter() {
    saved_.push_back(runtime::thread_state.handler);
    runtime::thread_state.handler = &ctx_;
  }
  void exit() {
    if (saved_.empty()) return;
    runtime::thread_state.handler = saved_.back();
    saved_.pop_back();
  }
  GraphView view() const { return GraphView{graph_}; }

 private:
  GraphPtr graph_;
  trace::TracingContext ctx_;
  std::vector<detail::DispatchHandler*> saved_;
};

}  // namespace

void bind_graph(py::module_& m) {
  py::class_<GraphView>(m, "GraphView")
      .def_property_readonly("name", [](const GraphView& g) { return g.graph->name(); })
      .def("nodes", &GraphView::nodes)
      .def("num_nodes", [](const GraphView& g) { return g.graph->num_nodes(); })
      .def("is_current", &GraphView::is_current)
      .def("symbolic", &GraphView::symbolic)
      .def("parameters", [](const GraphView& g) {
        py::list out;
        for (const graph::Node* p : g.graph->parameters()) out.append(p->name);
        return out;
      })
      .def("captures", [](const GraphView& g) {
        py::list out;
        for (const graph::Capture& c : g.graph->captures()) out.append(c.placeholder->name);
        return out;
      })
      .def("results", [](const GraphView& g) { return g.names(g.graph->results()); })
      .def("to_string", [](const GraphView& g) { return g.graph->to_string(); })
      .def("to_dot", [](const GraphView& g) { return g.graph->to_dot(); })
      .def("same", [](const GraphView& a, const GraphView& b) { return a.graph == b.graph; })
      .def("key", [](const GraphView& g) { return reinterpret_cast<std::uintptr_t>(g.graph.get()); });

  py::class_<GraphBuilder>(m, "GraphBuilder")
      .def(py::init<>())
      .def("enter", &GraphBuilder::enter)
      .def("exit", &GraphBuilder::exit)
      .def("view", &GraphBuilder::view);

  m.def("concrete_graph", [](const ConcreteFunction& f) { return GraphView{f.impl()->graph}; });
  // The graph being traced on this thread, or None eagerly.
  m.def("current_graph", []() -> py::object {
    trace::TracingContext* ctx = current_trace();
    if (!ctx) return py::none();
    return py::cast(GraphView{ctx->graph_ptr()});
  });
  // (graph, node name, output index) of a symbolic tensor.
  m.def("symbolic_source", [](const Tensor& t) -> py::object {
    if (!t.is_symbolic() || !t.impl()->node) return py::none();
    auto g = std::static_pointer_cast<graph::Graph>(t.impl()->graph_owner);
    return py::make_tuple(GraphView{g}, t.impl()->node->name, t.impl()->output_index);
  });

  // tf.gradients: flat ys, xs (tensors or variables), grad_ys (None entries
  // are ones), stop_gradients; an x the ys do not reach gives None.
  m.def("gradients", [](const std::vector<Tensor>& ys, py::list xs, py::list grad_ys, const std::vector<Tensor>& stop) {
    std::vector<GradientSource> sources;
    for (py::handle x : xs) {
      if (py::isinstance<Variable>(x)) sources.emplace_back(py::cast<const Variable&>(x));
      else sources.emplace_back(py::cast<const Tensor&>(x));
    }
    std::vector<Tensor> seeds;
    for (py::handle g : grad_ys) seeds.push_back(g.is_none() ? Tensor() : to_tensor(g));
    std::vector<Tensor> grads = gradients(ys, sources, seeds, stop);
    py::list out;
    for (Tensor& g : grads) out.append(g.defined() ? py::cast(std::move(g)) : py::none());
    return out;
  });
}

}  // namespace kiln::python
