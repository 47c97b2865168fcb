#pragma once
// Shared by the ONNX tests: ONNX's own checker (libonnx, and Debian's
// python3-onnx with full shape inference) and printer as the judges.
#include <string>

#include "onnx/onnx_proto.h"
#include "test_util.h"

namespace kiln::testing {

std::string onnx_testdata_dir();
std::string python_path();

// Parses serialized bytes; fails the test when they are not a ModelProto.
kiln::onnx::pb::ModelProto parse_model(const std::string& bytes);
// "" when ONNX's C++ checker accepts the model, else its message.
std::string onnx_check(const kiln::onnx::pb::ModelProto& model);
// "" when python3-onnx's checker with full_check (strict shape inference)
// accepts the file, else its output.
std::string onnx_python_check(const std::string& path);
// The model as ONNX's printer writes it, after a header line (golden files).
std::string onnx_text(const kiln::onnx::pb::ModelProto& model);
// A kiln::function's one trace (traced now from its input_signature if need be).
template <class F> ConcreteFunction only_trace(const Function<F>& f) {
  return saved_model::detail::single_trace(kiln::detail::traces_of(f), "the test's function");
}
// A fresh temporary path ending in `name`.
std::string temp_path(const std::string& name);

}  // namespace kiln::testing
