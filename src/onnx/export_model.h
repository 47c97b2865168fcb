#pragma once
// The ModelProto of a Kiln graph: what kiln::onnx::export_ writes, for the
// tests and tools that export graphs they built themselves (op samples).
#include "graph/graph.h"
#include "kiln/onnx.h"
#include "onnx/onnx_proto.h"

namespace kiln::onnx {

// `traced` is optimized without fusion first; its captures' outer tensors
// (variables' handles, constants) become initializers.
pb::ModelProto export_graph(const graph::Graph& traced, const onnx::ExportOptions& options);

}  // namespace kiln::onnx
