#pragma once
// The op mappings, one file per family; each adds its ops to the table that
// export_fn reads.
#include <string_view>
#include <unordered_map>

#include "onnx/exporter.h"

namespace kiln::onnx {

using ExportTable = std::unordered_map<std::string_view, ExportFn>;

void add_math_exports(ExportTable& table);
void add_array_exports(ExportTable& table);
void add_nn_exports(ExportTable& table);
void add_control_flow_exports(ExportTable& table);

// Shared by the families: one ONNX node computing output 0 from every input.
void export_as(const NodeExport& x, std::string_view op_type);
// A Cast of `name` to `dtype` when `from` differs; returns the result's name.
std::string cast_to(GraphEmitter& e, const std::string& name, DType from, DType dtype);
// Binds the outputs of a nested Kiln graph run inline: its parameters and
// captures (in that order) fed by `feeds`, its results bound to the node's
// outputs (FusedElementwise, Call).
void export_inline(const NodeExport& x, const graph::Graph& body);

}  // namespace kiln::onnx
