#pragma once
// Saved models (docs/design-notes.md, "Saved models and kiln-cli"): a directory that holds every traced graph, the
// signatures and the object tree in `saved_model.json`, and the variables in
// `variables.safetensors`. Another process loads it and calls it.
//
//   kiln::saved_model::Object root;
//   root.add("x", x).add("addprint", addprint);        // a Variable, a kiln::function
//   kiln::saved_model::save(root, "demo_model", {{"serving_default", {addprint, {"a"}}}});
//
//   auto loaded = kiln::saved_model::load("demo_model");
//   loaded.function("addprint")(kiln::constant(5.f));  // updates the loaded x
//   loaded.signature("serving_default")({{"a", kiln::constant(5.f)}}).at("output_0");
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/cancellation.h"
#include "kiln/function.h"
#include "kiln/variable.h"

namespace kiln {
class Module;
}

namespace kiln::saved_model {

// The version of the JSON document this build writes (and the newest it reads).
inline constexpr int kFormatVersion = 1;

namespace detail {
// The one trace of `fs` (a signature is one graph); throws naming `what` otherwise.
ConcreteFunction single_trace(const std::vector<ConcreteFunction>& fs, const std::string& what);
}  // namespace detail

// A serving entry point: one traced graph, with names for its inputs (by
// default the graph's parameter names, arg0, arg1...) and its outputs (by
// default output_0, output_1, ...; TF names a signature's outputs after the
// keys of the dict its function returns, and the Python package passes them).
struct Signature {
  Signature(ConcreteFunction function, std::vector<std::string> input_names = {},
            std::vector<std::string> output_names = {})
      : function(std::move(function)), input_names(std::move(input_names)), output_names(std::move(output_names)) {}
  // A kiln::function traced exactly once (called, get_concrete_function'd,
  // or given an input_signature).
  template <class F>
  Signature(const Function<F>& function, std::vector<std::string> input_names = {},
            std::vector<std::string> output_names = {})
      : Signature(detail::single_trace(kiln::detail::traces_of(function), "a signature's kiln::function"),
                  std::move(input_names), std::move(output_names)) {}

  ConcreteFunction function;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
};

using Signatures = std::map<std::string, Signature>;

// What `save` writes besides the signatures: a tree of named variables,
// functions (all traces of each) and child objects. C++ has no reflection, so
// a module describes itself with one of these (kiln::Module's overload does
// it for you).
struct Object {
  // Out of line: a vector of pairs holding Object is only complete there.
  Object();
  ~Object();
  Object(const Object&);
  Object(Object&&) noexcept;
  Object& operator=(const Object&);
  Object& operator=(Object&&) noexcept;

  std::vector<std::pair<std::string, Variable>> variables;
  std::vector<std::pair<std::string, std::vector<ConcreteFunction>>> functions;
  std::vector<std::pair<std::string, Object>> children;

  Object& add(std::string name, Variable variable) {
    variables.emplace_back(std::move(name), std::move(variable));
    return *this;
  }
  Object& add(std::string name, ConcreteFunction function) {
    functions.emplace_back(std::move(name), std::vector<ConcreteFunction>{std::move(function)});
    return *this;
  }
  // Every trace of `function` so far (its input_signature's when never called).
  template <class F> Object& add(std::string name, const Function<F>& function) {
    functions.emplace_back(std::move(name), kiln::detail::traces_of(function));
    return *this;
  }
  Object& add(std::string name, Object child) {
    children.emplace_back(std::move(name), std::move(child));
    return *this;
  }
};

// Writes the model into `dir` atomically: into a temporary directory next to
// it, renamed into place once complete, so a failure never leaves a
// half-written model where a good one was. An existing saved model at `dir`
// is replaced; any other non-empty directory is refused. Variables captured
// by the functions but missing from the tree are saved too (under
// "_captured/<name>"). Throws Unimplemented for what cannot be saved (host
// callbacks, string variables, functions taking Variables as arguments).
void save(const Object& root, const std::string& dir, const Signatures& signatures = {});

// The object tree of a kiln::Module: its own variables (named without the
// module's scope and ":0": "dense/kernel:0" is "kernel") and its submodules
// by name, recursively, and its named methods (Module::method("name", ...))
// with every trace of each. A method made without a name is not part of the
// module: add it with `.add("addprint", demo.addprint)`.
Object module_object(const Module& module);
// save(module_object(module), dir, signatures), as tf.saved_model.save.
void save(const Module& module, const std::string& dir, const Signatures& signatures = {});

// One input or output of a loaded signature.
struct TensorInfo {
  std::string name;         // "a", "output_0"
  DType dtype = DType::Float32;
  Shape shape;
  std::string tensor_name;  // "serving_default_a:0", "read_variable:0"
};

class LoadedSignature {
 public:
  LoadedSignature(ConcreteFunction function, std::vector<TensorInfo> inputs, std::vector<TensorInfo> outputs);
  // Named inputs in (every input, nothing else), named outputs out.
  std::map<std::string, Tensor> operator()(const std::map<std::string, Tensor>& inputs) const;
  // The same, bounded (kiln/cancellation.h): DeadlineExceeded once
  // `cancellation.timeout` has passed, Cancelled once `*cancellation.cancel`
  // is true, checked between ops and While iterations. For an imported ONNX
  // model, whose loops the file controls: model(inputs, {.timeout = 2s}).
  std::map<std::string, Tensor> operator()(const std::map<std::string, Tensor>& inputs,
                                           const Cancellation& cancellation) const;
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const ConcreteFunction& function() const { return function_; }

 private:
  ConcreteFunction function_;
  std::vector<TensorInfo> inputs_, outputs_;
};

// A loaded function: every trace that was saved; a call runs the first one
// whose inputs accept the arguments.
class LoadedFunction {
 public:
  LoadedFunction(std::string name, std::vector<ConcreteFunction> traces);
  template <class... Args> Outputs operator()(const Args&... args) const {
    return call(std::vector<Tensor>{Tensor(args)...});
  }
  Outputs call(const std::vector<Tensor>& args) const;
  const std::string& name() const { return name_; }
  const std::vector<ConcreteFunction>& concrete_functions() const { return traces_; }

 private:
  std::string name_;
  std::vector<ConcreteFunction> traces_;
};

// A loaded object of the tree: its variables (restored, shared with the
// functions, so updates a call makes persist), functions and children.
class LoadedObject {
 public:
  // Out of line: a vector of pairs holding LoadedObject is only complete there.
  LoadedObject();
  ~LoadedObject();
  LoadedObject(const LoadedObject&);
  LoadedObject(LoadedObject&&) noexcept;
  LoadedObject& operator=(const LoadedObject&);
  LoadedObject& operator=(LoadedObject&&) noexcept;

  // Throw NotFound naming what exists.
  const LoadedFunction& function(const std::string& name) const;
  const Variable& variable(const std::string& name) const;
  const LoadedObject& child(const std::string& name) const;

  // This object's variables, then its children's (depth first), each once.
  std::vector<Variable> variables() const;
  const std::vector<std::pair<std::string, Variable>>& own_variables() const { return variables_; }
  const std::vector<std::pair<std::string, LoadedFunction>>& functions() const { return functions_; }
  const std::vector<std::pair<std::string, LoadedObject>>& children() const { return children_; }

 private:
  friend struct LoadedBuilder;
  std::vector<std::pair<std::string, Variable>> variables_;
  std::vector<std::pair<std::string, LoadedFunction>> functions_;
  std::vector<std::pair<std::string, LoadedObject>> children_;
};

class Loaded : public LoadedObject {
 public:
  // Throws NotFound naming the signatures there are.
  const LoadedSignature& signature(const std::string& name) const;
  const std::map<std::string, LoadedSignature>& signatures() const { return signatures_; }
  // Every saved trace, in file order (signatures' and the tree's).
  const std::vector<ConcreteFunction>& all_functions() const { return all_functions_; }
  int format_version() const { return format_version_; }

 private:
  friend struct LoadedBuilder;
  std::map<std::string, LoadedSignature> signatures_;
  std::vector<ConcreteFunction> all_functions_;
  int format_version_ = 0;
};

// Reads and validates a saved model. Any damaged or hostile file gives a
// kiln::Error (InvalidArgument naming the file and what is wrong; NotFound
// for a missing file; Unimplemented for a newer format version).
Loaded load(const std::string& dir);

}  // namespace kiln::saved_model
