// kiln-cli export (a saved model's signature to ONNX) and run --onnx.
#include <sstream>

#include "cli_test_util.h"
#include "kiln/onnx.h"
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

TEST(OnnxCli, ExportThenRunTheOnnxModel) {
  fs::path dir = temp_path("saved");
  Variable w(constant({1.f, 2.f, 3.f}), {.name = "w"});
  auto serve = kiln::function([&](const Tensor& x) { return x * w.read_value(); },
                              {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 3})}});
  saved_model::Object root;
  root.add("w", w);
  saved_model::save(root, dir.string(), {{"serving_default", {serve, {"x"}}}});
  std::string path = temp_path("model.onnx");

  CliResult e = cli({"export", "--dir", dir.string(), "--signature_def", "serving_default", "--onnx", path});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_EQ(e.out, "Signature serving_default is exported to " + path + " (ONNX opset 17)\n");
  std::ifstream in(path, std::ios::binary);
  EXPECT_EQ(onnx_check(parse_model(std::string((std::istreambuf_iterator<char>(in)), {}))), "");

  CliResult r = cli({"run", "--onnx", path, "--input", "x=[[1,1,1],[2,0,-1]]"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "Result for output key output_0:\n[[ 1.  2.  3.]\n [ 2.  0. -3.]]\n");

  CliResult bad = cli({"run", "--onnx", path, "--input", "y=1"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("has no input 'y' (inputs: x)"), std::string::npos) << bad.err;
  CliResult mixed = cli({"run", "--onnx", path, "--dir", dir.string()});
  EXPECT_EQ(mixed.status, 2);
  EXPECT_NE(mixed.err.find("--onnx runs a model file: no --dir or --signature_def"), std::string::npos) << mixed.err;
  fs::remove_all(dir);
  fs::remove(path);
}

}  // namespace
