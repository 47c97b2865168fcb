// saved_model::load: reads and validates the JSON document and the
// safetensors file, rebuilds the graphs (each node through its op's type
// inference), restores the variables and wires them into the functions.
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "core/error_context.h"
#include "function/traced_graph.h"
#include "io/file_util.h"
#include "io/graph_json.h"
#include "io/printable.h"
#include "io/safetensors.h"
#include "io/saved_model_format.h"
#include "passes/passes.h"

namespace kiln::saved_model {

namespace {
constexpr uint64_t kMaxDocumentBytes = uint64_t{1} << 30;
constexpr uint64_t kMaxVariablesBytes = uint64_t{1} << 36;

using io::json;
using io::json_fail;
using io::Where;

// `t` is concrete, so its rank is known and is_compatible_with compares the ranks.
bool fits(const Tensor& t, DType dtype, const Shape& shape) {
  return t.dtype() == dtype && shape.is_compatible_with(t.shape());
}

std::string type_text(DType dtype, const Shape& shape) {
  return fmt::format("{} {}", dtype_name(dtype), shape.to_string());
}
}  // namespace

// ---- the loaded objects -----------------------------------------------------------

LoadedObject::LoadedObject() = default;
LoadedObject::~LoadedObject() = default;
LoadedObject::LoadedObject(const LoadedObject&) = default;
LoadedObject::LoadedObject(LoadedObject&&) noexcept = default;
LoadedObject& LoadedObject::operator=(const LoadedObject&) = default;
LoadedObject& LoadedObject::operator=(LoadedObject&&) noexcept = default;

namespace {
// Runs a loaded graph; its errors name nodes (and may quote values) from the
// file, so they are made printable.
kiln::detail::ResultLeaves run_printable(const ConcreteFunction& f, const std::vector<Tensor>& args) {
  try {
    return f.impl()->call(std::span<const Tensor>(args.data(), args.size()));
  } catch (...) {
    kiln::core::rethrow_edited([](std::string_view message) { return io::printable(message, true); });
  }
}
}  // namespace

LoadedSignature::LoadedSignature(ConcreteFunction function, std::vector<TensorInfo> inputs,
                                 std::vector<TensorInfo> outputs)
    : function_(std::move(function)), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

std::map<std::string, Tensor> LoadedSignature::operator()(const std::map<std::string, Tensor>& inputs) const {
  std::vector<Tensor> args;
  for (const TensorInfo& in : inputs_) {
    auto it = inputs.find(in.name);
    if (it == inputs.end() || !it->second.defined())
      throw InvalidArgument(io::printable(fmt::format("signature of {}: input '{}' ({}) is missing",
                                                      function_.name(), in.name, type_text(in.dtype, in.shape))));
    if (it->second.is_symbolic() || !fits(it->second, in.dtype, in.shape))
      throw InvalidArgument(io::printable(fmt::format("signature of {}: input '{}' must be a {} tensor, got {}",
                                                      function_.name(), in.name, type_text(in.dtype, in.shape),
                                                      type_text(it->second.dtype(), it->second.shape()))));
    args.push_back(it->second);
  }
  for (const auto& [name, t] : inputs) {
    bool known = false;
    for (const TensorInfo& in : inputs_) known = known || in.name == name;
    if (!known) {
      std::vector<std::string> names;
      for (const TensorInfo& in : inputs_) names.push_back(in.name);
      throw InvalidArgument(io::printable(fmt::format("signature of {}: it has no input named '{}' (inputs: {})",
                                                      function_.name(), name, fmt::join(names, ", "))));
    }
  }
  kiln::detail::ResultLeaves out = run_printable(function_, args);
  std::map<std::string, Tensor> named;
  for (std::size_t i = 0; i < out.size() && i < outputs_.size(); ++i) named.emplace(outputs_[i].name, std::move(out[i]));
  return named;
}

std::map<std::string, Tensor> LoadedSignature::operator()(const std::map<std::string, Tensor>& inputs,
                                                          const Cancellation& cancellation) const {
  CancellationScope scope(cancellation);
  return (*this)(inputs);
}

LoadedFunction::LoadedFunction(std::string name, std::vector<ConcreteFunction> traces)
    : name_(std::move(name)), traces_(std::move(traces)) {}

Outputs LoadedFunction::call(const std::vector<Tensor>& args) const {
  for (const ConcreteFunction& f : traces_) {
    const auto& params = f.impl()->graph->parameters();
    if (params.size() != args.size()) continue;
    bool ok = true;
    for (std::size_t i = 0; i < args.size() && ok; ++i)
      ok = args[i].defined() && !args[i].is_symbolic() &&
           fits(args[i], params[i]->outputs[0].dtype, params[i]->outputs[0].shape);
    if (ok) return Outputs(run_printable(f, args));
  }
  std::vector<std::string> got, options;
  for (const Tensor& t : args) got.push_back(t.defined() ? type_text(t.dtype(), t.shape()) : "null");
  for (const ConcreteFunction& f : traces_) options.push_back("  " + f.to_string());
  throw InvalidArgument(io::printable(fmt::format("loaded function '{}': no saved trace takes ({}); it was saved for:\n{}",
                                                  name_, fmt::join(got, ", "), fmt::join(options, "\n")),
                                      /*keep_newlines=*/true));
}

namespace {
// NotFound for `name`, listing the names `items` (pairs or a map) holds.
template <class Items>
[[noreturn]] void not_found(const Items& items, const std::string& name, const char* what) {
  std::vector<std::string> names;
  for (const auto& [n, v] : items) names.push_back(n);
  throw NotFound(io::printable(fmt::format("saved model: no {} named '{}' (there are: {})", what, name,
                                           names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", ")))));
}

template <class T>
const T& find_named(const std::vector<std::pair<std::string, T>>& items, const std::string& name, const char* what) {
  for (const auto& [n, v] : items)
    if (n == name) return v;
  not_found(items, name, what);
}
}  // namespace

const LoadedFunction& LoadedObject::function(const std::string& name) const {
  return find_named(functions_, name, "function");
}
const Variable& LoadedObject::variable(const std::string& name) const { return find_named(variables_, name, "variable"); }
const LoadedObject& LoadedObject::child(const std::string& name) const { return find_named(children_, name, "child object"); }

std::vector<Variable> LoadedObject::variables() const {
  std::vector<Variable> out;
  std::unordered_set<const void*> seen;
  // Depth first, own variables before the children's.
  std::function<void(const LoadedObject&)> walk = [&](const LoadedObject& o) {
    for (const auto& [n, v] : o.variables_)
      if (seen.insert(v.state().get()).second) out.push_back(v);
    for (const auto& [n, c] : o.children_) walk(c);
  };
  walk(*this);
  return out;
}

const LoadedSignature& Loaded::signature(const std::string& name) const {
  auto it = signatures_.find(name);
  if (it != signatures_.end()) return it->second;
  not_found(signatures_, name, "signature");
}

// ---- the reader ------------------------------------------------------------------

struct LoadedBuilder {
  std::string what;
  std::unordered_map<std::string, Tensor> tensors;
  std::unordered_map<std::string, Variable> variables;
  std::vector<ConcreteFunction> functions;

  void read_variables(const json& list) {
    const Where top(what);
    const Where where(top, ": variables");
    io::parse_array(list, where);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Where numbered(where, "[", i, "]");
      const json& v = io::parse_object(list[i], numbered);
      const std::string& key = io::parse_string(io::member(v, "key", numbered), Where(numbered, ": key"));
      const Where w(top, ": variable '", key, "'");
      const std::string& name = io::parse_string(io::member(v, "name", w), Where(w, ": name"));
      DType dtype = io::parse_dtype(io::member(v, "dtype", w), Where(w, ": dtype"));
      Shape shape = io::parse_shape(io::member(v, "shape", w), Where(w, ": shape"), false);
      bool trainable = io::parse_bool(io::member(v, "trainable", w), Where(w, ": trainable"));
      const Tensor& t = tensor(key, w);
      if (t.dtype() != dtype || t.shape() != shape)
        json_fail(w, fmt::format("the document says {} but {} holds {}", type_text(dtype, shape), io::kVariablesFile,
                                 type_text(t.dtype(), t.shape())));
      if (variables.count(key)) json_fail(w, "the key is used by an earlier variable");
      variables.emplace(key, Variable(t, VariableOptions{.name = name, .trainable = trainable}));
    }
  }

  // The tensor `key` of variables.safetensors.
  const Tensor& tensor(const std::string& key, const Where& where) const {
    auto it = tensors.find(key);
    if (it == tensors.end()) json_fail(where, fmt::format("{} holds no tensor named '{}'", io::kVariablesFile, key));
    return it->second;
  }

  const Variable& variable(const json& key, const Where& where) {
    const std::string& k = io::parse_string(key, where);
    auto it = variables.find(k);
    if (it == variables.end()) json_fail(where, fmt::format("no variable has key '{}'", k));
    return it->second;
  }

  void read_functions(const json& list, const io::GraphTableReader& graphs) {
    const Where top(what);
    const Where where(top, ": functions");
    io::parse_array(list, where);
    std::unordered_set<const graph::Graph*> used;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Where numbered(where, "[", i, "]");
      const json& f = io::parse_object(list[i], numbered);
      const std::string& name = io::parse_string(io::member(f, "name", numbered), Where(numbered, ": name"));
      const Where function_i(top, ": function ", i);
      const Where w(function_i, " ('", name, "')");
      const std::shared_ptr<graph::Graph>& g = graphs.at(io::member(f, "graph", w), Where(w, ": graph"));
      if (!used.insert(g.get()).second) json_fail(w, "its graph is the graph of an earlier function");
      const json& caps = io::parse_array(io::member(f, "captures", w), Where(w, ": captures"));
      if (caps.size() != g->captures().size())
        json_fail(w, fmt::format("it lists {} captures but its graph has {}", caps.size(), g->captures().size()));
      for (std::size_t k = 0; k < caps.size(); ++k) {
        const Where cw(w, ": capture ", k);
        const kiln::schema::TensorType& want = g->captures()[k].placeholder->outputs[0];
        io::parse_object(caps[k], cw);
        if (caps[k].size() != 1) json_fail(cw, "a capture is {\"variable\": key}, {\"constant\": key} or {\"value\": tensor}");
        const std::string& kind = caps[k].begin().key();
        const json& value = caps[k].begin().value();
        Tensor source;
        if (kind == "variable") {
          source = variable(value, cw).handle();
        } else if (kind == "constant") {
          source = tensor(io::parse_string(value, cw), cw);
        } else if (kind == "value") {
          source = io::tensor_from_json(value, cw);
        } else {
          json_fail(cw, fmt::format("unknown capture kind '{}'", kind));
        }
        if (!fits(source, want.dtype, want.shape))
          json_fail(cw, fmt::format("the graph expects {} but the capture is {}", type_text(want.dtype, want.shape),
                                    type_text(source.dtype(), source.shape())));
        g->set_capture_source(k, std::move(source));
      }
      auto impl = std::make_shared<kiln::detail::TracedGraph>();
      impl->name = name;
      impl->graph = g;
      kiln::detail::Flattener key(/*specs_allowed=*/true);
      for (const graph::Node* p : g->parameters()) {
        if (p->outputs[0].dtype == DType::Resource)
          json_fail(w, fmt::format("parameter '{}' is a resource; saved functions take tensors", p->name));
        key.spec(TensorSpec(p->outputs[0].shape, p->outputs[0].dtype));
      }
      impl->key = std::move(key.key);
      try {
        // The file holds the graph as traced; the plan runs it optimized, as
        // a freshly traced function does.
        impl->plan = std::make_unique<exec::Plan>(passes::optimize(*g, passes::PassOptions::from_env()));
      } catch (const std::exception& e) {
        json_fail(w, e.what());
      }
      functions.emplace_back(std::move(impl));
    }
  }

  const ConcreteFunction& function(const json& index, const Where& where) {
    int64_t i = io::parse_int(index, where);
    if (i < 0 || i >= static_cast<int64_t>(functions.size()))
      json_fail(where, fmt::format("function index {} is out of range (there are {})", i, functions.size()));
    return functions[static_cast<std::size_t>(i)];
  }

  void read_object(const json& j, LoadedObject& out, const std::string& path, int depth) {
    const Where top(what);
    const Where w = path.empty() ? Where(top, ": object <root>") : Where(top, ": object '", path, "'");
    if (depth > io::kMaxObjectDepth)
      json_fail(w, fmt::format("objects are nested more than {} deep", io::kMaxObjectDepth));
    io::parse_object(j, w);
    std::unordered_set<std::string> names;
    auto check = [&](const std::string& name) {
      if (name.empty() || name.find('/') != std::string::npos)
        json_fail(w, fmt::format("member name '{}' is empty or contains '/'", name));
      if (!names.insert(name).second) json_fail(w, fmt::format("two members are named '{}'", name));
    };
    const json& vars = io::parse_object(io::member(j, "variables", w), Where(w, ": variables"));
    for (auto it = vars.begin(); it != vars.end(); ++it) {
      check(it.key());
      out.variables_.emplace_back(it.key(), variable(it.value(), Where(w, ": variable '", it.key(), "'")));
    }
    const json& fns = io::parse_object(io::member(j, "functions", w), Where(w, ": functions"));
    for (auto it = fns.begin(); it != fns.end(); ++it) {
      check(it.key());
      const Where fw(w, ": function '", it.key(), "'");
      io::parse_array(it.value(), fw);
      std::vector<ConcreteFunction> traces;
      for (std::size_t i = 0; i < it.value().size(); ++i) traces.push_back(function(it.value()[i], fw));
      if (traces.empty()) json_fail(fw, "it has no traces");
      out.functions_.emplace_back(it.key(), LoadedFunction(it.key(), std::move(traces)));
    }
    const json& children = io::parse_object(io::member(j, "children", w), Where(w, ": children"));
    for (auto it = children.begin(); it != children.end(); ++it) {
      check(it.key());
      LoadedObject child;
      read_object(it.value(), child, path.empty() ? it.key() : path + "/" + it.key(), depth + 1);
      out.children_.emplace_back(it.key(), std::move(child));
    }
  }

  std::vector<TensorInfo> tensor_infos(const json& list, const Where& where,
                                       const std::vector<kiln::schema::TensorType>& types, bool exact) {
    io::parse_array(list, where);
    if (list.size() != types.size())
      json_fail(where, fmt::format("it lists {} tensors but the function has {}", list.size(), types.size()));
    std::vector<TensorInfo> out;
    std::unordered_set<std::string> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Where w(where, "[", i, "]");
      io::parse_object(list[i], w);
      TensorInfo info;
      info.name = io::parse_string(io::member(list[i], "name", w), Where(w, ": name"));
      if (info.name.empty() || !names.insert(info.name).second) json_fail(w, fmt::format("name '{}' is empty or repeated", info.name));
      info.dtype = io::parse_dtype(io::member(list[i], "dtype", w), Where(w, ": dtype"));
      info.shape = io::parse_shape(io::member(list[i], "shape", w), Where(w, ": shape"), true);
      info.tensor_name = io::parse_string(io::member(list[i], "tensor", w), Where(w, ": tensor"));
      const kiln::schema::TensorType& t = types[i];
      bool ok = info.dtype == t.dtype && (exact ? info.shape == t.shape : info.shape.is_compatible_with(t.shape));
      if (!ok)
        json_fail(w, fmt::format("'{}' is {} but the function's tensor is {}", info.name, type_text(info.dtype, info.shape),
                                 type_text(t.dtype, t.shape)));
      out.push_back(std::move(info));
    }
    return out;
  }

  void read_signatures(const json& j, Loaded& out) {
    const Where top(what);
    io::parse_object(j, Where(top, ": signatures"));
    for (auto it = j.begin(); it != j.end(); ++it) {
      const Where w(top, ": signature '", it.key(), "'");
      io::parse_object(it.value(), w);
      const ConcreteFunction& f = function(io::member(it.value(), "function", w), Where(w, ": function"));
      const graph::Graph& g = *f.impl()->graph;
      std::vector<kiln::schema::TensorType> in_types, out_types;
      for (const graph::Node* p : g.parameters()) in_types.push_back(p->outputs[0]);
      for (const graph::Value& v : g.results()) out_types.push_back(g.type_of(v));
      auto inputs = tensor_infos(io::member(it.value(), "inputs", w), Where(w, ": inputs"), in_types, true);
      auto outputs = tensor_infos(io::member(it.value(), "outputs", w), Where(w, ": outputs"), out_types, false);
      out.signatures_.emplace(it.key(), LoadedSignature(f, std::move(inputs), std::move(outputs)));
    }
  }

  Loaded load(std::string_view document, std::string_view weights) {
    const std::string w = fmt::format("{}: {}", what, io::kDocumentFile);
    json doc = io::parse_json(document, w);
    io::parse_object(doc, w);
    const std::string& format = io::parse_string(io::member(doc, "format", w), w + ": format");
    if (format != io::kFormatName) json_fail(w, fmt::format("format is '{}', not '{}'", format, io::kFormatName));
    int64_t version = io::parse_int(io::member(doc, "version", w), w + ": version");
    if (version > kFormatVersion)
      throw Unimplemented(fmt::format("{}: format version {} was written by a newer Kiln; this build reads versions up "
                                      "to {}",
                                      w, version, kFormatVersion));
    if (version < 1) json_fail(w, fmt::format("format version {} is not a version Kiln ever wrote", version));
    for (io::NamedTensor& t : io::safetensors_decode(weights, fmt::format("{}: {}", what, io::kVariablesFile)))
      tensors.emplace(std::move(t.name), std::move(t.value));
    read_variables(io::member(doc, "variables", w));
    io::GraphTableReader graphs(io::member(doc, "graphs", w), w);
    read_functions(io::member(doc, "functions", w), graphs);
    Loaded out;
    out.format_version_ = static_cast<int>(version);
    read_object(io::member(doc, "object_graph", w), out, "", 0);
    read_signatures(io::member(doc, "signatures", w), out);
    out.all_functions_ = functions;
    return out;
  }
};

Loaded load(const std::string& dir) {
  std::string document = io::read_file_in(dir, std::string(io::kDocumentFile), kMaxDocumentBytes);
  std::string weights = io::read_file_in(dir, std::string(io::kVariablesFile), kMaxVariablesBytes);
  return io::load_from_bytes(document, weights, "saved model " + dir);
}

}  // namespace kiln::saved_model

namespace kiln::io {
saved_model::Loaded load_from_bytes(std::string_view document, std::string_view variables, const std::string& what) {
  saved_model::LoadedBuilder builder{what, {}, {}, {}};
  try {
    return builder.load(document, variables);
  } catch (...) {
    // Messages quote names and values from the file: no raw bytes out.
    core::rethrow_edited([](std::string_view message) { return printable(message); });
  }
}
}  // namespace kiln::io
