// Graph -> text (Kiln's to_code) and Graph -> Graphviz DOT.
#include <fmt/format.h>

#include "graph/graph.h"
#include "ops/creation.h"
#include "runtime/format.h"

namespace kiln::graph {

namespace {

constexpr int64_t kMaxInlineElements = 8;

std::string type_text(const TensorType& t) {
  if (!t.shape.has_known_rank()) return fmt::format("{}[*]", dtype_name(t.dtype));
  std::string dims;
  for (int i = 0; i < t.shape.rank(); ++i) {
    if (i) dims += ",";
    dims += t.shape[i] < 0 ? std::string("?") : std::to_string(t.shape[i]);
  }
  return fmt::format("{}[{}]", dtype_name(t.dtype), dims);
}

std::string value_text(const Value& v) {
  return v.node->outputs.size() == 1 && v.index == 0 ? v.node->name
                                                      : fmt::format("{}:{}", v.node->name, v.index);
}

std::string attrs_text(const Attrs& attrs) {
  std::string s = " {";
  bool first = true;
  for (const auto& a : attrs) {
    // Nested graphs print below the node instead.
    if (std::holds_alternative<std::shared_ptr<const Graph>>(a.value)) continue;
    if (!first) s += ", ";
    first = false;
    // Small constants show their values, as tf.print would print them.
    const Tensor* t = std::get_if<Tensor>(&a.value);
    if (t && !t->is_symbolic() && t->size() <= kMaxInlineElements)
      s += fmt::format("{}={}", a.name, runtime::summarize_value(*t, kMaxInlineElements));
    else
      s += fmt::format("{}={}", a.name, schema::attr_value_to_string(a.value));
  }
  return first ? "" : s + "}";
}

std::string outputs_text(const Node& n) {
  std::vector<std::string> parts;
  for (const TensorType& t : n.outputs) parts.push_back(type_text(t));
  if (parts.empty()) return "()";
  if (parts.size() == 1) return parts[0];
  return fmt::format("({})", fmt::join(parts, ", "));
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// Each line of `text` indented by `indent`.
std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    out += indent + text.substr(pos, end - pos) + "\n";
    pos = end + 1;
  }
  return out;
}

}  // namespace

std::string Graph::to_string() const {
  std::vector<std::string> params, caps;
  for (const Node* p : parameters_) params.push_back(fmt::format("{}: {}", p->name, type_text(p->outputs[0])));
  for (const Capture& c : captures_)
    caps.push_back(fmt::format("{}: {}", c.placeholder->name, type_text(c.placeholder->outputs[0])));
  std::string s = fmt::format("graph {}({})", name_, fmt::join(params, ", "));
  if (!caps.empty()) s += fmt::format(" captures({})", fmt::join(caps, ", "));
  s += " {\n";
  for (const auto& node : nodes_) {
    const Node& n = *node;
    if (n.op == &ops::placeholder_op()) continue;
    std::vector<std::string> ins;
    for (const Value& v : n.inputs) ins.push_back(value_text(v));
    std::string line = fmt::format("  {} = {}({}){} : {}", n.name, n.op->name, fmt::join(ins, ", "),
                                   attrs_text(n.attrs), outputs_text(n));
    for (const Node* c : n.control_inputs) line += fmt::format(" ^{}", c->name);
    s += line + "\n";
    // Nested graphs (cond branches, loop bodies) print below their node.
    for (const auto& a : n.attrs) {
      const auto* g = std::get_if<std::shared_ptr<const Graph>>(&a.value);
      if (g && *g) s += indented(fmt::format("{}: {}", a.name, (*g)->to_string()), "    ");
    }
  }
  std::vector<std::string> res;
  for (const Value& v : results_) res.push_back(value_text(v));
  s += fmt::format("  return ({})\n}}\n", fmt::join(res, ", "));
  return s;
}

namespace {

// The nested graphs in a node's attrs (cond branches, loop bodies), by attr name.
std::vector<std::pair<std::string_view, const Graph*>> nested_graphs(const Node& n) {
  std::vector<std::pair<std::string_view, const Graph*>> out;
  for (const auto& a : n.attrs) {
    const auto* g = std::get_if<std::shared_ptr<const Graph>>(&a.value);
    if (g && *g) out.emplace_back(a.name, g->get());
  }
  return out;
}

// Writes `g`'s nodes and edges. Nested graphs become clusters below their
// node, their node ids prefixed with the path to them ("while/body/add") so
// that ids stay unique in the file. Returns the id of a node inside `g`
// (where an edge into its cluster can point).
std::string dot_graph(const Graph& g, const std::string& prefix, const std::string& indent, std::string& s) {
  auto id = [&](const std::string& name) { return fmt::format("\"{}\"", dot_escape(prefix + name)); };
  std::string anchor;
  for (const auto& node : g.nodes()) {
    const Node& n = *node;
    bool param = n.op == &ops::placeholder_op();
    if (anchor.empty()) anchor = id(n.name);
    s += fmt::format("{}{} [label=\"{}\\n{}\\n{}\"{}];\n", indent, id(n.name), dot_escape(n.name), n.op->name,
                     dot_escape(outputs_text(n)),
                     param ? ", shape=ellipse" : (n.is_stateful() ? ", style=filled, fillcolor=\"#ffe0b0\"" : ""));
    for (const Value& v : n.inputs) s += fmt::format("{}{} -> {};\n", indent, id(v.node->name), id(n.name));
    for (const Node* c : n.control_inputs)
      s += fmt::format("{}{} -> {} [style=dashed];\n", indent, id(c->name), id(n.name));
    for (const auto& [attr, sub] : nested_graphs(n)) {
      std::string sub_prefix = fmt::format("{}{}/{}/", prefix, n.name, attr);
      std::string cluster = dot_escape("cluster_" + sub_prefix);
      s += fmt::format("{}subgraph \"{}\" {{\n{}  label=\"{}: {}\";\n{}  style=dashed;\n", indent, cluster, indent,
                       dot_escape(n.name), attr, indent);
      std::string inner = dot_graph(*sub, sub_prefix, indent + "  ", s);
      s += indent + "}\n";
      s += fmt::format("{}{} -> {} [style=dotted, arrowhead=none, lhead=\"{}\"];\n", indent, id(n.name), inner,
                       cluster);
    }
  }
  const auto& results = g.results();
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::string r = id(fmt::format("result_{}", i));
    if (anchor.empty()) anchor = r;
    s += fmt::format("{}{} [shape=ellipse, label=\"result {}\"];\n", indent, r, i);
    s += fmt::format("{}{} -> {};\n", indent, id(results[i].node->name), r);
  }
  if (anchor.empty()) {  // an empty graph still needs a node for its cluster
    anchor = id("empty");
    s += fmt::format("{}{} [shape=plaintext, label=\"(empty)\"];\n", indent, anchor);
  }
  return anchor;
}

}  // namespace

std::string Graph::to_dot() const {
  std::string s = fmt::format("digraph \"{}\" {{\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n",
                              dot_escape(name_));
  bool nested = false;
  for (const auto& node : nodes_) nested |= !nested_graphs(*node).empty();
  if (nested) s += "  compound=true;\n";
  dot_graph(*this, "", "  ", s);
  return s + "}\n";
}

}  // namespace kiln::graph
