// saved_model::save: the object tree, every traced graph and the signatures
// into saved_model.json, the variables (and large captured constants) into
// variables.safetensors.
#include <fmt/format.h>

#include <unordered_map>
#include <unordered_set>

#include "function/traced_graph.h"
#include "io/file_util.h"
#include "io/graph_json.h"
#include "io/safetensors.h"
#include "io/saved_model_format.h"
#include "ops/variable_ops.h"

namespace kiln::saved_model {

namespace detail {
ConcreteFunction single_trace(const std::vector<ConcreteFunction>& fs, const std::string& what) {
  if (fs.size() == 1) return fs[0];
  if (fs.empty())
    throw FailedPrecondition(fmt::format(
        "saved_model: {} has not been traced yet; call it once or call get_concrete_function(specs...) before "
        "saving (an input_signature fixes the one trace)",
        what));
  throw FailedPrecondition(fmt::format(
      "saved_model: {} has {} traces but a signature is one graph; pass f.get_concrete_function(specs...) for the "
      "one to serve",
      what, fs.size()));
}
}  // namespace detail

Object::Object() = default;
Object::~Object() = default;
Object::Object(const Object&) = default;
Object::Object(Object&&) noexcept = default;
Object& Object::operator=(const Object&) = default;
Object& Object::operator=(Object&&) noexcept = default;

namespace {

using io::json;
using ImplPtr = std::shared_ptr<const kiln::detail::TracedGraph>;

void check_name(const std::string& name, std::string_view what) {
  if (name.empty() || name.find('/') != std::string::npos)
    throw InvalidArgument(fmt::format("saved_model::save: {} name '{}' must be non-empty and contain no '/'", what, name));
}

class Writer {
 public:
  json object(const Object& obj, const std::string& path, int depth) {
    if (depth > io::kMaxObjectDepth)
      throw InvalidArgument(
          fmt::format("saved_model::save: the object tree is more than {} levels deep", io::kMaxObjectDepth));
    json vars = json::object(), fns = json::object(), children = json::object();
    std::unordered_set<std::string> names;
    auto unique = [&](const std::string& name, std::string_view what) {
      check_name(name, what);
      if (!names.insert(name).second)
        throw InvalidArgument(fmt::format("saved_model::save: object '{}' has two members named '{}'",
                                          path.empty() ? "<root>" : path, name));
    };
    for (const auto& [name, v] : obj.variables) {
      unique(name, "variable");
      if (!v) throw InvalidArgument(fmt::format("saved_model::save: variable '{}' is null", name));
      vars[name] = variable_key(v, path.empty() ? name : path + "/" + name);
    }
    for (const auto& [name, traces] : obj.functions) {
      unique(name, "function");
      json list = json::array();
      for (const ConcreteFunction& f : traces) list.push_back(function_index(f));
      fns[name] = std::move(list);
    }
    for (const auto& [name, child] : obj.children) {
      unique(name, "child");
      children[name] = object(child, path.empty() ? name : path + "/" + name, depth + 1);
    }
    return {{"variables", std::move(vars)}, {"functions", std::move(fns)}, {"children", std::move(children)}};
  }

  json signature(const std::string& name, const Signature& sig) {
    check_name(name, "signature");
    int index = function_index(sig.function);
    const auto& g = *sig.function.impl()->graph;
    std::vector<std::string> input_names = sig.input_names;
    if (input_names.empty())
      for (const graph::Node* p : g.parameters()) input_names.push_back(p->name);
    if (input_names.size() != g.parameters().size())
      throw InvalidArgument(fmt::format("saved_model::save: signature '{}' names {} inputs but its function takes {}",
                                        name, input_names.size(), g.parameters().size()));
    json inputs = json::array(), outputs = json::array();
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < input_names.size(); ++i) {
      if (input_names[i].empty() || !seen.insert(input_names[i]).second)
        throw InvalidArgument(fmt::format("saved_model::save: signature '{}': input name '{}' is empty or repeated",
                                          name, input_names[i]));
      const auto& t = g.parameters()[i]->outputs[0];
      inputs.push_back({{"name", input_names[i]}, {"dtype", dtype_name(t.dtype)}, {"shape", io::shape_to_json(t.shape)},
                        {"tensor", fmt::format("{}_{}:0", name, input_names[i])}});
    }
    if (!sig.output_names.empty() && sig.output_names.size() != g.results().size())
      throw InvalidArgument(fmt::format("saved_model::save: signature '{}' names {} outputs but its function returns {}",
                                        name, sig.output_names.size(), g.results().size()));
    seen.clear();
    for (std::size_t i = 0; i < g.results().size(); ++i) {
      const auto& t = g.type_of(g.results()[i]);
      std::string output_name = sig.output_names.empty() ? fmt::format("output_{}", i) : sig.output_names[i];
      if (output_name.empty() || !seen.insert(output_name).second)
        throw InvalidArgument(fmt::format("saved_model::save: signature '{}': output name '{}' is empty or repeated",
                                          name, output_name));
      outputs.push_back({{"name", output_name}, {"dtype", dtype_name(t.dtype)},
                         {"shape", io::shape_to_json(t.shape)}, {"tensor", io::value_name(g.results()[i])}});
    }
    return {{"function", index}, {"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}};
  }

  // Functions are written after the tree and the signatures, when every
  // variable the tree names has its key.
  json functions() {
    json out = json::array();
    for (const ImplPtr& impl : functions_) {
      const graph::Graph& g = *impl->graph;
      std::string where = fmt::format("saved_model::save: function '{}'", impl->name);
      for (const graph::Node* p : g.parameters())
        if (p->outputs[0].dtype == DType::Resource)
          throw Unimplemented(fmt::format("{}: parameter '{}' is a resource (a Variable or a Dataset); a saved "
                                          "function takes tensors (let the function capture it instead)",
                                          where, p->name));
      int graph_index;
      // Name the function, keeping the error's kind (a graph that cannot be
      // saved, a malformed one, bad text).
      try {
        graph_index = graphs_.add(g);
      } catch (const Unimplemented& e) {
        throw Unimplemented(fmt::format("{}: {}", where, e.what()));
      } catch (const Internal& e) {
        throw Internal(fmt::format("{}: {}", where, e.what()));
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(fmt::format("{}: {}", where, e.what()));
      }
      json captures = json::array();
      for (const graph::Capture& c : g.captures()) {
        if (!c.outer.defined() || c.outer.is_symbolic())
          throw Internal(fmt::format("{}: capture '{}' has no concrete source", where, c.placeholder->name));
        if (c.outer.dtype() == DType::Resource) {
          captures.push_back({{"variable", captured_variable_key(c.outer)}});
        } else if (!io::safetensors_dtype_name(c.outer.dtype()).empty()) {
          std::string key = unique_key(fmt::format("_constants/{}", constants_.size()));
          constants_.push_back({key, c.outer});
          captures.push_back({{"constant", key}});
        } else {
          captures.push_back({{"value", io::tensor_to_json(c.outer, where)}});
        }
      }
      out.push_back({{"name", impl->name}, {"graph", graph_index}, {"captures", std::move(captures)}});
    }
    return out;
  }

  json take_graphs() { return graphs_.take(); }

  json variables_json() const {
    json out = json::array();
    for (const Saved& v : variables_)
      out.push_back({{"key", v.key}, {"name", v.name}, {"dtype", dtype_name(v.value.dtype())},
                     {"shape", io::shape_to_json(v.value.shape())}, {"trainable", v.trainable}});
    return out;
  }

  std::vector<io::NamedTensor> tensors() const {
    std::vector<io::NamedTensor> out;
    for (const Saved& v : variables_) out.push_back({v.key, v.value});
    for (const io::NamedTensor& c : constants_) out.push_back(c);
    return out;
  }

 private:
  struct Saved {
    std::string key, name;
    Tensor value;
    bool trainable;
  };

  std::string add_variable(kiln::detail::VariableState& s, std::string key) {
    if (s.dtype == DType::String || s.dtype == DType::Resource)
      throw Unimplemented(fmt::format("saved_model::save: variable '{}' is {}; variables.safetensors holds numbers and "
                                      "bools only",
                                      s.name, dtype_name(s.dtype)));
    Tensor value;
    bool trainable;
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      if (s.has_value()) value = s.value();
      trainable = s.trainable;
    }
    if (!value.defined())
      throw FailedPrecondition(fmt::format("saved_model::save: variable '{}' has no value yet (it is initialized "
                                           "from a function's arguments when that function first runs)",
                                           s.name));
    std::string unique = unique_key(key);
    by_state_.emplace(&s, unique);
    variables_.push_back({unique, s.name, value, trainable});
    return unique;
  }

  // A tensor name of variables.safetensors: variables' paths and constants'
  // keys share one namespace (a child "_constants" may hold a variable "0"),
  // and the header's own "__metadata__" entry is no tensor's.
  std::string unique_key(const std::string& key) {
    std::string unique = key;
    for (int n = 1; keys_.count(unique); ++n) unique = fmt::format("{}_{}", key, n);
    keys_.insert(unique);
    return unique;
  }

  std::string variable_key(const Variable& v, const std::string& path) {
    auto it = by_state_.find(v.state().get());
    return it != by_state_.end() ? it->second : add_variable(*v.state(), path);
  }

  // A variable a function captured: the tree's key, or a new one.
  std::string captured_variable_key(const Tensor& handle) {
    kiln::detail::VariableState& s = kiln::ops::resource_state(handle);
    auto it = by_state_.find(&s);
    return it != by_state_.end() ? it->second : add_variable(s, "_captured/" + s.name);
  }

  int function_index(const ConcreteFunction& f) {
    const ImplPtr& impl = f.impl();
    auto it = function_index_.find(impl.get());
    if (it != function_index_.end()) return it->second;
    int index = static_cast<int>(functions_.size());
    functions_.push_back(impl);
    function_index_.emplace(impl.get(), index);
    return index;
  }

  io::GraphTableWriter graphs_;
  std::vector<ImplPtr> functions_;
  std::unordered_map<const void*, int> function_index_;
  std::vector<Saved> variables_;
  std::unordered_map<const void*, std::string> by_state_;
  std::unordered_set<std::string> keys_{"__metadata__"};
  std::vector<io::NamedTensor> constants_;
};

}  // namespace

void save(const Object& root, const std::string& dir, const Signatures& signatures) {
  Writer w;
  json doc;
  doc["format"] = io::kFormatName;
  doc["version"] = kFormatVersion;
  doc["object_graph"] = w.object(root, "", 0);
  json sigs = json::object();
  for (const auto& [name, sig] : signatures) sigs[name] = w.signature(name, sig);
  doc["signatures"] = std::move(sigs);
  doc["functions"] = w.functions();
  doc["variables"] = w.variables_json();
  doc["graphs"] = w.take_graphs();
  std::string document = io::dump_json_readable(doc, "saved_model::save") + "\n";
  std::string weights = io::safetensors_encode(w.tensors());
  io::write_directory_atomically(dir, {{std::string(io::kVariablesFile), std::move(weights)},
                                       {std::string(io::kDocumentFile), std::move(document)}},
                                 std::string(io::kDocumentFile));
}

}  // namespace kiln::saved_model
