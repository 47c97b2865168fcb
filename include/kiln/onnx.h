#pragma once
// ONNX in and out (docs/design-notes.md, "ONNX in and out"): a traced graph written as an .onnx model
// (opset 17, IR version 8) that other runtimes serve, and an .onnx model read
// back as a Kiln function that runs through the same passes and executor.
//
//   auto serve = kiln::function(net_call, {.input_signature = {{kiln::None, 28, 28, 1}}});
//   kiln::onnx::export_(serve, "mnist.onnx", {.input_names = {"images"}});
//
//   auto model = kiln::onnx::import_model("mnist.onnx");
//   model({{"images", x}}).at("output_0");
//
// Without ONNX support in the build (KILN_WITH_ONNX off), every function here
// throws Unimplemented.
#include <string>
#include <vector>

#include "kiln/function.h"
#include "kiln/saved_model.h"

namespace kiln::onnx {

// The opset and IR version export_ writes (ONNX 1.12's newest).
inline constexpr int kOpsetVersion = 17;
inline constexpr int kIrVersion = 8;

struct ExportOptions {
  // The graph inputs' names (default: the function's parameter names, arg0,
  // arg1...). Outputs are named output_0, output_1..., as a signature's.
  std::vector<std::string> input_names;
  // The model's graph name (default: the function's name).
  std::string graph_name;
};

// Writes `function`'s graph to `path` as an ONNX model. Unknown dims stay
// symbolic (dim_param); variables and captured tensors become initializers
// holding their values now. Throws Unimplemented naming the op and the node
// for an op with no ONNX form (stateful updates, host callbacks, gradients'
// helper ops...), InvalidArgument for dtypes ONNX cannot hold (strings).
void export_(const ConcreteFunction& function, const std::string& path, const ExportOptions& options = {});
// A kiln::function traced exactly once.
template <class F>
void export_(const Function<F>& function, const std::string& path, const ExportOptions& options = {}) {
  export_(saved_model::detail::single_trace(kiln::detail::traces_of(function), "kiln::onnx::export_'s function"),
          path, options);
}
// A loaded saved model's signature, with its input names.
void export_(const saved_model::LoadedSignature& signature, const std::string& path);

// The serialized ModelProto, as export_ would write it.
std::string export_to_string(const ConcreteFunction& function, const ExportOptions& options = {});

// Reads an ONNX model: its graph becomes a Kiln graph (initializers become
// constants), optimized and planned as a traced function's. Inputs and
// outputs keep the model's names. Throws InvalidArgument naming the file and
// what is wrong for a damaged or hostile file, Unimplemented naming the op
// and node for an op (or attribute) Kiln does not have.
saved_model::LoadedSignature import_model(const std::string& path);
// The same from a serialized ModelProto; `what` names it in errors.
saved_model::LoadedSignature import_model_from_string(const std::string& bytes, const std::string& what = "model");

}  // namespace kiln::onnx
