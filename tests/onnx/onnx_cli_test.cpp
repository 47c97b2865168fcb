// kiln-cli export (a saved model's signature to ONNX) and run --onnx.
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli_test_util.h"
#include "kiln/onnx.h"
#include "onnx_builder.h"
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

// --timeout bounds a run: a Loop without a trip count ends with the
// deadline's error, not never.
TEST(OnnxCli, RunTimeoutStopsAnEndlessLoop) {
  std::string path = temp_path("endless.onnx");
  { std::ofstream(path, std::ios::binary) << endless_loop({}).bytes(); }
  CliResult r = cli({"run", "--onnx", path, "--input", "v0=0", "--timeout", "0.2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("kiln-cli: the call ran past its deadline of 0.2 s"), std::string::npos) << r.err;
  for (const char* bad : {"abc", "-1", "0", "nan", "inf", "1s", ""}) {
    CliResult u = cli({"run", "--onnx", path, "--input", "v0=0", "--timeout", bad});
    EXPECT_EQ(u.status, 2) << bad;
    EXPECT_NE(u.err.find(fmt::format("--timeout '{}' is not a positive number of seconds", bad)), std::string::npos)
        << u.err;
  }
  // A bounded loop finishes within its timeout.
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << endless_loop({3}).bytes(); }
  CliResult ok = cli({"run", "--onnx", path, "--input", "v0=0", "--timeout", "30"});
  ASSERT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "Result for output key v:\n3.0\n");
  fs::remove(path);
}

// Output names come from the file: printed with their control characters
// (newlines too) escaped, so a name cannot forge lines or move the cursor.
TEST(OnnxCli, RunEscapesOutputNames) {
  const std::string name = "o\nResult for output key fake:\x1b[2J";
  OnnxBuilder b;
  b.input("x", pb::TensorProto::FLOAT, {{2}});
  b.node("Relu", {"x"}, {name});
  b.output(name);
  std::string path = temp_path("names.onnx");
  { std::ofstream(path, std::ios::binary) << b.bytes(); }
  CliResult r = cli({"run", "--onnx", path, "--input", "x=[1,-1]"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "Result for output key o\\nResult for output key fake:\\x1b[2J:\n[1. 0.]\n");
  fs::remove(path);
}

}  // namespace
