// Weight rows (src/passes/pad_weight_rows.cpp): a matrix variable read only as
// MatMul's b, where MatMul's rule would copy it into longer rows, is read and
// kept in longer rows. Training so gives the eager bits; eager reads and
// writes between steps see and set the current value; the optimizer updates
// the longer rows in place; variables read any other way stay dense.
#include "passes_test_util.h"

#include <cstdlib>
#include <string>

#include "core/tensor_impl.h"
#include "counting_allocator.h"
#include "dense_trainer.h"
#include "function/traced_graph.h"
#include "kernel_test_util.h"
#include "kiln/kiln.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "ops/variable_ops.h"

using namespace kiln;
using namespace kiln::passes_testing;
using kiln::ops::MatmulBPadding;

namespace {

// MatMul's rule pads only on CPUs without AVX-512; the tests force it so that
// the pass runs on every machine (the bits are the same either way).
using PaddingMode = kiln::testing::MatmulPaddingMode;

using kiln::testing::expect_same_training;
using kiln::testing::expect_same_variables;
using kiln::testing::optimized;
using kiln::testing::StepFn;
// 64 inputs, 1024 units: kernels of 64 x 1024 and 1024 x 3.
struct Trainer : kiln::testing::DenseTrainer {
  Trainer() : DenseTrainer(64, 1024) {}
};

int nodes_with(const graph::Graph& g, const char* attr) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->attrs.has(attr);
  return n;
}

Tensor batch() { return random::normal({32, 64}, 0, 1, DType::Float32, 7); }

}  // namespace

TEST(WeightRows, TrainingWithKernelsInLongerRowsKeepsTheEagerBits) {
  PaddingMode mode(MatmulBPadding::kAlways);
  kiln::testing::expect_traced_training_is_eagers<Trainer>(batch(), [](const graph::Graph& g) {
    // Both kernels' reads; their forwards and the transposed input gradient.
    EXPECT_EQ(nodes_with(g, ops::kReadRowPadding), 2) << g.to_string();
    EXPECT_EQ(nodes_with(g, ops::kMatmulBRowPadding), 3) << g.to_string();
  });
}

// Between traced steps, eager code reads the kernel (made dense from the
// longer rows) and writes it (assign, assign_add): the next step reads what
// was written, not the longer rows of before.
TEST(WeightRows, EagerReadsAndWritesBetweenStepsSeeTheCurrentValue) {
  PaddingMode mode(MatmulBPadding::kAlways);
  const Tensor x = batch();
  Trainer traced, eager;
  auto f = traced.traced();
  kiln::testing::step_both(f, traced, eager, x);
  expect_bitwise(traced.kernel(0).read_value(), eager.kernel(0).read_value());
  const Tensor replacement = random::normal({64, 1024}, 0, 0.1, DType::Float32, 8);
  kiln::testing::step_both(f, traced, eager, x,
                           [&](kiln::testing::DenseTrainer& t) { t.kernel(0).assign(replacement); });
  expect_same_variables(traced.model.variables(), eager.model.variables());
  const Tensor delta = random::normal({1024, 3}, 0, 0.1, DType::Float32, 9);
  kiln::testing::step_both(f, traced, eager, x, [&](kiln::testing::DenseTrainer& t) { t.kernel(1).assign_add(delta); });
  expect_same_training(traced, eager);
}

// The optimizer writes the longer rows where they are: the same buffer from
// step to step, and a warm step allocates nothing (oneDNN's execute
// allocates inside, counted apart).
TEST(WeightRows, TheOptimizerUpdatesTheLongerRowsInPlace) {
  PaddingMode mode(MatmulBPadding::kAlways);
  const Tensor x = batch();
  Trainer trainer;
  auto f = trainer.traced();
  for (int warm = 0; warm < 3; ++warm) f(x);
  detail::VariableState& state = *trainer.kernel(0).state();
  const float* rows = nullptr;
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    rows = core::data_of<float>(state.value_in_longer_rows(ops::kMatmulBPad));
  }
  const int64_t total = kiln::testing::heap_allocations(), inside = kiln::testing::onednn_execute_allocations();
  f(x);
  const int64_t onednn = kiln::testing::onednn_execute_allocations() - inside;
  EXPECT_EQ(kiln::testing::heap_allocations() - total - onednn, 0);
  std::lock_guard<std::mutex> lock(state.mutex);
  EXPECT_EQ(core::data_of<float>(state.value_in_longer_rows(ops::kMatmulBPad)), rows);
}

// Where both forms are held when Adam updates, it writes the one read last:
// a traced step (longer rows) with eager reads between steps keeps the
// longer rows; eager training after a traced evaluation keeps the dense value
// (either way one copy per step at most, as MatMul's own).
TEST(WeightRows, AnUpdateWritesTheFormReadLast) {
  PaddingMode mode(MatmulBPadding::kAlways);
  const Tensor x = batch();
  auto holds = [](const Variable& v) {
    detail::VariableState& s = *v.state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return std::pair<bool, bool>{s.holds_dense(), s.holds_longer_rows()};
  };
  Trainer traced, eager;
  auto f = traced.traced();
  f(x);
  eager.step(x);
  EXPECT_EQ(holds(traced.kernel(0)), std::make_pair(false, true));
  expect_bitwise(eager.kernel(0).read_value(), traced.kernel(0).read_value());
  EXPECT_EQ(holds(traced.kernel(0)), std::make_pair(true, true));
  f(x);
  eager.step(x);
  EXPECT_EQ(holds(traced.kernel(0)), std::make_pair(false, true));

  // A traced evaluation, then eager steps on the same model.
  auto evaluate = kiln::function([&](const Tensor& x) { return traced.model(x, false); });
  const std::string g = optimized(evaluate, x).to_string();
  ASSERT_NE(g.find("row_padding=16"), std::string::npos) << g;
  expect_bitwise(eager.model(x, false), evaluate(x));
  for (int step = 0; step < 2; ++step) {
    traced.step(x);
    eager.step(x);
    EXPECT_EQ(holds(traced.kernel(0)), std::make_pair(true, false)) << "eager step " << step;
  }
  expect_same_training(traced, eager);
}

// A read still held when the optimizer runs (a product after the update
// reads it) keeps the value it read: the update writes new longer rows
// instead of the held ones, its padding zeros.
TEST(WeightRows, AReadHeldAcrossTheUpdateKeepsItsValue) {
  PaddingMode mode(MatmulBPadding::kAlways);
  const Tensor x = batch(), grad = random::normal({64, 1024}, 0, 1, DType::Float32, 10);
  const Tensor initial = random::normal({64, 1024}, 0, 0.1, DType::Float32, 11);
  Variable w(initial, {.name = "w"}), m(zeros({64, 1024}), {.name = "m"}), v(zeros({64, 1024}), {.name = "v"});
  Variable w_eager(initial), m_eager(zeros({64, 1024})), v_eager(zeros({64, 1024}));
  auto f = kiln::function([&](const Tensor& x) {
    Tensor read = w.read_value();
    Tensor before = kiln::matmul(x, read);
    apply_adam(w, m, v, grad, constant(0.01f), 0.9, 0.999, 1e-7);
    // Not matmul(x, read) again, which tracing would share with `before`.
    return std::tuple<Tensor, Tensor>{before, kiln::matmul(x + 1.f, read)};
  });
  const std::string g = optimized(f, x).to_string();
  ASSERT_NE(g.find("row_padding=16"), std::string::npos) << g;
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE(::testing::Message() << "step " << step);
    const Tensor want_before = kiln::matmul(x, w_eager.read_value());
    const Tensor want_after = kiln::matmul(x + 1.f, w_eager.read_value());
    auto [before, after] = f(x);
    expect_bitwise(want_before, before);
    expect_bitwise(want_after, after);
    apply_adam(w_eager, m_eager, v_eager, grad, constant(0.01f), 0.9, 0.999, 1e-7);
    expect_bitwise(w_eager.read_value(), w.read_value());
  }
  detail::VariableState& state = *w.state();
  std::lock_guard<std::mutex> lock(state.mutex);
  const Tensor& rows = state.value_in_longer_rows(ops::kMatmulBPad);
  const float* p = core::data_of<float>(rows);
  for (int64_t r = 0; r < 64; ++r)
    for (int64_t j = 1024; j < 1024 + ops::kMatmulBPad; ++j) ASSERT_EQ(p[r * (1024 + ops::kMatmulBPad) + j], 0.f);
}

// A read with another reader (a reduction, a product's a, a result), or where
// MatMul's rule would not copy b, or with the pass switched off, stays dense.
TEST(WeightRows, OtherReadersTheRuleAndTheSwitchKeepVariablesDense) {
  Variable w(random::normal({64, 1024}, 0, 1, DType::Float32, 3), {.name = "w"});
  Variable square_w(random::normal({64, 64}, 0, 1, DType::Float32, 4), {.name = "square_w"});
  const Tensor x = batch();
  using Fn = std::function<Tensor(const Tensor&)>;
  auto graph_of = [&](Fn body) {
    auto f = kiln::function(body);
    return optimized(f, x).to_string();
  };
  const Fn only_b = [&](const Tensor& x) { return kiln::matmul(x, w.read_value()); };
  const Fn also_summed = [&](const Tensor& x) {
    Tensor v = w.read_value();
    return kiln::matmul(x, v) + kiln::sum(v);
  };
  // square_w is a product's a only.
  const Fn also_a = [&](const Tensor& x) {
    return kiln::matmul(x, w.read_value()) + kiln::sum(kiln::matmul(square_w.read_value(), x, false, true));
  };
  auto also_result = kiln::function([&](const Tensor& x) {
    Tensor v = w.read_value();
    return std::tuple<Tensor, Tensor>{kiln::matmul(x, v), v};
  });
  {
    PaddingMode mode(MatmulBPadding::kAlways);
    EXPECT_NE(graph_of(only_b).find("row_padding=16"), std::string::npos) << graph_of(only_b);
    const std::string summed = graph_of(also_summed);
    EXPECT_EQ(summed.find("row_padding"), std::string::npos) << summed;
    const std::string a = graph_of(also_a);
    EXPECT_NE(a.find("shape=(64, 1024), row_padding=16"), std::string::npos) << a;
    EXPECT_EQ(a.find("shape=(64, 64), row_padding"), std::string::npos) << a;
    const std::string result = optimized(also_result, x).to_string();
    EXPECT_EQ(result.find("row_padding"), std::string::npos) << result;
    setenv("KILN_DISABLE_PASSES", "weightrows", 1);
    const std::string off = graph_of(only_b);
    unsetenv("KILN_DISABLE_PASSES");
    EXPECT_EQ(off.find("row_padding"), std::string::npos) << off;
  }
  PaddingMode never(MatmulBPadding::kNever);
  EXPECT_EQ(graph_of(only_b).find("row_padding"), std::string::npos) << graph_of(only_b);
}

// A captured eager tensor read only as b: one Const in longer rows, made when
// the plan is built, instead of MatMul's copy on every call; the same bits.
// One with another reader stays as it is, and so does a buffer of outside
// memory, whose owner may write it between calls.
TEST(WeightRows, ACapturedWeightIsCopiedIntoLongerRowsOnce) {
  PaddingMode mode(MatmulBPadding::kAlways);
  const Tensor w = random::normal({64, 1024}, 0, 1, DType::Float32, 12), x = batch();
  auto dense = kiln::function([&](const Tensor& x) { return kiln::relu(kiln::matmul(x, w)); });
  const graph::Graph& g = optimized(dense, x);
  EXPECT_NE(g.to_string().find("capture_rows = Const() {value=<float32 (64, 1040)>} : float32[64,1040]"), std::string::npos)
      << g.to_string();
  EXPECT_EQ(nodes_with(g, ops::kMatmulBRowPadding), 1) << g.to_string();
  for (int call = 0; call < 2; ++call) expect_bitwise(kiln::relu(kiln::matmul(x, w)), dense(x));

  auto also_summed = kiln::function([&](const Tensor& x) { return kiln::matmul(x, w) + kiln::sum(w); });
  const std::string summed = optimized(also_summed, x).to_string();
  EXPECT_EQ(summed.find("b_row_padding"), std::string::npos) << summed;

  std::vector<float> outside = w.to_vector<float>();
  const Tensor external = core::adopt_buffer(
      DType::Float32, Shape{64, 1024},
      core::make_external_buffer(DType::Float32, 64 * 1024, outside.data(), [](void*) noexcept {}, nullptr));
  auto on_external = kiln::function([&](const Tensor& x) { return kiln::matmul(x, external); });
  const std::string ext = optimized(on_external, x).to_string();
  EXPECT_EQ(ext.find("b_row_padding"), std::string::npos) << ext;
  expect_bitwise(kiln::matmul(x, w), on_external(x));
  outside[5] = 1e6f;  // the owner writes its memory: the next call reads it
  expect_bitwise(kiln::matmul(x, kiln::constant(outside, Shape{64, 1024})), on_external(x));
}

// Only Adam's updates write the longer rows in place: a variable another
// writer updates (SGD's assign_sub, AdamW's decay, a constraint's assign) or
// that is read densely too would have its two forms remade from each other
// every step, so it stays dense; training gives the eager bits either way.
TEST(WeightRows, VariablesOtherWritersUpdateStayDense) {
  PaddingMode mode(MatmulBPadding::kAlways);
  const Tensor x = batch();
  auto train = [&](auto make_optimizer, auto after_step) {
    nn::Sequential traced_model{"mlp"}, eager_model{"mlp"};
    for (nn::Sequential* m : {&traced_model, &eager_model}) {
      m->add(nn::Dense(1024, {.activation = "relu", .input_shape = Shape{64}, .seed = 1}));
      m->add(nn::Dense(3, {.seed = 2}));
    }
    auto traced_opt = make_optimizer(), eager_opt = make_optimizer();
    auto step = [&](nn::Sequential& model, auto& opt, const Tensor& x) {
      GradientTape tape;
      Tensor loss = kiln::sum(square(model(x, true)));
      std::vector<Variable> vars = model.trainable_variables();
      opt.apply_gradients(tape.gradient(loss, vars), vars);
      after_step(vars[0]);
    };
    auto f = kiln::function(StepFn([&](const Tensor& x) { step(traced_model, traced_opt, x); }));
    const std::string g = optimized(f, x).to_string();
    for (int i = 0; i < 2; ++i) {
      f(x);
      step(eager_model, eager_opt, x);
    }
    expect_same_variables(traced_model.variables(), eager_model.variables());
    return g;
  };
  auto nothing = [](const Variable&) {};
  const std::string sgd = train([] { return nn::SGD(0.01); }, nothing);
  EXPECT_EQ(sgd.find("row_padding"), std::string::npos) << sgd;
  const std::string adamw = train([] { return nn::AdamW(1e-2); }, nothing);
  EXPECT_EQ(adamw.find("row_padding"), std::string::npos) << adamw;
  // A constraint on the first kernel: that kernel stays dense, the second is padded.
  const std::string clipped =
      train([] { return nn::Adam(1e-2); }, [](const Variable& w) { w.assign(kiln::clip(w.read_value(), -0.05f, 0.05f)); });
  EXPECT_EQ(clipped.find("shape=(64, 1024), row_padding"), std::string::npos) << clipped;
  EXPECT_NE(clipped.find("shape=(1024, 3), row_padding=16"), std::string::npos) << clipped;
}

// MatMul's own rule on this machine decides for MNIST's dense layer at batch 50.
TEST(WeightRows, TheMnistDenseLayerFollowsMatMulsRule) {
  Variable w(random::normal({3136, 1024}, 0, 0.01, DType::Float32, 5), {.name = "dense1"});
  const Tensor x = random::normal({50, 3136}, 0, 1, DType::Float32, 6);
  auto f = kiln::function(std::function<Tensor(const Tensor&)>(
      [&](const Tensor& x) { return kiln::relu(kiln::matmul(x, w.read_value())); }));
  const std::string g = optimized(f, x).to_string();
  EXPECT_EQ(g.find("row_padding=16") != std::string::npos, ops::matmul_pads_b(50, 3136, 1024)) << g;
  expect_bitwise(kiln::relu(kiln::matmul(x, w.read_value())), f(x));
}

TEST(WeightRows, ReadInLongerRowsNeedsAFloatMatrix) {
  Variable v(constant({1.f, 2.f, 3.f}), {.name = "vector"});
  const Tensor in[] = {v.handle()};
  const schema::Attrs attrs{{"dtype", DType::Float32}, {"shape", Shape{3}}, {ops::kReadRowPadding, 16}};
  kiln::testing::expect_error<InvalidArgument>([&] { runtime::run_eager(ops::read_variable_op(), in, attrs); },
                                               {"row_padding=16 needs a float32 matrix of known shape, got float32 (3,)"});
  expect_bitwise(v.read_value(), constant({1.f, 2.f, 3.f}));
}
