// The ONNX fuzz corpus (tests/fuzz_corpus/onnx): real exports and hostile
// models (truncated, cycles, wrong types, huge dims). This test imports and
// runs each as the fuzz target (tests/fuzz/fuzz_onnx.cpp) does: it works or
// throws a kiln::Error, never anything else. KILN_UPDATE_GOLDEN=1 rewrites
// the seeds from fresh exports.
#include <fmt/format.h>

#include <limits>

#include "fuzz/fuzz_run.h"
#include "kiln/onnx.h"
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::testing;
namespace fs = std::filesystem;

namespace {

fs::path corpus_dir() { return fs::path(KILN_GOLDEN_DIR_FOR_ONNX).parent_path() / "fuzz_corpus" / "onnx"; }

std::string bytes_of(const kiln::onnx::pb::ModelProto& m) { return m.SerializeAsString(); }

// The exported loop with its counter starting at INT32_MIN: 2^31 legal
// iterations, which the fuzz limits end (libFuzzer first found it as a
// timeout).
std::string long_loop(const std::string& control_flow) {
  kiln::onnx::pb::ModelProto m = parse_model(control_flow);
  std::string counter;
  for (const kiln::onnx::pb::NodeProto& node : m.graph().node())
    if (node.op_type() == "Loop") counter = node.input(2);
  for (kiln::onnx::pb::TensorProto& init : *m.mutable_graph()->mutable_initializer())
    if (init.name() == counter) {
      init.clear_raw_data();
      init.add_int32_data(std::numeric_limits<int32_t>::min());
    }
  return bytes_of(m);
}

// name -> bytes, and whether the model must import and run.
std::vector<std::tuple<std::string, std::string, bool>> fresh_seeds() {
  std::vector<std::tuple<std::string, std::string, bool>> out;
  Variable w(constant({0.5f, -1.f, 2.f, 3.f}), {.name = "w"});
  auto affine = kiln::function([&](const Tensor& x) { return relu(x * w.read_value() + 1.5f); },
                               {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 4})}});
  Tensor f = random::uniform({3, 3, 1, 2}, -1.f, 1.f, DType::Float32, 1);
  auto cnn = kiln::function(
      [&](const Tensor& x) {
        Tensor y = nn::max_pool2d(relu(nn::conv2d(x, f, 1, "SAME")), 2, 2, "VALID");
        return nn::softmax(reshape(y, Shape{-1, 8}));
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 4, 4, 1})}});
  auto loop = kiln::function(
      [](const Tensor& n) {
        auto [i, acc] = while_loop([&](const Tensor& i, const Tensor&) { return i < n; },
                                   [](const Tensor& i, const Tensor& a) { return std::tuple{i + 1, a * 2.f}; },
                                   std::tuple{constant(0), constant(1.f)});
        return cond(acc > 4.f, [&] { return acc; }, [&] { return -acc; });
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({}, DType::Int32)}});
  // A Conv with a group per channel, GatherND and ScatterND (none and add).
  Tensor dw = random::uniform({3, 3, 2, 2}, -1.f, 1.f, DType::Float32, 2);
  auto depthwise = kiln::function([&](const Tensor& x) { return nn::depthwise_conv2d(x, dw, 2, "SAME"); },
                                  {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 5, 5, 2})}});
  Tensor indices = constant({{2, 1}, {0, 0}});
  auto nd = kiln::function(
      [&](const Tensor& t) {
        return tensor_scatter_nd_update(t, indices, gather_nd(t, indices) * 2.f) + scatter_nd(indices, gather_nd(t, indices), t.shape());
      },
      {.input_signature = std::vector<TensorSpec>{TensorSpec({3, 2})}});
  std::string good = kiln::onnx::export_to_string(only_trace(affine));
  out.emplace_back("affine.onnx", good, true);
  out.emplace_back("cnn.onnx", kiln::onnx::export_to_string(only_trace(cnn)), true);
  const std::string control_flow = kiln::onnx::export_to_string(only_trace(loop));
  out.emplace_back("control_flow.onnx", control_flow, true);
  out.emplace_back("hostile_long_loop.onnx", long_loop(control_flow), false);
  out.emplace_back("depthwise.onnx", kiln::onnx::export_to_string(only_trace(depthwise)), true);
  out.emplace_back("nd_ops.onnx", kiln::onnx::export_to_string(only_trace(nd)), true);
  out.emplace_back("hostile_truncated.onnx", good.substr(0, good.size() / 2), false);
  kiln::onnx::pb::ModelProto m = parse_model(good);
  kiln::onnx::pb::NodeProto& first = *m.mutable_graph()->mutable_node(0);
  first.set_input(0, m.graph().node(1).output(0));
  out.emplace_back("hostile_cycle.onnx", bytes_of(m), false);
  m = parse_model(good);
  m.mutable_graph()->mutable_initializer(0)->add_dims(int64_t{1} << 47);
  out.emplace_back("hostile_huge_initializer.onnx", bytes_of(m), false);
  m = parse_model(good);
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(kiln::onnx::pb::TensorProto::STRING);
  out.emplace_back("hostile_string_input.onnx", bytes_of(m), false);
  m = parse_model(good);
  kiln::onnx::pb::NodeProto& reshape = *m.mutable_graph()->add_node();
  reshape.set_op_type("ConstantOfShape");
  reshape.add_input("big_shape");
  reshape.add_output("big");
  kiln::onnx::pb::TensorProto& shape = *m.mutable_graph()->add_initializer();
  shape.set_name("big_shape");
  shape.set_data_type(kiln::onnx::pb::TensorProto::INT64);
  shape.add_dims(3);
  for (int64_t d : {int64_t{1} << 20, int64_t{1} << 20, int64_t{1} << 20}) shape.add_int64_data(d);
  *m.mutable_graph()->add_output() = m.graph().output(0);
  m.mutable_graph()->mutable_output(1)->set_name("big");
  out.emplace_back("hostile_huge_constant_of_shape.onnx", bytes_of(m), false);
  return out;
}

TEST(OnnxCorpus, SeedsImportAndRunOrRaiseKilnErrors) {
  fuzz::FuzzLimits limits;
  fs::path dir = corpus_dir();
  auto seeds = fresh_seeds();
  if (std::getenv("KILN_UPDATE_GOLDEN")) {
    fs::create_directories(dir);
    for (const auto& [name, bytes, ok] : seeds) std::ofstream(dir / name, std::ios::binary) << bytes;
  }
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++files;
    std::ifstream in(e.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bool must_run = false;
    for (const auto& [name, fresh, ok] : seeds)
      if (name == e.path().filename()) must_run = ok;
    try {
      saved_model::LoadedSignature sig = kiln::onnx::import_model_from_string(bytes, e.path().filename().string());
      bool ran = fuzz::run_signature(sig);
      EXPECT_TRUE(ran || !must_run) << e.path() << ": small inputs cannot feed it";
    } catch (const Error& err) {
      EXPECT_FALSE(must_run) << e.path() << ": " << err.what();
    } catch (const std::exception& err) {
      ADD_FAILURE() << e.path() << " threw a non-Kiln error: " << err.what();
    }
  }
  EXPECT_EQ(files, static_cast<int>(seeds.size()));
}

TEST(OnnxCorpus, ALoopPastTheFuzzLimitIsResourceExhausted) {
  std::ifstream in(corpus_dir() / "hostile_long_loop.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  saved_model::LoadedSignature sig = kiln::onnx::import_model_from_string(bytes, "hostile_long_loop.onnx");
  std::map<std::string, Tensor> inputs;
  for (const saved_model::TensorInfo& info : sig.inputs()) inputs.emplace(info.name, fuzz::small_input(info));
  fuzz::FuzzLimits limits;
  try {
    sig(inputs);
    ADD_FAILURE() << "the loop ran to its end";
  } catch (const ResourceExhausted& e) {
    EXPECT_NE(std::string(e.what()).find("While: the loop wants more than 10000 iterations, the limit set by "
                                         "set_max_while_iterations"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
