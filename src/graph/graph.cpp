#include "graph/graph.h"

#include <fmt/format.h>

#include <cctype>
#include <unordered_set>

#include "ops/creation.h"
#include "ops/known_ops.h"

namespace kiln::graph {

const Tensor* const_value(const Node& n) {
  if (n.op != &ops::const_op_def()) return nullptr;
  return &n.attrs.get<Tensor>("value");
}

std::string default_node_name(std::string_view op_name) {
  std::string out;
  for (std::size_t i = 0; i < op_name.size(); ++i) {
    char c = op_name[i];
    if (std::isupper(static_cast<unsigned char>(c))) {
      bool boundary = i > 0 && (std::islower(static_cast<unsigned char>(op_name[i - 1])) ||
                                (i + 1 < op_name.size() &&
                                 std::islower(static_cast<unsigned char>(op_name[i + 1])) &&
                                 std::isupper(static_cast<unsigned char>(op_name[i - 1]))));
      if (boundary) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out;
}


namespace {
// Symbolic tensors print as Tensor("add:0", ...): their node's name.
std::string symbolic_name(const detail::TensorImpl& impl) {
  return fmt::format("{}:{}", impl.node->name, impl.output_index);
}
const bool symbolic_names_installed = (core::set_symbolic_name_fn(&symbolic_name), true);
}  // namespace

std::string Graph::unique_name(std::string_view base) {
  std::string name(base);
  auto [it, fresh] = name_counts_.try_emplace(name, 0);
  if (fresh) return name;
  // add, add_1, add_2, ...; skip names a user hint already took.
  while (true) {
    std::string candidate = fmt::format("{}_{}", name, ++it->second);
    if (name_counts_.try_emplace(candidate, 0).second) return candidate;
  }
}

Node* Graph::append(std::unique_ptr<Node> node) {
  node->id = static_cast<int>(nodes_.size());
  Node* raw = node.get();
  nodes_.push_back(std::move(node));
  if (raw->is_stateful()) stateful_.push_back(raw);
  return raw;
}

Node* Graph::add_node(const OpDef& op, std::span<const Value> inputs, Attrs attrs,
                      const SourceLocation& loc, std::string_view name_hint) {
  detail::SmallVector<TensorType, 4> types;
  for (const Value& v : inputs) types.push_back(type_of(v));
  schema::InferContext ic(op, std::span<const TensorType>(types.data(), types.size()), attrs);
  op.infer(ic);
  auto& outs = ic.outputs();
  return add_node_typed(op, inputs, std::move(attrs),
                        std::span<const TensorType>(outs.data(), outs.size()), loc, name_hint);
}

Node* Graph::add_node_typed(const OpDef& op, std::span<const Value> inputs, Attrs attrs,
                            std::span<const TensorType> outputs, const SourceLocation& loc,
                            std::string_view name_hint) {
  return append(new_node(op, inputs, std::move(attrs), outputs, loc, name_hint));
}

std::unique_ptr<Node> Graph::new_node(const OpDef& op, std::span<const Value> inputs, Attrs attrs,
                                      std::span<const TensorType> outputs, const SourceLocation& loc,
                                      std::string_view name_hint) {
  auto node = std::make_unique<Node>();
  node->op = &op;
  node->name = unique_name(name_hint.empty() ? default_node_name(op.name) : name_hint);
  for (const Value& v : inputs) node->inputs.push_back(v);
  node->attrs = std::move(attrs);
  for (const TensorType& t : outputs) node->outputs.push_back(t);
  node->location = loc;
  return node;
}

std::vector<char> Graph::live_nodes() const {
  std::vector<char> live(nodes_.size(), 0);
  std::vector<const Node*> work;
  auto mark = [&](const Node* n) {
    if (!live[n->id]) {
      live[n->id] = 1;
      work.push_back(n);
    }
  };
  for (const Value& v : results_) mark(v.node);
  for (const Node* n : stateful_) mark(n);
  for (const auto& n : nodes_)
    if (n->op == &ops::placeholder_op()) mark(n.get());
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    for (const Value& v : n->inputs) mark(v.node);
    for (const Node* c : n->control_inputs) mark(c);
  }
  return live;
}

void Graph::set_nodes(std::vector<std::unique_ptr<Node>> nodes) {
  nodes_ = std::move(nodes);
  stateful_.clear();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    nodes_[i]->id = static_cast<int>(i);
    if (nodes_[i]->is_stateful()) stateful_.push_back(nodes_[i].get());
  }
}

std::shared_ptr<Graph> Graph::clone(std::string name) const {
  auto g = std::make_shared<Graph>(std::move(name));
  std::unordered_map<const Node*, Node*> map;
  for (const auto& n : nodes_) {
    auto copy = std::make_unique<Node>(*n);
    for (Value& v : copy->inputs) v.node = map.at(v.node);
    for (Node*& c : copy->control_inputs) c = map.at(c);
    map.emplace(n.get(), copy.get());
    g->append(std::move(copy));
  }
  for (const Node* p : parameters_) g->parameters_.push_back(map.at(p));
  for (const Capture& c : captures_) g->captures_.push_back({c.outer, map.at(c.placeholder)});
  for (const Value& v : results_) g->results_.push_back({map.at(v.node), v.index});
  g->name_counts_ = name_counts_;
  return g;
}

const void* Graph::compiled(CompileFn build) const {
  std::call_once(compiled_once_, [&] {
    compiled_ = build(*this);
    compiled_by_ = build;
  });
  if (compiled_by_ != build)
    throw Internal(fmt::format("graph '{}' was compiled by another builder", name_));
  return compiled_.get();
}

namespace {
// The node of a parameter or a capture: a Placeholder of `type`.
Node* add_placeholder(Graph& g, const TensorType& type, std::string_view name) {
  Attrs attrs{{"dtype", type.dtype}, {"shape", type.shape}};
  TensorType out[] = {type};
  return g.add_node_typed(ops::placeholder_op(), {}, std::move(attrs), out, SourceLocation(), name);
}
}  // namespace

Node* Graph::add_parameter(const TensorType& type, std::string_view name) {
  Node* n = add_placeholder(*this, type, name);
  parameters_.push_back(n);
  return n;
}

Node* Graph::add_capture(const Tensor& outer, std::string_view name) {
  Node* n = add_placeholder(*this, {outer.dtype(), outer.shape()}, name);
  captures_.push_back({outer, n});
  return n;
}

Node* Graph::add_capture(const TensorType& type, std::string_view name) {
  Node* n = add_placeholder(*this, type, name);
  captures_.push_back({Tensor(), n});
  return n;
}

void Graph::verify() const {
  std::unordered_set<const Graph*> verified;
  verify(verified);
}

void Graph::verify(std::unordered_set<const Graph*>& verified) const {
  if (!verified.insert(this).second) return;
  std::unordered_set<const Node*> seen;
  std::unordered_set<std::string> names;
  auto bad = [&](const Node* n, const std::string& what) {
    throw Internal(fmt::format("graph '{}' is malformed at node '{}': {}", name_,
                               n ? n->name : std::string("<result>"), what));
  };
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node* n = nodes_[i].get();
    if (n->id != static_cast<int>(i)) bad(n, "its id does not match its position");
    if (!names.insert(n->name).second) bad(n, "its name is not unique");
    for (const Value& v : n->inputs) {
      if (!seen.count(v.node)) bad(n, "an input is not defined before it");
      if (v.index < 0 || v.index >= static_cast<int>(v.node->outputs.size()))
        bad(n, fmt::format("input {}:{} has no such output", v.node->name, v.index));
    }
    for (const Node* c : n->control_inputs)
      if (!seen.count(c)) bad(n, "a control input is not defined before it");
    if (n->op != &ops::placeholder_op()) {
      detail::SmallVector<TensorType, 4> types;
      for (const Value& v : n->inputs) types.push_back(type_of(v));
      schema::InferContext ic(*n->op, std::span<const TensorType>(types.data(), types.size()), n->attrs);
      n->op->infer(ic);
      if (ic.outputs().size() != n->outputs.size()) bad(n, "its output count disagrees with inference");
      for (std::size_t k = 0; k < n->outputs.size(); ++k) {
        const TensorType& want = ic.outputs()[k];
        const TensorType& got = n->outputs[k];
        if (want.dtype != got.dtype || !want.shape.is_compatible_with(got.shape))
          bad(n, fmt::format("output {} is {}{} but inference gives {}{}", k, dtype_name(got.dtype),
                             got.shape.to_string(), dtype_name(want.dtype), want.shape.to_string()));
      }
    }
    // Nested graphs (cond branches, loop bodies) must hold the same invariants.
    for (const auto& a : n->attrs) {
      const auto* g = std::get_if<std::shared_ptr<const Graph>>(&a.value);
      if (!g || !*g) continue;
      try {
        (*g)->verify(verified);
      } catch (const Internal& e) {
        bad(n, fmt::format("attr {}: {}", a.name, e.what()));
      }
    }
    seen.insert(n);
  }
  for (const Value& v : results_)
    if (!seen.count(v.node)) bad(nullptr, "a result is not a node of this graph");
}

}  // namespace kiln::graph
