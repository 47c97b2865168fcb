// Optimizer-update fusion (src/passes/fuse_adam.cpp): a traced step's
// ApplyAdam nodes become one FusedApplyAdam, and the variables and slots it
// leaves have the unfused step's bits.
#include "passes_test_util.h"

#include <array>
#include <cstdlib>
#include <string>

#include "counting_allocator.h"
#include "dense_trainer.h"
#include "kernel_test_util.h"
#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"
#include "function/traced_graph.h"
#include "kiln/kiln.h"

using namespace kiln;
using namespace kiln::passes_testing;
using kiln::testing::expect_tensor;

namespace {

using AdamFn = kiln::testing::StepFn;
// Its default sizes (1000 inputs, 300 units): the first kernel's gradient
// (1000 x 300) is made in five bands of rows, the last one shorter; the
// second's (300 x 3) in one.
using Trainer = kiln::testing::DenseTrainer;
using kiln::testing::expect_same_training;
using kiln::testing::optimized;

// A function traced with the adam pass off (KILN_DISABLE_PASSES is read when
// a trace is optimized).
template <class F>
auto traced_without_adam_fusion(F&& make, const Tensor& x) {
  setenv("KILN_DISABLE_PASSES", "adam", 1);
  auto f = make();
  f.get_concrete_function(x);
  unsetenv("KILN_DISABLE_PASSES");
  return f;
}

}  // namespace

TEST(AdamFusion, AStepsUpdatesBecomeOneOpWithTheSameBits) {
  Tensor x = random::normal({8, 1000}, 0, 1, DType::Float32, 7);
  Trainer fused, unfused, eager;
  auto f = fused.traced();
  auto g = traced_without_adam_fusion([&] { return unfused.traced(); }, x);
  EXPECT_EQ(count_ops(optimized(f, x), "FusedApplyAdam"), 1) << optimized(f, x).to_string();
  EXPECT_EQ(count_ops(optimized(f, x), "ApplyAdam"), 0);
  EXPECT_EQ(count_ops(optimized(g, x), "ApplyAdam"), 4);
  // The kernels' gradients (x^T dy) are made by the fused op, in bands.
  EXPECT_EQ(count_ops(optimized(g, x), "MatMul") - count_ops(optimized(f, x), "MatMul"), 2);
  for (const auto& n : optimized(f, x).nodes())
    if (n->op->name == "FusedApplyAdam")
      EXPECT_EQ(n->attrs.get_ints("grad_from_matmul"), (std::vector<int64_t>{1, 0, 1, 0}));
  for (int step = 0; step < 3; ++step) {
    f(x);
    g(x);
    eager.step(x);
  }
  // The slots too: the optimizer's variables are the iteration count, the
  // learning rate and each weight's m and v.
  expect_same_training(fused, unfused);
  expect_same_training(fused, eager);
}

// An empty batch makes an empty gradient MatMul (K = 0): the fused op takes
// MatMul's own kernel for it (zeros), not bands, with the unfused bits.
TEST(AdamFusion, AnEmptyBatchsGradientIsMatMulsZeros) {
  Tensor x = zeros({0, 6}, DType::Float32);
  Trainer fused(6, 4), unfused(6, 4);
  auto f = fused.traced();
  auto g = traced_without_adam_fusion([&] { return unfused.traced(); }, x);
  EXPECT_EQ(count_ops(optimized(f, x), "FusedApplyAdam"), 1) << optimized(f, x).to_string();
  for (const auto& n : optimized(f, x).nodes())
    if (n->op->name == "FusedApplyAdam")
      EXPECT_EQ(n->attrs.get_ints("grad_from_matmul"), (std::vector<int64_t>{1, 0, 1, 0}));
  for (int step = 0; step < 2; ++step) {
    f(x);
    g(x);
  }
  expect_same_training(fused, unfused);
}

// Four variables with their slots, and a counter.
struct FourVariables {
  std::vector<Variable> w, m, v;
  Variable counter{constant(0.f), {.name = "counter"}};
  FourVariables() {
    const std::vector<float> initial[4] = {{1.f, 2.f}, {3.f}, {4.f, 5.f, 6.f}, {7.f}};
    for (int i = 0; i < 4; ++i) {
      const std::string name = "w" + std::to_string(i);
      w.emplace_back(constant(initial[i]), VariableOptions{.name = name});
      m.emplace_back(zeros_like(w.back().read_value()), VariableOptions{.name = name + "/m"});
      v.emplace_back(zeros_like(w.back().read_value()), VariableOptions{.name = name + "/v"});
    }
  }
  // {w0, w1} fuse; the counter's update ends the run; w2 has other betas; w3
  // has w2's betas but another alpha.
  void program(const Tensor& alpha) {
    apply_adam(w[0], m[0], v[0], constant({0.5f, -1.f}), alpha, 0.9, 0.999, 1e-7);
    apply_adam(w[1], m[1], v[1], constant({2.f}), alpha, 0.9, 0.999, 1e-7);
    counter.assign_add(constant(1.f));
    apply_adam(w[2], m[2], v[2], constant({1.f, 1.f, -3.f}), alpha, 0.8, 0.99, 1e-7);
    apply_adam(w[3], m[3], v[3], constant({-0.25f}), alpha * 2.f, 0.8, 0.99, 1e-7);
  }
};

namespace {

// Two steps of a Trainer(inputs, units) at `batch`, traced with and without
// the Adam fusion, end with the same bits in every variable and slot.
void expect_fusion_keeps_the_bits(int64_t batch, int64_t inputs, int64_t units, uint64_t seed) {
  Tensor x = random::normal({batch, inputs}, 0, 1, DType::Float32, seed);
  Trainer fused(inputs, units), unfused(inputs, units);
  auto f = fused.traced();
  auto g = traced_without_adam_fusion([&] { return unfused.traced(); }, x);
  for (int step = 0; step < 2; ++step) {
    f(x);
    g(x);
  }
  expect_same_training(fused, unfused);
}

// After three calls, a traced step of a Trainer(inputs, units) at batch 8 makes
// no heap allocation of Kiln's own (oneDNN's execute allocates inside,
// counted apart).
void expect_a_warm_step_allocates_nothing(int64_t inputs, int64_t units) {
  Tensor x = random::normal({8, inputs}, 0, 1, DType::Float32, 9);
  Trainer trainer(inputs, units);
  auto f = trainer.traced();
  for (int warm = 0; warm < 3; ++warm) f(x);
  const int64_t total = kiln::testing::heap_allocations(), inside = kiln::testing::onednn_execute_allocations();
  f(x);
  const int64_t onednn = kiln::testing::onednn_execute_allocations() - inside;
  EXPECT_EQ(kiln::testing::heap_allocations() - total - onednn, 0);
}

}  // namespace

// The MNIST model's dense layer (3136 -> 1024 at batch 50): 49 bands of 64
// rows, shared by the threads, give the whole gradient's bits.
TEST(AdamFusion, BandsOfAnMnistSizedLayerHaveTheWholeGradientsBits) { expect_fusion_keeps_the_bits(50, 3136, 1024, 8); }

// The same layer with the bands' b copied into longer rows (forced here; by
// rule on CPUs without AVX-512, where oneDNN's sgemm would read b's rows 4 KB
// apart in place and run the bands about 2x slower than the whole product).
// Whether the probe then takes the bands is a matter of speed, the bits are
// the unfused step's either way; and a warm step allocates nothing with the
// copy's buffers.
TEST(AdamFusion, BandsWithBCopiedIntoLongerRowsKeepTheBitsAndAllocateNothing) {
  kiln::testing::MatmulPaddingMode mode(kiln::ops::MatmulBPadding::kAlways);
  expect_fusion_keeps_the_bits(50, 3136, 1024, 11);
  expect_a_warm_step_allocates_nothing(600, 512);
}

// A layer past the size whose update the band probe times with scratch states
// (16M elements: 4097 x 4096): the probe times the products alone, and either
// way the bits are the whole gradient's.
TEST(AdamFusion, ALayerTooLargeToProbeWithItsUpdateKeepsTheBits) { expect_fusion_keeps_the_bits(2, 4097, 4096, 10); }

// A traced training step keeps the plan's promise: after the first calls, a
// call makes no heap allocation of Kiln's own (oneDNN's execute allocates
// inside, counted apart), the banded gradients' primitives and buffers
// included.
TEST(AdamFusion, AStepAllocatesNothing) { expect_a_warm_step_allocates_nothing(1000, 300); }

TEST(AdamFusion, GroupsStopAtOtherStatefulOpsAndOtherHyperparameters) {
  FourVariables traced, eager;
  auto f = kiln::function(AdamFn([&](const Tensor& alpha) { traced.program(alpha); }));
  const Tensor alpha = constant(0.01f);
  const graph::Graph& g = optimized(f, alpha);
  EXPECT_EQ(count_ops(g, "FusedApplyAdam"), 1) << g.to_string();
  EXPECT_EQ(count_ops(g, "ApplyAdam"), 2) << g.to_string();
  // The fused node keeps the program order: the counter's update waits for it.
  for (const auto& n : g.nodes())
    if (n->op->name == "AssignAddVariable")
      EXPECT_EQ(n->control_inputs.at(0)->op->name, "FusedApplyAdam") << g.to_string();
  for (int step = 0; step < 2; ++step) {
    f(alpha);
    eager.program(alpha);
  }
  expect_tensor<float>(traced.counter.read_value(), {}, {2.f});
  for (int i = 0; i < 4; ++i) {
    expect_bitwise(traced.w[i].read_value(), eager.w[i].read_value());
    expect_bitwise(traced.m[i].read_value(), eager.m[i].read_value());
    expect_bitwise(traced.v[i].read_value(), eager.v[i].read_value());
  }
}

TEST(AdamFusion, AVariableUpdatedTwiceIsUpdatedTwice) {
  // Two consecutive updates of one variable fuse; the kernel then runs them
  // one after the other, and the second reads what the first wrote.
  auto make = [] {
    return std::array<Variable, 3>{Variable(constant({1.f, -2.f}), {.name = "w"}),
                                   Variable(constant({0.f, 0.f}), {.name = "m"}),
                                   Variable(constant({0.f, 0.f}), {.name = "v"})};
  };
  auto fused_vars = make(), unfused_vars = make();
  auto twice = [](std::array<Variable, 3>& s) {
    return kiln::function(AdamFn([&s](const Tensor& alpha) {
      apply_adam(s[0], s[1], s[2], constant({3.f, 0.5f}), alpha, 0.9, 0.999, 1e-7);
      apply_adam(s[0], s[1], s[2], constant({-1.f, 2.f}), alpha, 0.9, 0.999, 1e-7);
    }));
  };
  const Tensor alpha = constant(0.1f);
  auto f = twice(fused_vars);
  auto g = traced_without_adam_fusion([&] { return twice(unfused_vars); }, alpha);
  EXPECT_EQ(count_ops(optimized(f, alpha), "FusedApplyAdam"), 1);
  f(alpha);
  g(alpha);
  for (int i = 0; i < 3; ++i) expect_bitwise(fused_vars[i].read_value(), unfused_vars[i].read_value());
}

TEST(AdamFusion, ErrorsNameTheVariable) {
  Variable w(constant({1.f, 2.f}), {.name = "w"}), m(constant({0.f, 0.f}), {.name = "m"}),
      v(constant({0.f, 0.f}), {.name = "v"});
  Variable w1(constant({1.f}), {.name = "w1"}), m1(constant({0.f}), {.name = "m1"}),
      v1(constant({0.f}), {.name = "v1"});
  // The gradient's dims are unknown when traced: the kernel checks them.
  auto f = kiln::function(
      AdamFn([&](const Tensor& g) {
        apply_adam(w, m, v, constant({1.f, 1.f}), constant(0.1f), 0.9, 0.999, 1e-7);
        apply_adam(w1, m1, v1, g, constant(0.1f), 0.9, 0.999, 1e-7);
      }),
      {.input_signature = std::vector<TensorSpec>{TensorSpec(Shape{None}, DType::Float32)}});
  EXPECT_EQ(count_ops(optimized(f, constant({1.f})), "FusedApplyAdam"), 1);
  kiln::testing::expect_error<InvalidArgument>([&] { f(constant({1.f, 2.f, 3.f})); },
                                               {"FusedApplyAdam: var ('w1') is float32 (1,) but the gradient is "
                                                "float32 (3,)"});
  // Nothing was written: the checks come before any update.
  expect_tensor<float>(w.read_value(), {2}, {1.f, 2.f});
}

TEST(AdamFusion, SwitchTurnsItOff) {
  setenv("KILN_DISABLE_PASSES", "adam", 1);
  passes::PassOptions o = passes::PassOptions::from_env();
  unsetenv("KILN_DISABLE_PASSES");
  EXPECT_FALSE(o.adam);
  EXPECT_TRUE(o.pool_grad && o.fuse);
}

// mixed_bfloat16: a float32 variable's gradient is a bf16 value widened by a
// Cast. The fused op takes the bf16 value instead (the Casts go) and widens
// it a band of rows at a time (3136 x 1024: 49 bands of 64 rows; 7 x 1024:
// one band; a vector: one row; rank 4: rows of its last dim) with the Casts'
// bits.
TEST(AdamFusion, ABfloat16GradientIsWidenedInBandsWithTheCastsBits) {
  struct Slots {
    std::vector<Variable> w, m, v;
    Tensor x, x7;
    Slots(const std::vector<Tensor>& initial, Tensor x, Tensor x7) : x(std::move(x)), x7(std::move(x7)) {
      for (int i = 0; i < 4; ++i) {
        const Tensor& init = initial[i];
        const std::string name = "w" + std::to_string(i);
        w.emplace_back(init, VariableOptions{.name = name});
        m.emplace_back(zeros_like(init), VariableOptions{.name = name + "/m"});
        v.emplace_back(zeros_like(init), VariableOptions{.name = name + "/v"});
      }
    }
    auto traced() {
      return kiln::function(AdamFn([this](const Tensor& dy) {
        const Tensor grads[] = {cast(matmul(x, dy, /*transpose_a=*/true), DType::Float32),
                                cast(matmul(x7, dy, /*transpose_a=*/true), DType::Float32),
                                cast(kiln::sum(dy, {0}), DType::Float32),
                                cast(reshape(matmul(x7, dy * dy, true), {7, 4, 16, 16}), DType::Float32)};
        for (int i = 0; i < 4; ++i) apply_adam(w[i], m[i], v[i], grads[i], constant(1e-3f), 0.9, 0.999, 1e-7);
      }));
    }
  };
  std::vector<Tensor> initial;
  for (const Shape& shape : {Shape{3136, 1024}, Shape{7, 1024}, Shape{1024}, Shape{7, 4, 16, 16}})
    initial.push_back(random::normal(shape, 0, 0.1, DType::Float32, 20));
  const Tensor x = cast(random::normal({50, 3136}, 0, 1, DType::Float32, 32), DType::BFloat16);
  const Tensor x7 = cast(random::normal({50, 7}, 0, 1, DType::Float32, 33), DType::BFloat16);
  Slots fused(initial, x, x7), unfused(initial, x, x7);
  const Tensor dy = cast(random::normal({50, 1024}, 0, 1, DType::Float32, 34), DType::BFloat16);
  auto f = fused.traced();
  auto g = traced_without_adam_fusion([&] { return unfused.traced(); }, dy);
  const graph::Graph& opt = optimized(f, dy);
  EXPECT_EQ(count_ops(opt, "FusedApplyAdam"), 1) << opt.to_string();
  EXPECT_EQ(count_ops(opt, "Cast"), 0) << opt.to_string();
  EXPECT_EQ(count_ops(optimized(g, dy), "Cast"), 4);
  for (int step = 0; step < 2; ++step) {
    f(dy);
    g(dy);
  }
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(fused.w[i].name());
    expect_bitwise(fused.w[i].read_value(), unfused.w[i].read_value());
    expect_bitwise(fused.m[i].read_value(), unfused.m[i].read_value());
    expect_bitwise(fused.v[i].read_value(), unfused.v[i].read_value());
  }
}
