// kiln-cli, driven through kiln_cli_main: show (golden, like
// saved_model_cli), run, graph, and its errors.
#include "saved_model_test.h"

#include <sys/wait.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <kiln/saved_model.h>

#include "fuzz/fuzz_input.h"
#include "cli_test_util.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_golden;
using kiln::testing::TempDir;
using kiln::testing::cli;
using kiln::testing::CliResult;
namespace sm = kiln::saved_model;

namespace {

// The seed's DemoModule after addprint(5), addprint(50); plus a function of
// a child object with two traces.
std::string save_demo(const TempDir& tmp) {
  Variable x(constant(1.f), {.name = "demo_module/Variable:0"});
  auto addprint = kiln::function(
      [x](const Tensor& a) {
        x.assign_add(a);
        kiln::print(x);
        return x.read_value();
      },
      FunctionOptions{.input_signature = std::vector<TensorSpec>{TensorSpec({}, float32)}, .name = "addprint"});
  ::testing::internal::CaptureStderr();
  addprint(constant(5.f));
  addprint(constant(50.f));
  ::testing::internal::GetCapturedStderr();
  Variable w(constant({{1.f, 2.f}, {3.f, 4.f}}), {.name = "dense/kernel:0"});
  auto dense = kiln::function([w](const Tensor& v) { return matmul(v, w); }, {.name = "dense", .exact_shapes = true});
  dense(constant({{1.f, 1.f}}));
  dense(constant({{1.f, 1.f}, {0.f, 1.f}}));
  auto scale = kiln::function([](const Tensor& v, const Tensor& k) { return std::tuple<Tensor, Tensor>{v * cast(k, float32), k}; },
                              {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 2}, float32), TensorSpec({}, int64)}});
  scale(constant({{1.f, 2.f}}), constant(int64_t{3}));
  sm::Object dense_obj;
  dense_obj.add("kernel", w).add("call", dense);
  sm::Object root;
  root.add("x", x).add("addprint", addprint).add("dense", dense_obj);
  std::string dir = tmp.path("demo_model");
  sm::save(root, dir,
           {{"serving_default", {addprint, {"a"}}},
            {"scale", {scale.get_concrete_function(TensorSpec({None, 2}, float32), TensorSpec({}, int64)), {"v", "k"}}}});
  return dir;
}

}  // namespace

TEST(KilnCli, ShowAllGolden) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  CliResult r = cli({"show", "--dir", dir, "--all"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_golden("kiln_cli_show_all.txt", r.out);
}

TEST(KilnCli, ShowKeysAndOneSignature) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  CliResult keys = cli({"show", "--dir", dir});
  ASSERT_EQ(keys.status, 0) << keys.err;
  EXPECT_EQ(keys.out,
            "The given SavedModel contains the following signature_def keys:\n"
            "SignatureDef key: \"scale\"\n"
            "SignatureDef key: \"serving_default\"\n");
  CliResult one = cli({"show", "--dir=" + dir, "--signature_def", "serving_default"});
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out,
            "signature_def['serving_default']:\n"
            "  The given SavedModel SignatureDef contains the following input(s):\n"
            "    inputs['a'] tensor_info:\n"
            "        dtype: DT_FLOAT\n"
            "        shape: ()\n"
            "        name: serving_default_a:0\n"
            "  The given SavedModel SignatureDef contains the following output(s):\n"
            "    outputs['output_0'] tensor_info:\n"
            "        dtype: DT_FLOAT\n"
            "        shape: ()\n"
            "        name: read_variable_1:0\n"
            "  Method name is: kiln/serving/predict\n");
}

TEST(KilnCli, RunCallsASignature) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  ::testing::internal::CaptureStderr();
  CliResult r = cli({"run", "--dir", dir, "--signature_def", "serving_default", "--input", "a=5.0"});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "61\n");  // kiln::print in the loaded graph
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "Result for output key output_0:\n61.0\n");
  // Each run loads the model afresh: the variable starts from the saved 56.
  ::testing::internal::CaptureStderr();
  r = cli({"run", "--dir", dir, "--signature_def", "serving_default", "--input_exprs", "a=-6"});
  ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.out, "Result for output key output_0:\n50.0\n");
  r = cli({"run", "--dir", dir, "--signature_def=scale", "--input", "v=[[1,2],[3,4.5]]", "--input=k=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "Result for output key output_0:\n[[2. 4.]\n [6. 9.]]\n"
            "Result for output key output_1:\n2\n");
}

// --outdir: each output as DIR/NAME.npy, NumPy's format, bit for bit.
TEST(KilnCli, RunWritesOutputsAsNpy) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  CliResult r = cli({"run", "--dir", dir, "--signature_def=scale", "--input", "v=[[1,2],[3,4.5]]", "--input=k=2",
                     "--outdir", tmp.path("out")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Output output_0 is saved to " + tmp.path("out") + "/output_0.npy\n"), std::string::npos)
      << r.out;
  std::ifstream f(tmp.path("out") + "/output_0.npy", std::ios::binary);
  std::string npy((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  ASSERT_EQ(npy.size(), 128u + 4 * sizeof(float));  // the header pads to a multiple of 64 bytes
  EXPECT_EQ(npy.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));  // header length 118
  EXPECT_EQ(npy.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }");
  EXPECT_EQ(npy[127], '\n');
  float values[4];
  std::memcpy(values, npy.data() + 128, sizeof values);
  EXPECT_EQ(std::vector<float>(values, values + 4), (std::vector<float>{2.f, 4.f, 6.f, 9.f}));
  std::ifstream scalar(tmp.path("out") + "/output_1.npy", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(scalar)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s.substr(10, 55), "{'descr': '<i8', 'fortran_order': False, 'shape': (), }");
}

// --input_idx: an IDX file of bytes (MNIST's format), whole or one row,
// scaled to [0, 1] for a float input and shaped to fit it.
TEST(KilnCli, RunReadsIdxInputs) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  // ubyte, rank 2, dims (2, 2) big-endian, then the values.
  kiln::testing::write_bytes(tmp.path("v.idx"), std::string("\0\0\x08\x02\0\0\0\x02\0\0\0\x02\0\xff\x33\x66", 16));
  CliResult r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input_idx", "v=" + tmp.path("v.idx"), "--input", "k=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "Result for output key output_0:\n[[0.  2. ]\n [0.4 0.8]]\n"
            "Result for output key output_1:\n2\n");
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input_idx", "v=" + tmp.path("v.idx") + ":1", "--input", "k=1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "Result for output key output_0:\n[[0.2 0.4]]\n"
            "Result for output key output_1:\n1\n");
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input_idx", "v=" + tmp.path("v.idx") + ":2", "--input", "k=1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--input_idx v: " + tmp.path("v.idx") + " has 2 rows, no row 2"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "v=[[1,2]]", "--input_idx", "k=" + tmp.path("v.idx")});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--input_idx k: 4 values do not fit the input's shape ()"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input_idx", "v"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--input_idx 'v' is not NAME=VALUE"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "v=[[1,2]]", "--input_idx", "v=" + tmp.path("v.idx")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("input v given twice"), std::string::npos) << r.err;
}

TEST(KilnCli, RunErrors) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  CliResult r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "v=[[1,2],[3]]", "--input", "k=2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("not rectangular"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "v=[[1,2]]", "--input", "k=2.5"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--input k: element 0: expected an integer"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "v=[[1,2],[3,true]]", "--input", "k=2"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--input v: element 3: expected a number"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "v=[[1,2]]"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("input 'k' (int64 ()) is missing"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "scale", "--input", "w=1"});
  EXPECT_NE(r.err.find("signature 'scale' has no input 'w' (inputs: v, k)"), std::string::npos) << r.err;
  r = cli({"run", "--dir", dir, "--signature_def", "nope", "--input", "a=1"});
  EXPECT_NE(r.err.find("no signature named 'nope' (there are: scale, serving_default)"), std::string::npos) << r.err;
  r = cli({"run", "--dir", tmp.path("missing"), "--signature_def", "x"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = cli({"frobnicate"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_NE(r.err.find("usage:"), std::string::npos);
  r = cli({"show", "--dir"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--dir needs a value"), std::string::npos);
  r = cli({"show", "--bogus"});
  EXPECT_NE(r.err.find("unknown option --bogus"), std::string::npos);
}

TEST(KilnCli, GraphPrintsAFunction) {
  TempDir tmp;
  std::string dir = save_demo(tmp);
  CliResult r = cli({"graph", "--dir", dir, "--function", "addprint"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("AssignAddVariable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PrintV2"), std::string::npos) << r.out;
  r = cli({"graph", "--dir", dir, "--function", "dense/call"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("// trace 1 of 2: dense(arg0: float32 (1, 2))"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("// trace 2 of 2: dense(arg0: float32 (2, 2))"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MatMul"), std::string::npos) << r.out;
  r = cli({"graph", "--dir", dir, "--function", "serving_default", "--dot"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("digraph", 0), 0u) << r.out;
  r = cli({"graph", "--dir", dir, "--function", "dense/nope"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("no function named 'nope' (there are: call)"), std::string::npos) << r.err;
}

// The hostile seeds of the fuzz corpus through the real executable: an error
// naming the op, the shape (and for sizes no machine holds, the bytes),
// never a crash (the 2^62 Fill used to write past a 64-byte block) nor a bare
// std::bad_alloc.
TEST(KilnCli, HostileSizesAreErrors) {
  TempDir tmp;
  auto run_seed = [&](const std::string& seed) {
    auto blob = kiln::testing::read_bytes(kiln::testing::saved_model_corpus_dir() + "/" + seed);
    auto [document, weights] = fuzz::decode_model(blob);
    std::string dir = tmp.path(seed);
    std::filesystem::create_directories(dir);
    kiln::testing::write_bytes(dir + "/saved_model.json", std::string(document));
    kiln::testing::write_bytes(dir + "/variables.safetensors", std::string(weights));
    std::string command = kiln::testing::kiln_cli_path() + " run --dir " + dir +
                          " --signature_def serving_default --input x=1 2>&1";
    std::string out;
    FILE* pipe = popen(command.c_str(), "r");
    char buf[4096];
    while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
    int status = pclose(pipe);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << seed << ": status " << status << "\n" << out;
    return out;
  };
  std::string out = run_seed("hostile_fill_overflow");
  EXPECT_NE(out.find("Fill: output 0 would have shape (4611686018427387904,)"), std::string::npos) << out;
  out = run_seed("hostile_fill_huge");
  for (const char* fragment : {"OOM when allocating a tensor of shape (1099511627776,) and type float32",
                               "4398046511104 bytes wanted", "(Fill)"})
    EXPECT_NE(out.find(fragment), std::string::npos) << fragment << " in " << out;
  EXPECT_EQ(out.find("bad_alloc"), std::string::npos) << out;
  out = run_seed("hostile_range_huge");
  EXPECT_NE(out.find("(1000000000000,) and type int64: 8000000000000 bytes"), std::string::npos) << out;
}
