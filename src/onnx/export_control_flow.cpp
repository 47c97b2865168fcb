// Nested graphs -> ONNX: If branches and Loop bodies as subgraphs; a
// FusedElementwise body or a Call's callee inlined. Kiln's nested graphs are
// fed by their op's inputs (parameters, then captures); ONNX's subgraphs see
// the enclosing graph's names, so each feed is bound to its outer name.
#include <fmt/format.h>

#include "onnx/export_ops.h"

namespace kiln::onnx {

namespace {

// The placeholders a nested graph is fed through: parameters, then captures.
std::vector<graph::Node*> feeds_of(const graph::Graph& g) {
  std::vector<graph::Node*> feeds = g.parameters();
  for (const graph::Capture& c : g.captures()) feeds.push_back(c.placeholder);
  return feeds;
}

void bind_feeds(GraphEmitter& e, const graph::Graph& g, const std::vector<std::string>& names) {
  std::vector<graph::Node*> feeds = feeds_of(g);
  if (feeds.size() != names.size())
    throw Internal(fmt::format("kiln::onnx::export_: graph '{}' has {} feeds for {} inputs", g.name(), feeds.size(),
                               names.size()));
  for (std::size_t i = 0; i < feeds.size(); ++i) e.bind({feeds[i], 0}, names[i]);
}

// Names the results of `g` (emitted by `e`) as outputs of e's graph.
void add_outputs(GraphEmitter& e, const graph::Graph& g, std::string_view hint) {
  for (const graph::Value& r : g.results()) {
    std::string name = e.names().fresh(hint);
    e.add_node("Identity", {e.name_of(r)}, {name});
    pb::ValueInfoProto& vi = *e.proto().add_output();
    vi.set_name(name);
    set_value_type(g.type_of(r), name + "_dim", vi, fmt::format("a result of graph '{}'", g.name()));
  }
}

std::vector<std::string> input_names(const NodeExport& x, int first) {
  std::vector<std::string> names;
  for (int i = first; i < x.num_inputs(); ++i) names.push_back(x.in(i));
  return names;
}

void if_node(const NodeExport& x) {
  std::vector<std::string> outs;
  for (std::size_t i = 0; i < x.node.outputs.size(); ++i) outs.push_back(x.out(static_cast<int>(i)));
  pb::NodeProto& n = x.e.add_node("If", {x.in(0)}, outs);
  for (const char* branch : {"then_branch", "else_branch"}) {
    const graph::Graph& g = *x.attrs().get<std::shared_ptr<const graph::Graph>>(branch);
    pb::GraphProto& sub = set_graph_attr(n, branch);
    sub.set_name(x.e.names().fresh(fmt::format("{}_{}", x.node.name, branch)));
    GraphEmitter e(x.e.names(), sub);
    bind_feeds(e, g, input_names(x, 1));
    e.emit_nodes(g);
    add_outputs(e, g, fmt::format("{}_out", branch));
  }
}

// While(vars..., captures...) {cond, body} as Loop: the cond runs once before
// the loop for the first test, and at the end of each body for the next.
void while_node(const NodeExport& x) {
  const graph::Graph& cond = *x.attrs().get<std::shared_ptr<const graph::Graph>>("cond");
  const graph::Graph& body = *x.attrs().get<std::shared_ptr<const graph::Graph>>("body");
  const std::size_t num_vars = x.node.outputs.size();
  std::vector<std::string> feeds = input_names(x, 0);

  GraphEmitter first(x.e.names(), x.e.proto());
  bind_feeds(first, cond, feeds);
  first.emit_nodes(cond);
  std::string keep_going = first.name_of(cond.results()[0]);

  std::vector<std::string> loop_inputs{"", keep_going}, outs;
  for (std::size_t i = 0; i < num_vars; ++i) loop_inputs.push_back(feeds[i]);
  for (std::size_t i = 0; i < num_vars; ++i) outs.push_back(x.out(static_cast<int>(i)));
  pb::NodeProto& n = x.e.add_node("Loop", loop_inputs, outs);
  pb::GraphProto& sub = set_graph_attr(n, "body");
  sub.set_name(x.e.names().fresh(x.node.name + "_body"));
  GraphEmitter e(x.e.names(), sub);
  auto add_input = [&](const std::string& name, const schema::TensorType& type) {
    pb::ValueInfoProto& vi = *sub.add_input();
    vi.set_name(name);
    set_value_type(type, name + "_dim", vi, fmt::format("loop variable '{}'", name));
  };
  add_input(x.e.names().fresh("iteration"), {DType::Int64, Shape{}});
  add_input(x.e.names().fresh("cond_in"), {DType::Bool, Shape{}});
  std::vector<std::string> body_feeds = feeds;
  for (std::size_t i = 0; i < num_vars; ++i) {
    body_feeds[i] = x.e.names().fresh(fmt::format("{}_var{}", x.node.name, i));
    add_input(body_feeds[i], body.parameters()[i]->outputs[0]);
  }
  bind_feeds(e, body, body_feeds);
  e.emit_nodes(body);
  std::vector<std::string> next = body_feeds;
  for (std::size_t i = 0; i < num_vars; ++i) next[i] = e.name_of(body.results()[i]);
  GraphEmitter test(x.e.names(), sub);
  bind_feeds(test, cond, next);
  test.emit_nodes(cond);
  std::string cond_out = x.e.names().fresh("cond_out");
  e.add_node("Identity", {test.name_of(cond.results()[0])}, {cond_out});
  pb::ValueInfoProto& vi = *sub.add_output();
  vi.set_name(cond_out);
  set_value_type({DType::Bool, Shape{}}, "", vi, "the loop condition");
  for (std::size_t i = 0; i < num_vars; ++i) {
    std::string name = x.e.names().fresh(fmt::format("{}_next{}", x.node.name, i));
    e.add_node("Identity", {next[i]}, {name});
    pb::ValueInfoProto& out = *sub.add_output();
    out.set_name(name);
    set_value_type(body.type_of(body.results()[i]), name + "_dim", out, fmt::format("loop variable {}", i));
  }
}

void fused_elementwise(const NodeExport& x) {
  export_inline(x, *x.attrs().get<std::shared_ptr<const graph::Graph>>("body"));
}

void call(const NodeExport& x) { export_inline(x, *x.attrs().get<std::shared_ptr<const graph::Graph>>("f")); }

}  // namespace

void export_inline(const NodeExport& x, const graph::Graph& body) {
  GraphEmitter inner(x.e.names(), x.e.proto());
  bind_feeds(inner, body, input_names(x, 0));
  inner.emit_nodes(body);
  for (std::size_t i = 0; i < body.results().size(); ++i)
    x.e.add_node("Identity", {inner.name_of(body.results()[i])}, {x.out(static_cast<int>(i))});
}

void add_control_flow_exports(ExportTable& t) {
  t["If"] = if_node, t["StatefulIf"] = if_node, t["While"] = while_node, t["StatefulWhile"] = while_node;
  t["FusedElementwise"] = fused_elementwise, t["Call"] = call, t["StatefulCall"] = call;
}

ExportFn export_fn(std::string_view op_name) {
  static const ExportTable table = [] {
    ExportTable t;
    add_math_exports(t);
    add_array_exports(t);
    add_nn_exports(t);
    add_control_flow_exports(t);
    return t;
  }();
  auto it = table.find(op_name);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace kiln::onnx
