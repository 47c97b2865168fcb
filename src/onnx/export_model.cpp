// kiln::onnx::export_: a function's graph (optimized without fusion, so the
// ops are Kiln's plain ones) as an ONNX ModelProto.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <fmt/format.h>

#include "function/traced_graph.h"
#include "kiln/onnx.h"
#include "onnx/export_model.h"
#include "onnx/exporter.h"
#include "ops/variable_ops.h"
#include "passes/passes.h"

namespace kiln::onnx {

namespace {

// A variable's value now, or a captured tensor's.
Tensor capture_value(const Tensor& outer, std::string& hint) {
  if (outer.dtype() != DType::Resource) return outer;
  detail::VariableState& s = ops::resource_state(outer);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.has_value()) ops::uninitialized(s);
  hint = s.name.ends_with(":0") ? s.name.substr(0, s.name.size() - 2) : s.name;
  return s.value();
}

}  // namespace

pb::ModelProto export_graph(const graph::Graph& traced, const onnx::ExportOptions& options) {
  using onnx::kIrVersion, onnx::kOpsetVersion;
  // Kiln's fused ops and weight layouts have no ONNX form; their parts have.
  std::shared_ptr<const graph::Graph> g = passes::optimize(traced, passes::PassOptions::portable());

  pb::ModelProto model;
  model.set_ir_version(kIrVersion);
  model.set_producer_name("kiln");
  model.set_producer_version("0.1.0");
  pb::OperatorSetIdProto& opset = *model.add_opset_import();
  opset.set_domain("");
  opset.set_version(kOpsetVersion);
  pb::GraphProto& out = *model.mutable_graph();
  out.set_name(options.graph_name.empty() ? traced.name() : options.graph_name);

  ModelNames names;
  GraphEmitter e(names, out);
  const auto& params = g->parameters();
  if (!options.input_names.empty() && options.input_names.size() != params.size())
    throw InvalidArgument(fmt::format("kiln::onnx::export_: {} input names for a function of {} inputs",
                                      options.input_names.size(), params.size()));
  for (std::size_t i = 0; i < params.size(); ++i) {
    std::string name = options.input_names.empty() ? params[i]->name : options.input_names[i];
    if (name.empty() || !names.used.insert(name).second)
      throw InvalidArgument(fmt::format("kiln::onnx::export_: input name '{}' is empty or repeated", name));
    e.bind({params[i], 0}, name);
    pb::ValueInfoProto& vi = *out.add_input();
    vi.set_name(name);
    set_value_type(params[i]->outputs[0], name + "_dim", vi, fmt::format("input '{}'", name));
  }
  // Variables and captured tensors: initializers holding their values now.
  for (std::size_t k = 0; k < g->captures().size(); ++k) {
    std::string hint = g->captures()[k].placeholder->name;
    Tensor value = capture_value(traced.captures()[k].outer, hint);
    e.bind({g->captures()[k].placeholder, 0}, e.constant(value, hint));
  }
  e.emit_nodes(*g);
  for (std::size_t i = 0; i < g->results().size(); ++i) {
    std::string name = names.fresh(fmt::format("output_{}", i));
    e.add_node("Identity", {e.name_of(g->results()[i])}, {name});
    pb::ValueInfoProto& vi = *out.add_output();
    vi.set_name(name);
    set_value_type(g->type_of(g->results()[i]), name + "_dim", vi, fmt::format("output '{}'", name));
  }
  return model;
}

}  // namespace kiln::onnx

namespace kiln::onnx {

namespace {

using pb::ModelProto;

ModelProto build_model(const ConcreteFunction& function, const ExportOptions& options) {
  ExportOptions named = options;
  if (named.graph_name.empty()) named.graph_name = function.name();
  return export_graph(*function.impl()->graph, named);
}

void write(const ModelProto& model, const std::string& path) {
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    throw Internal(fmt::format("kiln::onnx::export_: the model for '{}' could not be serialized (over 2 GB?)", path));
  // Written next to `path`, then renamed over it: readers never see half a model.
  std::string tmp = fmt::format("{}.tmp{}", path, ::getpid());
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      std::remove(tmp.c_str());
      throw InvalidArgument(fmt::format("kiln::onnx::export_: cannot write '{}'", tmp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InvalidArgument(fmt::format("kiln::onnx::export_: cannot write '{}': {}", path, ec.message()));
  }
}

}  // namespace

std::string export_to_string(const ConcreteFunction& function, const ExportOptions& options) {
  std::string bytes;
  if (!build_model(function, options).SerializeToString(&bytes))
    throw Internal("kiln::onnx::export_: the model could not be serialized (over 2 GB?)");
  return bytes;
}

void export_(const ConcreteFunction& function, const std::string& path, const ExportOptions& options) {
  write(build_model(function, options), path);
}

void export_(const saved_model::LoadedSignature& signature, const std::string& path) {
  ExportOptions options;
  for (const saved_model::TensorInfo& info : signature.inputs()) options.input_names.push_back(info.name);
  write(build_model(signature.function(), options), path);
}

}  // namespace kiln::onnx
