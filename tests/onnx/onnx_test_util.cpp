#include "onnx_test_util.h"

#include <onnx/checker.h>
#include <onnx/defs/printer.h>

#include <array>
#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "runtime/format.h"

namespace kiln::testing {

kiln::onnx::pb::ModelProto parse_model(const std::string& bytes) {
  kiln::onnx::pb::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(bytes)) << "not a ModelProto";
  return model;
}

std::string onnx_check(const kiln::onnx::pb::ModelProto& model) {
  try {
    ::onnx::checker::check_model(model);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::string onnx_python_check(const std::string& path) {
  std::string cmd = fmt::format(
      "{} -c 'import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)' '{}' 2>&1",
      python_path(), path);
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return "cannot run " + python_path();
  std::string out;
  std::array<char, 4096> buf;
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int rc = ::pclose(p);
  return rc == 0 ? "" : fmt::format("exit {}: {}", rc, out);
}

std::string onnx_text(const kiln::onnx::pb::ModelProto& model) {
  std::ostringstream s;
  s << "ir_version " << model.ir_version() << ", opset";
  for (const auto& o : model.opset_import()) s << " " << (o.domain().empty() ? "ai.onnx" : o.domain()) << ":" << o.version();
  s << ", producer " << model.producer_name() << "\n";
  ::onnx::operator<<(s, model.graph());
  s << "\n";
  // The printer leaves initializers out: their names and values.
  for (const auto& init : model.graph().initializer()) {
    Tensor t = kiln::onnx::from_tensor_proto(init, init.name());
    s << init.name() << ": " << dtype_name(t.dtype()) << " " << t.shape().to_string();
    if (t.size() <= 16) s << " = " << runtime::numpy_str(t);
    s << "\n";
  }
  return s.str();
}

std::string temp_path(const std::string& name) {
  static int counter = 0;
  return (std::filesystem::temp_directory_path() / fmt::format("kiln_onnx_{}_{}_{}", ::getpid(), counter++, name)).string();
}

}  // namespace kiln::testing
