// Hostile ONNX files (issue #45): each of the bugs found by hand, then a
// generator of many more (huge, negative and symbolic dims, empty and
// mistyped attributes, cycles, loops without trip counts). Whatever the file,
// importing and running it gives a result or one of Kiln's specific errors,
// in bounded time: never another exception, a crash or a hang.
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "fuzz/fuzz_run.h"
#include "kiln/cancellation.h"
#include "kiln/onnx.h"
#include "onnx_builder.h"
#include "onnx_test_util.h"

using namespace kiln;
using namespace kiln::testing;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Control bytes (terminal escapes), newlines too unless `newlines_ok`.
bool has_control_bytes(const std::string& s, bool newlines_ok = false) {
  for (unsigned char c : s)
    if ((c < 0x20 && !(newlines_ok && c == '\n')) || c == 0x7f) return true;
  return false;
}

// A 2x2 int64 tensor.
Tensor indices_2x2(int64_t a, int64_t b, int64_t c, int64_t d) {
  return constant(std::vector<int64_t>{a, b, c, d}, Shape{2, 2});
}

// ---- The bugs found by hand ------------------------------------------------------

// Trilu and EyeLike built their mask on the host at import: a declared
// [2^24, 2^24] input cost ~55 s and 8 GB, then std::bad_alloc. The mask is
// now the graph's work, so importing is instant; small matrices still match
// numpy.triu/tril/eye.
TEST(OnnxHostile, TriluAndEyeLikeOfHugeDeclaredInputsImportAtOnce) {
  for (const char* op : {"Trilu", "EyeLike"}) {
    OnnxBuilder b;
    b.input("x", pb::TensorProto::FLOAT, {{int64_t{1} << 24, int64_t{1} << 24}});
    b.node(op, {"x"}, {"y"}, "mask");
    b.output("y");
    Clock::time_point start = Clock::now();
    saved_model::LoadedSignature sig = kiln::onnx::import_model_from_string(b.bytes(), "huge.onnx");
    EXPECT_LT(seconds_since(start), 5.0) << op;
    EXPECT_EQ(sig.outputs()[0].shape, Shape({int64_t{1} << 24, int64_t{1} << 24})) << op;
  }
  // ONNX's reference (numpy.triu / tril with k, numpy.eye with k) on 3x4.
  Tensor x = constant({{1.f, 2.f, 3.f, 4.f}, {5.f, 6.f, 7.f, 8.f}, {9.f, 10.f, 11.f, 12.f}});
  struct Case {
    int64_t upper, k;
    std::vector<float> want;
  };
  for (const Case& c : {Case{1, 1, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}}, Case{0, -1, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}},
                        Case{1, -7, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}}) {
    OnnxBuilder b;
    b.input("x", pb::TensorProto::FLOAT, {{3, 4}});
    b.initializer("k", constant(c.k, DType::Int64));
    kiln::onnx::set_attr(b.node("Trilu", {"x", "k"}, {"y"}), "upper", c.upper);
    b.output("y");
    Tensor got = kiln::onnx::import_model_from_string(b.bytes())({{"x", x}}).at("y");
    EXPECT_EQ(got.to_vector<float>(), c.want) << c.upper << " " << c.k;
  }
  OnnxBuilder b;
  b.input("x", pb::TensorProto::FLOAT, {{3, 4}});
  pb::NodeProto& eye = b.node("EyeLike", {"x"}, {"y"});
  kiln::onnx::set_attr(eye, "k", int64_t{1});
  kiln::onnx::set_attr(eye, "dtype", int64_t{pb::TensorProto::INT32});
  b.output("y");
  Tensor got = kiln::onnx::import_model_from_string(b.bytes())({{"x", x}}).at("y");
  EXPECT_EQ(got.dtype(), DType::Int32);
  EXPECT_EQ(got.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}));
}

// Slice with a step near +-2^63 took nothing (signed overflow); ONNX (as
// NumPy) takes one element.
TEST(OnnxHostile, SliceStepsNearTwoToThe63TakeOneElement) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    int64_t start, end, step;
    std::vector<float> want;
  };
  for (const Case& c : {Case{0, kMax, kMax, {0.f}}, Case{-1, kMin, kMin, {4.f}}, Case{2, 5, kMax - 1, {2.f}},
                        Case{4, -6, -kMax, {4.f}}, Case{1, 3, kMin, {}}}) {
    OnnxBuilder b;
    b.input("x", pb::TensorProto::FLOAT, {{5}});
    b.initializer("starts", constant(std::vector<int64_t>{c.start}));
    b.initializer("ends", constant(std::vector<int64_t>{c.end}));
    b.initializer("axes", constant(std::vector<int64_t>{0}));
    b.initializer("steps", constant(std::vector<int64_t>{c.step}));
    b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
    b.output("y");
    Tensor got = kiln::onnx::import_model_from_string(b.bytes())({{"x", constant({0.f, 1.f, 2.f, 3.f, 4.f})}}).at("y");
    EXPECT_EQ(got.to_vector<float>(), c.want) << c.start << ":" << c.end << ":" << c.step;
  }
}

// A constant too large to hold is ResourceExhausted before anything is
// allocated, naming the file and the node that asked for it.
TEST(OnnxHostile, HugeConstantsAreResourceExhaustedNamingTheNode) {
  OnnxBuilder b;
  b.initializer("shape", constant(std::vector<int64_t>{int64_t{1} << 24, int64_t{1} << 24}));
  b.node("ConstantOfShape", {"shape"}, {"y"}, "fill");
  b.output("y");
  Clock::time_point start = Clock::now();
  expect_error<ResourceExhausted>([&] { kiln::onnx::import_model_from_string(b.bytes(), "big.onnx"); },
                                  {"kiln::onnx::import_model: big.onnx: node 'fill' (ConstantOfShape): "});
  EXPECT_LT(seconds_since(start), 5.0);
}

// An empty `k` (Trilu) or `training_mode` (Dropout) threw std::out_of_range
// from vector::at: now InvalidArgument naming the file and the node.
TEST(OnnxHostile, EmptyScalarInputsAreInvalidArgumentNamingFileAndNode) {
  OnnxBuilder trilu;
  trilu.input("x", pb::TensorProto::FLOAT, {{2, 2}});
  trilu.initializer("k", constant(std::vector<int64_t>{}, Shape{0}));
  trilu.node("Trilu", {"x", "k"}, {"y"}, "upper_part");
  trilu.output("y");
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(trilu.bytes(), "t.onnx"); },
                                {"t.onnx: node 'upper_part' (Trilu): input 1 ('k') must hold one integer, got 0"});
  OnnxBuilder dropout;
  dropout.input("x", pb::TensorProto::FLOAT, {{2}});
  dropout.initializer("ratio", constant(0.5f));
  dropout.initializer("training_mode", constant(std::vector<bool>{}, Shape{0}));
  dropout.node("Dropout", {"x", "ratio", "training_mode"}, {"y"}, "drop");
  dropout.output("y");
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(dropout.bytes(), "d.onnx"); },
                                {"d.onnx: node 'drop' (Dropout): input 2 ('training_mode') must hold one bool, got 0"});
}

// GatherElements gave 0 for an index outside the data: now InvalidArgument,
// when the model is imported (constant indices) or when it runs (the error
// names the ONNX node the failing graph node came from).
TEST(OnnxHostile, GatherElementsIndexOutOfRangeIsInvalidArgument) {
  Tensor data = constant({{1.f, 2.f}, {3.f, 4.f}});
  OnnxBuilder b;
  b.input("data", pb::TensorProto::FLOAT, {{2, 2}});
  b.input("indices", pb::TensorProto::INT64, {{2, 2}});
  kiln::onnx::set_attr(b.node("GatherElements", {"data", "indices"}, {"y"}, "pick"), "axis", int64_t{1});
  b.output("y");
  auto sig = kiln::onnx::import_model_from_string(b.bytes(), "g.onnx");
  // ONNX's example (negative indices count from the end).
  Tensor got = sig({{"data", data}, {"indices", indices_2x2(0, -1, 1, 0)}}).at("y");
  EXPECT_EQ(got.to_vector<float>(), (std::vector<float>{1.f, 2.f, 4.f, 3.f}));
  for (int64_t bad : {int64_t{2}, int64_t{-3}, std::numeric_limits<int64_t>::max()})
    expect_error<InvalidArgument>([&] { sig({{"data", data}, {"indices", indices_2x2(0, bad, 1, 0)}}); },
                                  {"does not index into shape", "node 'pick/"});

  OnnxBuilder c;
  c.input("data", pb::TensorProto::FLOAT, {{2, 2}});
  c.initializer("indices", indices_2x2(0, 5, 1, 0));
  c.node("GatherElements", {"data", "indices"}, {"y"}, "pick");
  c.output("y");
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(c.bytes(), "g.onnx"); },
                                {"g.onnx: node 'pick' (GatherElements): index 5 is out of range for axis 0 of size 2"});
}

// Names from the file reach error messages escaped: no terminal escapes, a
// readable message when a name is not UTF-8, one line per message.
TEST(OnnxHostile, ErrorMessagesEscapeNamesFromTheFile) {
  for (const std::string& name : {std::string("\x1b]0;pwned\x07\x1b[2J"), std::string("\xff\xfe bad \xc0"),
                                  std::string("two\nlines")}) {
    OnnxBuilder b;
    b.input("x", pb::TensorProto::FLOAT, {{2}});
    b.node("NoSuchOp", {"x"}, {"y"}, name);
    b.output("y");
    try {
      kiln::onnx::import_model_from_string(b.bytes(), "evil\x1b[31m.onnx");
      FAIL() << "imported";
    } catch (const Unimplemented& e) {
      std::string msg = e.what();
      EXPECT_FALSE(has_control_bytes(msg)) << msg;
      EXPECT_NE(msg.find("evil\\x1b[31m.onnx: node '"), std::string::npos) << msg;
      EXPECT_NE(msg.find("Kiln has no op NoSuchOp"), std::string::npos) << msg;
    }
  }
  OnnxBuilder b;
  b.input("x", pb::TensorProto::FLOAT, {{2}});
  b.node("Relu", {"\x1b[2Jnowhere\xff"}, {"y"}, "r");
  b.output("y");
  expect_error<InvalidArgument>([&] { kiln::onnx::import_model_from_string(b.bytes(), "m"); },
                                {"input '\\x1b[2Jnowhere\\xff' is not produced by an earlier node"});
}

// ---- Deadlines ---------------------------------------------------------------------

// A Loop with no trip count, or 2^62 of them, ran forever: a call with a
// timeout ends with DeadlineExceeded soon after it.
TEST(OnnxHostile, EndlessLoopsStopAtTheDeadline) {
  struct Case {
    std::vector<int64_t> trip_count;
    bool empty_body;
  };
  for (const Case& c : {Case{{}, false}, Case{{int64_t{1} << 62}, false}, Case{{}, true}}) {
    auto sig = kiln::onnx::import_model_from_string(endless_loop(c.trip_count, c.empty_body).bytes(), "loop.onnx");
    Clock::time_point start = Clock::now();
    try {
      sig({{"v0", constant(0.f)}}, {.timeout = std::chrono::milliseconds(200)});
      FAIL() << "the loop ended";
    } catch (const DeadlineExceeded& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("the call ran past its deadline of 0.2 s"), std::string::npos) << msg;
    }
    double took = seconds_since(start);
    EXPECT_GE(took, 0.2);
    EXPECT_LT(took, 3.0);
  }
  // A bounded loop under a generous deadline runs to the end.
  auto sig = kiln::onnx::import_model_from_string(endless_loop({1000}).bytes(), "loop.onnx");
  Tensor v = sig({{"v0", constant(0.f)}}, {.timeout = std::chrono::seconds(60)}).at("v");
  EXPECT_EQ(v.to_vector<float>(), std::vector<float>{1000.f});
}

// Another thread stops a call through the flag: Cancelled.
TEST(OnnxHostile, EndlessLoopStopsWhenCancelled) {
  auto sig = kiln::onnx::import_model_from_string(endless_loop({}).bytes(), "loop.onnx");
  std::atomic<bool> stop{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  expect_error<Cancelled>([&] { sig({{"v0", constant(0.f)}}, {.cancel = &stop}); },
                          {"the call was cancelled"});
  canceller.join();
}

// ---- The generator ---------------------------------------------------------------------

// Which errors a hostile file may give: the specific kinds. A bare
// kiln::Error or Internal means an exception Kiln did not expect (a
// std::out_of_range, a bug) was wrapped on the way up.
bool is_expected_error(const Error& e) {
  return dynamic_cast<const InvalidArgument*>(&e) || dynamic_cast<const Unimplemented*>(&e) ||
         dynamic_cast<const ResourceExhausted*>(&e) || dynamic_cast<const OutOfRange*>(&e) ||
         dynamic_cast<const NotFound*>(&e) || dynamic_cast<const FailedPrecondition*>(&e) ||
         dynamic_cast<const DeadlineExceeded*>(&e);
}

// Every op the importer maps, with control flow and one it does not.
const std::vector<std::string>& all_ops() {
  static const std::vector<std::string> ops = {
      "Abs", "Neg", "Sign", "Floor", "Ceil", "Round", "Relu", "Sqrt", "Exp", "Log", "Tanh", "Sigmoid", "Sin", "Cos",
      "Erf", "Softplus", "Softsign", "Not", "Identity", "Reciprocal", "Elu", "Selu", "LeakyRelu", "HardSigmoid", "Add",
      "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Less", "LessOrEqual", "Greater",
      "GreaterOrEqual", "And", "Or", "Xor", "Where", "Cast", "Clip", "Constant", "ConstantOfShape", "Reshape", "Flatten",
      "Transpose", "Squeeze", "Unsqueeze", "Shape", "Concat", "Gather", "GatherElements", "GatherND", "ScatterND",
      "Tile", "Expand", "Pad", "Slice", "Split", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin",
      "ArgMax", "ArgMin", "Softmax", "LogSoftmax", "CumSum", "TopK", "MatMul", "Gemm", "Conv", "MaxPool",
      "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum",
      "ReduceLogSumExp", "IsNaN", "Size", "Dropout", "Hardmax", "Trilu", "LayerNormalization", "Range",
      "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss", "BatchNormalization", "InstanceNormalization", "OneHot",
      "IsInf", "EyeLike", "Tan", "Sinh", "Cosh", "CastLike", "PRelu", "ThresholdedRelu", "If", "Loop", "NoSuchOp"};
  return ops;
}

// One random hostile model: a node of `op` on inputs drawn from hostile
// declarations and initializers, with hostile attributes. Each part is
// usually plain (a [2, 3] float input, no attributes, output "y") and
// hostile with some odds, so that most models get past the first check
// and a few hostile parts meet deeper in the importer and the kernels.
class HostileModels {
 public:
  explicit HostileModels(uint32_t seed) : rng_(seed) {}

  OnnxBuilder make(const std::string& op, std::string* description) {
    OnnxBuilder b(chance(0.9) ? 17 : pick({13, 11, 1}));
    const int num_inputs = pick({1, 1, 2, 2, 3, 0, 4});
    std::vector<std::string> inputs;
    for (int i = 0; i < num_inputs; ++i) inputs.push_back(add_input(b, i, description));
    const std::string name = chance(0.8) ? "n" : pick<std::string>({"", "\x1b[2J\xff", std::string(300, 'a')});
    std::vector<std::string> outputs{"y"};
    if (chance(0.2)) outputs = pick<std::vector<std::string>>({{"y", "z"}, {"y", "y"}, {}});
    pb::NodeProto& node = b.node(op, inputs, outputs, name);
    if (chance(0.6))
      for (int a = pick({1, 1, 2, 3}); a > 0; --a) add_attr(b, node, description);
    b.output(chance(0.95) ? "y" : pick<std::string>({"x0", "missing"}));
    *description += fmt::format(" -> {} ({} attrs)", op, node.attribute_size());
    return b;
  }

 private:
  template <class T> T pick(std::initializer_list<T> options) {
    std::uniform_int_distribution<std::size_t> d(0, options.size() - 1);
    return *(options.begin() + d(rng_));
  }
  int pick(std::initializer_list<int> options) { return pick<int>(options); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  std::string add_input(OnnxBuilder& b, int i, std::string* description) {
    const std::string name = fmt::format("x{}", i);
    const int64_t huge = int64_t{1} << 24;
    const double kind = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (kind < 0.5) {  // a declared input: plain, or huge, symbolic, empty, scalar, unknown rank
      Dims dims = chance(0.5) ? Dims{{2, 3}}
                              : pick<Dims>({{{huge, huge}}, {{int64_t{1} << 62}}, {{kSymbolic, 3}}, {{0, 3}}, {{}},
                                            {{1, 2, 3, 1}}, {{}, true}, {{-5}}, {{kSymbolic, kSymbolic, kSymbolic}},
                                            {{3, 3}}, {{2, 2, 2, 2}}});
      int type = chance(0.7) ? pb::TensorProto::FLOAT
                             : pick({pb::TensorProto::INT64, pb::TensorProto::BOOL, pb::TensorProto::INT32,
                                     pb::TensorProto::FLOAT16, 0, 999});
      b.input(name, type, dims);
      *description += fmt::format(" input {}:{}[{}]", name, type, fmt::join(dims.dims, ","));
      return name;
    }
    if (kind < 0.8) {  // an integer initializer: a plain axis or shape, or empty, huge, negative
      std::vector<int64_t> v = pick<std::vector<int64_t>>(
          {{1}, {0}, {2, 3}, {}, {-1}, {int64_t{1} << 62}, {INT64_MIN}, {INT64_MAX}, {huge, huge}, {2, -1},
           {1, 1, 1, 1, 1, 1, 1, 1, 1}, {-3}, {6}});
      b.initializer(name, constant(v, Shape{static_cast<int64_t>(v.size())}));
      *description += fmt::format(" ints {}=[{}]", name, fmt::join(v, ","));
      return name;
    }
    if (kind < 0.95) {  // a scalar: float (NaN too), bool (empty too), int32
      Tensor t = pick<Tensor>({constant(1.5f), constant(std::numeric_limits<float>::quiet_NaN()), constant(true),
                               constant(std::vector<bool>{}, Shape{0}), constant(int32_t{-7})});
      b.initializer(name, t);
      *description += fmt::format(" scalar {}", name);
      return name;
    }
    if (chance(0.5)) {
      *description += " (left out)";
      return "";
    }
    *description += " (undefined name)";
    return "nowhere";
  }

  void add_attr(OnnxBuilder& b, pb::NodeProto& node, std::string* description) {
    pb::AttributeProto& a = *node.add_attribute();
    a.set_name(pick<std::string>({"axis", "axes", "k", "perm", "pads", "to", "value", "upper", "keepdims", "dtype",
                                  "split", "kernel_shape", "strides", "group", "alpha", "epsilon", "largest",
                                  "sorted", "body", "then_branch", "else_branch", "allowzero", "transA", "mode"}));
    switch (pick({0, 0, 1, 2, 3, 4, 4, 5, 6, 7})) {
      case 0: a.set_type(pb::AttributeProto::INT); a.set_i(pick<int64_t>({0, 1, -1, int64_t{1} << 62, INT64_MIN, 7})); break;
      case 1: a.set_type(pb::AttributeProto::FLOAT); a.set_f(std::numeric_limits<float>::quiet_NaN()); break;
      case 2: a.set_type(pb::AttributeProto::STRING); a.set_s("\x1b[31m"); break;
      case 3: a.set_type(pb::AttributeProto::INTS); break;  // empty
      case 4: {
        a.set_type(pb::AttributeProto::INTS);
        for (int64_t v : pick<std::vector<int64_t>>({{1, 0}, {int64_t{1} << 62, -1}, {0, 0, 0, 0}, {-1}, {2, 2}}))
          a.add_ints(v);
        break;
      }
      case 5: a.set_type(pb::AttributeProto::TENSOR); break;  // an empty tensor
      case 6: {  // a graph: empty, or reading the node's own output (a cycle)
        a.set_type(pb::AttributeProto::GRAPH);
        if (chance(0.5)) b.node("Identity", {"y"}, {"y2"}, "inner", a.mutable_g());
        b.output("y2", a.mutable_g());
        break;
      }
      default: a.set_type(pb::AttributeProto::INT); a.set_f(2.5f); break;  // the type says one field, another is set
    }
    *description += fmt::format(" @{}:{}", a.name(), static_cast<int>(a.type()));
  }

  std::mt19937 rng_;
};

// How the generated models ended: imported, ran, and each error's kind.
struct Outcomes {
  int imported = 0, ran = 0;
  std::map<std::string, int> errors;
};

// Imports and runs (small inputs, the fuzz target's limits and 3 s deadline)
// one model; a failure names the case.
void check_hostile(const std::string& bytes, const std::string& description, Outcomes& outcomes) {
  Clock::time_point start = Clock::now();
  try {
    saved_model::LoadedSignature sig = kiln::onnx::import_model_from_string(bytes, "hostile.onnx");
    ++outcomes.imported;
    outcomes.ran += fuzz::run_signature(sig) ? 1 : 0;
  } catch (const Error& e) {
    ++outcomes.errors[typeid(e).name()];
    if (std::getenv("KILN_HOSTILE_VERBOSE")) std::cout << description << "\n  " << e.what() << "\n";
    EXPECT_TRUE(is_expected_error(e)) << description << ": " << typeid(e).name() << ": " << e.what();
    EXPECT_FALSE(has_control_bytes(e.what(), /*newlines_ok=*/true)) << description << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << description << ": not a kiln::Error: " << typeid(e).name() << ": " << e.what();
  }
  EXPECT_LT(seconds_since(start), 5.0) << description;
}

std::string report_of(const Outcomes& outcomes, int cases) {
  std::string report = fmt::format("{} hostile models: {} imported, {} ran;", cases, outcomes.imported, outcomes.ran);
  for (const auto& [kind, n] : outcomes.errors) report += fmt::format(" {} {}", n, kind);
  return report;
}

// Every op, each input position in turn hostile (the inputs before it
// plain: a [2, 3] float, then the integer 1), and each attribute name with
// each hostile value: the empty `k` and `training_mode` class of bug, swept.
TEST(OnnxHostile, SweptModelsGiveResultsOrKilnErrors) {
  fuzz::FuzzLimits limits;
  Outcomes outcomes;
  int cases = 0;
  const std::vector<std::pair<std::string, Tensor>> values = {
      {"empty ints", constant(std::vector<int64_t>{}, Shape{0})},
      {"empty bools", constant(std::vector<bool>{}, Shape{0})},
      {"empty floats", constant(std::vector<float>{}, Shape{0})},
      {"2^62", constant(std::vector<int64_t>{int64_t{1} << 62})},
      {"INT64_MIN", constant(std::vector<int64_t>{INT64_MIN})},
      {"-1", constant(std::vector<int64_t>{-1})},
      {"[2^24, 2^24]", constant(std::vector<int64_t>{int64_t{1} << 24, int64_t{1} << 24})},
      {"NaN", constant(std::numeric_limits<float>::quiet_NaN())},
      {"an int32 -7", constant(int32_t{-7})}};
  auto plain_inputs = [](OnnxBuilder& b, int count) {
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
      names.push_back(fmt::format("p{}", i));
      if (i == 0) b.input(names.back(), pb::TensorProto::FLOAT, {{2, 3}});
      else b.initializer(names.back(), constant(std::vector<int64_t>{1}));
    }
    return names;
  };
  for (const std::string& op : all_ops()) {
    for (int position = 0; position < 4; ++position)
      for (const auto& [what, value] : values) {
        OnnxBuilder b;
        std::vector<std::string> inputs = plain_inputs(b, position);
        b.initializer("h", value);
        inputs.push_back("h");
        b.node(op, inputs, {"y"}, "n");
        b.output("y");
        check_hostile(b.bytes(), fmt::format("{} with input {} {}", op, position, what), outcomes);
        ++cases;
      }
    for (const char* name : {"axis", "axes", "k", "perm", "pads", "to", "value", "upper", "keepdims", "dtype", "split",
                             "kernel_shape", "strides", "dilations", "group", "alpha", "epsilon", "largest", "sorted",
                             "body", "then_branch", "else_branch", "allowzero", "mode", "shape", "value_ints"})
      for (int kind = 0; kind < 5; ++kind) {
        OnnxBuilder b;
        std::vector<std::string> inputs = plain_inputs(b, 2);
        pb::AttributeProto& a = *b.node(op, inputs, {"y"}, "n").add_attribute();
        a.set_name(name);
        switch (kind) {
          case 0: a.set_type(pb::AttributeProto::INTS); break;  // empty
          case 1: a.set_type(pb::AttributeProto::FLOAT); a.set_f(1.5f); break;  // the wrong type
          case 2: a.set_type(pb::AttributeProto::INT); a.set_i(int64_t{1} << 62); break;
          case 3: a.set_type(pb::AttributeProto::TENSOR); break;  // an empty tensor
          default: a.set_type(pb::AttributeProto::GRAPH); break;  // an empty graph
        }
        b.output("y");
        check_hostile(b.bytes(), fmt::format("{} with attribute {} of kind {}", op, name, kind), outcomes);
        ++cases;
      }
  }
  std::cout << report_of(outcomes, cases) << "\n";
  EXPECT_GT(outcomes.imported, cases / 20) << report_of(outcomes, cases);
}

TEST(OnnxHostile, GeneratedModelsGiveResultsOrKilnErrors) {
  fuzz::FuzzLimits limits;
  Outcomes outcomes;
  HostileModels gen(45);
  int cases = 0;
  for (int round = 0; round < 6; ++round)
    for (const std::string& op : all_ops()) {
      std::string description = fmt::format("case {}:", cases++);
      OnnxBuilder b = gen.make(op, &description);
      check_hostile(b.bytes(), description, outcomes);
    }
  // Structural damage: a cycle through two nodes, a name defined twice,
  // Loops without trip counts and with 2^62, subgraphs nested past the limit.
  OnnxBuilder cycle;
  cycle.input("x", pb::TensorProto::FLOAT, {{2}});
  cycle.node("Add", {"x", "b"}, {"a"});
  cycle.node("Relu", {"a"}, {"b"});
  cycle.output("b");
  check_hostile(cycle.bytes(), "cycle", outcomes);
  OnnxBuilder twice;
  twice.input("x", pb::TensorProto::FLOAT, {{2}});
  twice.node("Relu", {"x"}, {"y"});
  twice.node("Neg", {"x"}, {"y"});
  twice.output("y");
  check_hostile(twice.bytes(), "defined twice", outcomes);
  check_hostile(endless_loop({}).bytes(), "loop without a trip count", outcomes);
  check_hostile(endless_loop({int64_t{1} << 62}).bytes(), "loop of 2^62", outcomes);
  OnnxBuilder deep;
  deep.input("c", pb::TensorProto::BOOL, {{}});
  pb::GraphProto* g = &deep.graph();
  for (int depth = 0; depth < 40; ++depth) {
    pb::NodeProto& n = deep.node("If", {"c"}, {"y"}, fmt::format("if{}", depth), g);
    kiln::onnx::set_graph_attr(n, "else_branch").add_output()->set_name("c");
    g = &kiln::onnx::set_graph_attr(n, "then_branch");
    g->add_output()->set_name("y");
  }
  deep.output("y");
  check_hostile(deep.bytes(), "ifs nested 40 deep", outcomes);
  const std::string report = report_of(outcomes, cases + 5);
  std::cout << report << "\n";
  // The generator must reach past the parser: a fair share imports and runs.
  EXPECT_GT(outcomes.imported, cases / 10) << report;
  EXPECT_GT(outcomes.ran, cases / 20) << report;
}

}  // namespace
