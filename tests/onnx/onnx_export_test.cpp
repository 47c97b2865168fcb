// kiln::onnx::export_: golden exports of small graphs, ONNX's checkers on
// every export (the MNIST CNN, control flow, every exportable op sample), and
// clear refusals.
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/mnist_cnn.h"
#include "core/tensor_impl.h"
#include "exec/plan.h"
#include "graph_feeds.h"
#include "kiln/onnx.h"
#include "onnx/export_model.h"
#include "onnx_test_util.h"
#include "onnx_samples.h"

using namespace kiln;
using namespace kiln::testing;

namespace {

TEST(OnnxExport, AffineGolden) {
  Variable w(constant({0.5f, -1.f, 2.f, 3.f}), {.name = "w"});
  auto f = kiln::function([&](const Tensor& x) { return relu(x * w.read_value() + 1.5f); },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 4})}, .name = "affine"});
  kiln::onnx::pb::ModelProto model = parse_model(kiln::onnx::export_to_string(only_trace(f), {.input_names = {"x"}}));
  EXPECT_EQ(onnx_check(model), "");
  EXPECT_EQ(model.ir_version(), 8);
  EXPECT_EQ(model.opset_import(0).version(), 17);
  // The batch dim stays symbolic; the variable is an initializer.
  EXPECT_EQ(model.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "x_dim0");
  EXPECT_EQ(model.graph().initializer(0).name(), "w");
  expect_golden("onnx_export_affine.txt", onnx_text(model));
}

TEST(OnnxExport, CondAndWhileLoopGolden) {
  auto f = kiln::function(
      [](const Tensor& x, const Tensor& n) { return control_flow_example(x, n, 2.f); },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({3}), TensorSpec({}, DType::Int32)}, .name = "control"});
  kiln::onnx::pb::ModelProto model = parse_model(kiln::onnx::export_to_string(only_trace(f)));
  EXPECT_EQ(onnx_check(model), "");
  expect_golden("onnx_export_control_flow.txt", onnx_text(model));
}

TEST(OnnxExport, MnistCnnPassesBothCheckers) {
  nn::Sequential net("cnn");
  bench::add_mnist_cnn(net);
  auto serve = kiln::function([&](const Tensor& x) { return net(x); },
                              {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 28, 28, 1})}});
  serve(random::uniform({2, 28, 28, 1}, 0.f, 1.f));
  std::string path = temp_path("mnist.onnx");
  kiln::onnx::export_(serve, path, {.input_names = {"images"}});
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  kiln::onnx::pb::ModelProto model = parse_model(bytes);
  EXPECT_EQ(onnx_check(model), "");
  EXPECT_EQ(onnx_python_check(path), "");
  std::multiset<std::string> ops;
  for (const auto& n : model.graph().node()) ops.insert(n.op_type());
  EXPECT_EQ(ops.count("Conv"), 2u);
  EXPECT_EQ(ops.count("MaxPool"), 2u);
  EXPECT_EQ(ops.count("MatMul"), 2u);
  EXPECT_EQ(ops.count("Softmax"), 1u);
  EXPECT_EQ(model.graph().initializer_size() >= 8, true);  // 4 kernels, 4 biases, the shape constants
  int64_t params = 0;
  for (const auto& t : model.graph().initializer())
    if (t.data_type() == kiln::onnx::pb::TensorProto::FLOAT) {
      int64_t n = 1;
      for (int64_t d : t.dims()) n *= d;
      params += n;
    }
  EXPECT_EQ(params, 3274634);
  std::filesystem::remove(path);
}

// Every op sample the registry holds: exported (or refused with the op's
// name), and each export accepted by ONNX's checker. The refused ops are a
// golden list, so a new op without a mapping shows up in review.
TEST(OnnxExport, EveryOpSampleExportsOrIsRefused) {
  std::map<std::string, std::string> refused;  // "op sample k" -> why
  int exported = 0;
  for_each_op_sample([&](const detail::OpDef& op, int k, const graph::Graph& g) {
    try {
      kiln::onnx::pb::ModelProto model = kiln::onnx::export_graph(g, {});
      std::string problem = onnx_check(model);
      EXPECT_EQ(problem, "") << op.name << " sample " << k;
      ++exported;
    } catch (const Unimplemented& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(fmt::format("op {} (node", op.name)), std::string::npos) << msg;
      refused.emplace(fmt::format("{} sample {}", op.name, k), msg.substr(msg.find("cannot be exported: ") + 20));
    } catch (const InvalidArgument& e) {  // strings, resources
      std::string msg = e.what();
      EXPECT_NE(msg.find("which ONNX models cannot hold"), std::string::npos) << msg;
      refused.emplace(fmt::format("{} sample {}", op.name, k), msg);
    }
  });
  std::string text;
  for (const auto& [name, why] : refused) text += fmt::format("{}: {}\n", name, why);
  expect_golden("onnx_refused_ops.txt", text);
  EXPECT_GT(exported, 150);
}

// Each exported sample's values, read back through the importer (which ONNX's
// own backend node tests judge, OnnxImport.BackendNodeTests): what ONNX's
// spec says the exported model computes, against what Kiln computed. Exact
// for integers and bools; floats within a few ulps, as composite forms
// (Log1p as Log(1 + x), Rsqrt as 1 / Sqrt) round on their own. NaN where
// Kiln has NaN. onnxruntime runs the same cases outside ctest
// (scripts/onnxruntime_check.sh).
bool close_enough(const Tensor& got, const Tensor& want, std::string* why) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
    *why = fmt::format("{} {} for {} {}", dtype_name(got.dtype()), got.shape().to_string(), dtype_name(want.dtype()),
                       want.shape().to_string());
    return false;
  }
  if (!is_floating(want.dtype())) {
    if (core::same_bits(got, want)) return true;
    *why = "values differ";
    return false;
  }
  Tensor g = cast(got, DType::Float64), w = cast(want, DType::Float64);
  const double* a = core::data_of<double>(g);
  const double* b = core::data_of<double>(w);
  const double eps = want.dtype() == DType::Float32 ? 1e-6 : 1e-13;
  for (int64_t i = 0; i < want.size(); ++i) {
    bool ok = std::isnan(b[i]) ? std::isnan(a[i]) : a[i] == b[i] || std::abs(a[i] - b[i]) <= eps * (1 + std::abs(b[i]));
    if (!ok) {
      *why = fmt::format("element {}: {} for {}", i, a[i], b[i]);
      return false;
    }
  }
  return true;
}

TEST(OnnxExport, EveryExportedSampleComputesItsValuesWhenImported) {
  int compared = 0;
  for_each_op_sample([&](const detail::OpDef& op, int k, const graph::Graph& g, const schema::OpSample& s) {
    std::string bytes;
    try {
      kiln::onnx::export_graph(g, {}).SerializeToString(&bytes);
    } catch (const Error&) {
      return;  // refused: OnnxExport.EveryOpSampleExportsOrIsRefused
    }
    SCOPED_TRACE(fmt::format("{} sample {}", op.name, k));
    std::vector<Tensor> feed = feeds_with_captures(g, std::vector<Tensor>(s.inputs.begin(), s.inputs.end()));
    auto shared = std::shared_ptr<const graph::Graph>(&g, [](const graph::Graph*) {});
    detail::ResultLeaves want = exec::Plan(shared).run(feed);
    std::map<std::string, Tensor> inputs;
    for (std::size_t i = 0; i < s.inputs.size(); ++i) inputs[g.parameters()[i]->name] = s.inputs[i];
    std::map<std::string, Tensor> got;
    try {
      got = kiln::onnx::import_model_from_string(bytes, std::string(op.name))(inputs);
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
      return;
    }
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
      std::string why;
      EXPECT_TRUE(close_enough(got.at(fmt::format("output_{}", i)), want[i], &why)) << "output " << i << ": " << why;
    }
    ++compared;
  });
  EXPECT_GT(compared, 150);
}

TEST(OnnxExport, RefusesOpsWithoutAFormNamingOpAndNode) {
  Variable v(constant(1.f), {.name = "counter"});
  auto f = kiln::function([&](const Tensor& x) {
    v.assign_add(x);
    return v.read_value();
  });
  f(constant(1.f));
  expect_error<Unimplemented>([&] { kiln::onnx::export_to_string(only_trace(f)); },
                              {"op AssignAddVariable (node 'assign_add_variable')", "ONNX has no form of it"});
}

TEST(OnnxExport, RefusesStringsAndBadNames) {
  auto f = kiln::function([](const Tensor& x) { return x; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({2}, DType::String)}});
  expect_error<InvalidArgument>([&] { kiln::onnx::export_to_string(only_trace(f)); },
                                {"input 'arg0' is string, which ONNX models cannot hold"});
  auto g = kiln::function([](const Tensor& x, const Tensor& y) { return x + y; },
                          {.input_signature = std::vector<TensorSpec>{TensorSpec({2}), TensorSpec({2})}});
  expect_error<InvalidArgument>(
      [&] { kiln::onnx::export_to_string(only_trace(g), {.input_names = {"a", "a"}}); },
      {"input name 'a' is empty or repeated"});
  expect_error<InvalidArgument>([&] { kiln::onnx::export_to_string(only_trace(g), {.input_names = {"a"}}); },
                                {"1 input names for a function of 2 inputs"});
}

}  // namespace
