// Graph <-> JSON. The reader rebuilds each node through Graph::add_node, so
// the op's own type inference re-validates its inputs and attrs, then runs
// Graph::verify; a file can only describe graphs that tracing could have made.
#include "io/graph_json.h"

#include <fmt/format.h>

#include <cstring>
#include <unordered_set>

#include "core/tensor_impl.h"
#include "ops/creation.h"

namespace kiln::io {

using graph::Graph;
using graph::Node;
using graph::Value;
using GraphPtr = std::shared_ptr<const Graph>;

std::string value_name(const Value& v) { return fmt::format("{}:{}", v.node->name, v.index); }

json tensor_to_json(const Tensor& t, std::string_view where) {
  if (!t.defined() || t.is_symbolic()) throw Internal(fmt::format("{}: not a concrete tensor", where));
  if (t.dtype() == DType::Resource)
    throw Unimplemented(fmt::format("{}: a resource tensor (a variable handle) cannot be saved as a value", where));
  json j = {{"dtype", dtype_name(t.dtype())}, {"shape", shape_to_json(t.shape())}};
  if (t.dtype() == DType::String) {
    json strings = json::array();
    for (const std::string& s : t.to_vector<std::string>()) strings.push_back(s);
    j["data"] = std::move(strings);
  } else {
    std::size_t bytes = static_cast<std::size_t>(t.size()) * dtype_size(t.dtype());
    j["data"] = base64_encode(std::string_view(static_cast<const char*>(core::raw_data(t)), bytes));
  }
  return j;
}

Tensor tensor_from_json(const json& j, const Where& where) {
  parse_object(j, where);
  DType dtype = parse_dtype(member(j, "dtype", where), Where(where, ": dtype"));
  if (dtype == DType::Resource) json_fail(where, "a resource tensor cannot be a saved value");
  Shape shape = parse_shape(member(j, "shape", where), Where(where, ": shape"), false);
  uint64_t n = checked_num_elements(shape, where);
  const json& data = member(j, "data", where);
  if (dtype == DType::String) {
    parse_array(data, Where(where, ": data"));
    if (data.size() != n) json_fail(where, fmt::format("shape {} needs {} strings, data has {}", shape.to_string(), n, data.size()));
    Tensor t = core::make_tensor(dtype, shape);
    std::string* out = core::data_of<std::string>(t);
    for (std::size_t i = 0; i < n; ++i) out[i] = parse_string(data[i], Where(where, ": data[", i, "]"));
    return t;
  }
  const Where data_where(where, ": data");
  std::string bytes = base64_decode(parse_string(data, data_where), data_where);
  if (bytes.size() / dtype_size(dtype) != n || bytes.size() % dtype_size(dtype) != 0)
    json_fail(where, fmt::format("{} {} needs {} bytes of data, got {}", dtype_name(dtype), shape.to_string(),
                                 n * dtype_size(dtype), bytes.size()));
  if (dtype == DType::Bool)
    for (std::size_t i = 0; i < bytes.size(); ++i)
      if (static_cast<unsigned char>(bytes[i]) > 1) json_fail(where, fmt::format("bool element {} is not 0 or 1", i));
  Tensor t = core::make_tensor(dtype, shape);
  if (!bytes.empty()) std::memcpy(core::raw_data(t), bytes.data(), bytes.size());
  return t;
}

// ---- writer -------------------------------------------------------------------

int GraphTableWriter::add(const Graph& g) {
  if (auto it = index_.find(&g); it != index_.end()) return it->second;
  json nodes = json::array();
  for (const auto& node : g.nodes()) {
    json n = {{"name", node->name}, {"op", node->op->name}};
    if (!node->inputs.empty()) {
      json inputs = json::array();
      for (const Value& v : node->inputs) inputs.push_back(value_name(v));
      n["inputs"] = std::move(inputs);
    }
    if (!node->control_inputs.empty()) {
      json control = json::array();
      for (const Node* c : node->control_inputs) control.push_back(c->name);
      n["control_inputs"] = std::move(control);
    }
    json attrs = json::object();
    for (const auto& a : node->attrs) {
      // Built only where it is used (errors, tensors), not for every attr.
      auto attr_where = [&] {
        return fmt::format("graph '{}': node '{}' ({}): attr {}", g.name(), node->name, node->op->name, a.name);
      };
      json v = std::visit(
          [&](const auto& x) -> json {
            using T = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<T, int64_t>) return {{"int", x}};
            else if constexpr (std::is_same_v<T, double>) {
              if (std::isnan(x)) return {{"float", "nan"}};
              if (std::isinf(x)) return {{"float", x > 0 ? "inf" : "-inf"}};
              return {{"float", x}};
            } else if constexpr (std::is_same_v<T, bool>) return {{"bool", x}};
            else if constexpr (std::is_same_v<T, std::string>) return {{"string", x}};
            else if constexpr (std::is_same_v<T, DType>) return {{"dtype", dtype_name(x)}};
            else if constexpr (std::is_same_v<T, Shape>) return {{"shape", shape_to_json(x)}};
            else if constexpr (std::is_same_v<T, std::vector<int64_t>>) return {{"ints", x}};
            else if constexpr (std::is_same_v<T, Tensor>) return {{"tensor", tensor_to_json(x, attr_where())}};
            else if constexpr (std::is_same_v<T, GraphPtr>) {
              if (!x) throw Internal(attr_where() + ": an empty graph");
              return {{"graph", add(*x)}};
            } else {
              throw Unimplemented(attr_where() +
                                  ": the node runs a C++ callback (kiln::host_function), which a saved model "
                                  "cannot hold; move the callback out of the saved function");
            }
          },
          a.value);
      attrs[std::string(a.name)] = std::move(v);
    }
    if (!attrs.empty()) n["attrs"] = std::move(attrs);
    json outputs = json::array();
    for (const auto& t : node->outputs) outputs.push_back({{"dtype", dtype_name(t.dtype)}, {"shape", shape_to_json(t.shape)}});
    n["outputs"] = std::move(outputs);
    nodes.push_back(std::move(n));
  }
  json params = json::array(), captures = json::array(), results = json::array();
  for (const Node* p : g.parameters()) params.push_back(p->name);
  for (const graph::Capture& c : g.captures()) captures.push_back(c.placeholder->name);
  for (const Value& v : g.results()) results.push_back(value_name(v));
  int index = static_cast<int>(table_.size());
  table_.push_back({{"name", g.name()}, {"nodes", std::move(nodes)}, {"parameters", std::move(params)},
                    {"captures", std::move(captures)}, {"results", std::move(results)}});
  index_.emplace(&g, index);
  return index;
}

// ---- reader ---------------------------------------------------------------------

GraphTableReader::GraphTableReader(const json& table, std::string what, GraphLimits limits)
    : what_(std::move(what)), limits_(limits) {
  parse_array(table, what_ + ": graphs");
  for (std::size_t i = 0; i < table.size(); ++i) {
    graphs_.push_back(read_graph(table[i], i));
  }
}

const std::shared_ptr<Graph>& GraphTableReader::at(const json& index, const Where& where) const {
  int64_t i = parse_int(index, where);
  if (i < 0 || i >= static_cast<int64_t>(graphs_.size()))
    json_fail(where, fmt::format("graph index {} is out of range (the table has {} graphs before this point)", i,
                                 graphs_.size()));
  return graphs_[static_cast<std::size_t>(i)];
}

namespace {

schema::AttrValue read_attr(const json& j, const Where& where, const GraphTableReader& table,
                            const std::function<void(std::size_t)>& on_graph) {
  parse_object(j, where);
  if (j.size() != 1) json_fail(where, "an attr is an object with one key naming its type");
  const std::string& type = j.begin().key();
  const json& v = j.begin().value();
  if (type == "int") return parse_int(v, where);
  if (type == "float") return parse_double(v, where);
  if (type == "bool") return parse_bool(v, where);
  if (type == "string") return parse_string(v, where);
  if (type == "dtype") return parse_dtype(v, where);
  if (type == "shape") return parse_shape(v, where, true);
  if (type == "ints") {
    parse_array(v, where);
    std::vector<int64_t> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out.push_back(parse_int(v[i], Where(where, "[", i, "]")));
    return out;
  }
  if (type == "tensor") return tensor_from_json(v, where);
  if (type == "graph") {
    const std::shared_ptr<Graph>& g = table.at(v, where);
    on_graph(static_cast<std::size_t>(v.get<int64_t>()));
    return GraphPtr(g);
  }
  json_fail(where, fmt::format("unknown attr type '{}' (int, float, bool, string, dtype, shape, ints, tensor, graph)", type));
}

std::vector<std::string> name_list(const json& j, const Where& where) {
  parse_array(j, where);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(parse_string(j[i], Where(where, "[", i, "]")));
  return out;
}

}  // namespace

std::shared_ptr<Graph> GraphTableReader::read_graph(const json& j, std::size_t index) {
  const Where what(what_);
  const Where numbered(what, ": graph ", index);
  parse_object(j, numbered);
  const std::string& name = parse_string(member(j, "name", numbered), Where(numbered, ": name"));
  const Where where(numbered, " ('", name, "')");
  auto g = std::make_shared<Graph>(name);
  const json& nodes = parse_array(member(j, "nodes", where), Where(where, ": nodes"));
  std::vector<std::string> params = name_list(member(j, "parameters", where), Where(where, ": parameters"));
  std::vector<std::string> captures = name_list(member(j, "captures", where), Where(where, ": captures"));
  std::unordered_set<std::string> param_set(params.begin(), params.end());
  std::unordered_set<std::string> capture_set(captures.begin(), captures.end());
  if (param_set.size() != params.size() || capture_set.size() != captures.size())
    json_fail(where, "a name appears twice among the parameters or the captures");

  std::unordered_map<std::string, Node*> by_name;
  int64_t expanded = static_cast<int64_t>(nodes.size());
  int depth = 1;
  auto on_graph = [&](std::size_t i) {
    expanded += expanded_[i];
    depth = std::max(depth, depth_[i] + 1);
    if (depth > limits_.max_depth)
      json_fail(where, fmt::format("graphs are nested more than {} deep", limits_.max_depth));
    if (expanded > limits_.max_expanded_nodes)
      json_fail(where, fmt::format("the graph with its nested graphs has more than {} nodes", limits_.max_expanded_nodes));
  };
  auto resolve = [&](const json& ref, const Where& w) -> Value {
    const std::string& text = parse_string(ref, w);
    std::size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon + 1 == text.size() || text.size() - colon > 10 ||
        text.find_first_not_of("0123456789", colon + 1) != std::string::npos)
      json_fail(w, fmt::format("'{}' is not a value name such as \"add:0\"", text));
    auto it = by_name.find(text.substr(0, colon));
    if (it == by_name.end())
      json_fail(w, fmt::format("'{}' names no node defined before this point", text));
    int k = std::stoi(text.substr(colon + 1));
    if (k >= static_cast<int>(it->second->outputs.size()))
      json_fail(w, fmt::format("'{}': node '{}' has {} outputs", text, it->first, it->second->outputs.size()));
    return Value{it->second, k};
  };

  const schema::OpRegistry& registry = schema::OpRegistry::global();
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const json& nj = nodes[k];
    const Where numbered_node(where, ": node ", k);
    parse_object(nj, numbered_node);
    const std::string& node_name = parse_string(member(nj, "name", numbered_node), Where(numbered_node, ": name"));
    if (node_name.empty() || node_name.size() > 256 || node_name.find(':') != std::string::npos)
      json_fail(numbered_node, "a node name is 1 to 256 characters without ':'");
    const Where named_node(where, ": node '", node_name, "'");
    if (by_name.count(node_name)) json_fail(named_node, "the name is used by an earlier node");
    const std::string& op_name = parse_string(member(nj, "op", named_node), Where(named_node, ": op"));
    const detail::OpDef* op = registry.find(op_name);
    if (!op) json_fail(named_node, fmt::format("unknown op '{}' (this build of Kiln has no such op)", op_name));
    if (op_name == "HostFunction")
      json_fail(named_node, "HostFunction runs a C++ callback, which a saved model cannot hold");
    const Where nwhere(named_node, " (", op_name, ")");

    schema::Attrs attrs;
    if (const json* aj = optional_member(nj, "attrs", nwhere)) {
      parse_object(*aj, Where(nwhere, ": attrs"));
      for (auto it = aj->begin(); it != aj->end(); ++it)
        attrs.set(schema::intern(it.key()),
                  read_attr(it.value(), Where(nwhere, ": attr ", it.key(), ""), *this, on_graph));
    }
    std::vector<Value> inputs;
    if (const json* ij = optional_member(nj, "inputs", nwhere)) {
      parse_array(*ij, Where(nwhere, ": inputs"));
      for (std::size_t i = 0; i < ij->size(); ++i) inputs.push_back(resolve((*ij)[i], Where(nwhere, ": input ", i)));
    }

    Node* node = nullptr;
    if (op == &ops::placeholder_op()) {
      if (!inputs.empty()) json_fail(nwhere, "a Placeholder has no inputs");
      const schema::AttrValue* dt = attrs.find("dtype");
      const schema::AttrValue* sh = attrs.find("shape");
      if (!dt || !std::holds_alternative<DType>(*dt) || !sh || !std::holds_alternative<Shape>(*sh))
        json_fail(nwhere, "a Placeholder needs a dtype attr and a shape attr");
      schema::TensorType type{std::get<DType>(*dt), std::get<Shape>(*sh)};
      if (param_set.count(node_name)) node = g->add_parameter(type, node_name);
      else if (capture_set.count(node_name)) node = g->add_capture(type, node_name);
      else json_fail(nwhere, "the Placeholder is neither a parameter nor a capture of its graph");
    } else {
      try {
        node = g->add_node(*op, std::span<const Value>(inputs.data(), inputs.size()), std::move(attrs),
                           SourceLocation(), node_name);
      } catch (const std::exception& e) {
        json_fail(nwhere, e.what());
      }
    }
    if (node->name != node_name) json_fail(nwhere, fmt::format("the name clashes with '{}'", node->name));
    if (const json* cj = optional_member(nj, "control_inputs", nwhere)) {
      parse_array(*cj, Where(nwhere, ": control_inputs"));
      for (std::size_t i = 0; i < cj->size(); ++i) {
        const std::string& c = parse_string((*cj)[i], Where(nwhere, ": control input ", i));
        auto it = by_name.find(c);
        if (it == by_name.end()) json_fail(nwhere, fmt::format("control input '{}' names no earlier node", c));
        node->control_inputs.push_back(it->second);
      }
    }
    const json& outs = parse_array(member(nj, "outputs", nwhere), Where(nwhere, ": outputs"));
    if (outs.size() != node->outputs.size())
      json_fail(nwhere, fmt::format("the file lists {} outputs but the op gives {}", outs.size(), node->outputs.size()));
    for (std::size_t i = 0; i < outs.size(); ++i) {
      const Where owhere(nwhere, ": output ", i);
      DType dtype = parse_dtype(member(outs[i], "dtype", owhere), Where(owhere, ": dtype"));
      Shape shape = parse_shape(member(outs[i], "shape", owhere), Where(owhere, ": shape"), true);
      const schema::TensorType& got = node->outputs[i];
      if (dtype != got.dtype || !shape.is_compatible_with(got.shape))
        json_fail(owhere, fmt::format("the file says {} {} but the op's type inference gives {} {}", dtype_name(dtype),
                                      shape.to_string(), dtype_name(got.dtype), got.shape.to_string()));
    }
    by_name.emplace(node_name, node);
  }

  auto names_of = [](const auto& nodes_or_captures, auto get) {
    std::vector<std::string> out;
    for (const auto& x : nodes_or_captures) out.push_back(get(x)->name);
    return out;
  };
  if (names_of(g->parameters(), [](const Node* n) { return n; }) != params)
    json_fail(where, "the parameters are not the graph's Placeholder nodes listed in node order");
  if (names_of(g->captures(), [](const graph::Capture& c) { return c.placeholder; }) != captures)
    json_fail(where, "the captures are not the graph's Placeholder nodes listed in node order");
  const json& results = parse_array(member(j, "results", where), Where(where, ": results"));
  for (std::size_t i = 0; i < results.size(); ++i)
    g->results().push_back(resolve(results[i], Where(where, ": result ", i)));
  try {
    g->verify(verified_);
  } catch (const Error& e) {
    json_fail(where, e.what());
  }
  total_expanded_ += expanded;
  if (total_expanded_ > limits_.max_expanded_nodes)
    json_fail(where, fmt::format("the graphs hold more than {} nodes in all (counting each use of a nested graph)",
                                 limits_.max_expanded_nodes));
  expanded_.push_back(expanded);
  depth_.push_back(depth);
  return g;
}

}  // namespace kiln::io
