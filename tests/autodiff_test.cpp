// GradientTape (docs/design-notes.md, "Autodiff"): recording, watching, persistence, nesting,
// variables, tapes inside kiln::function, Functions and cond under a tape.
#include "test_util.h"

#include "kiln/gradient.h"

using namespace kiln;
using namespace kiln::testing;

TEST(GradientTape, SquareOfAWatchedTensor) {
  Tensor x = constant(3.0f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  expect_tensor<float>(tape.gradient(y, x), Shape{}, {6.f});
}

TEST(GradientTape, NonScalarTargetsAreSummed) {
  Tensor x = constant({1.f, 2.f, 3.f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;  // d(sum(x^2))/dx = 2x
  expect_tensor<float>(tape.gradient(y, x), Shape{3}, {2.f, 4.f, 6.f});
}

TEST(GradientTape, OutputGradientsWeighTheTargets) {
  Tensor x = constant({1.f, 2.f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * 3.f;
  std::vector<Tensor> g = tape.gradient({y}, {x}, {constant({1.f, 10.f})});
  expect_tensor<float>(g[0], Shape{2}, {3.f, 30.f});
}

TEST(GradientTape, BroadcastInputsGetReducedGradients) {
  Tensor x = constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor b = constant({10.f, 20.f});
  GradientTape tape;
  tape.watch(x);
  tape.watch(b);
  Tensor y = x * b + b;
  std::vector<Tensor> g = tape.gradient(y, {x, b});
  expect_tensor<float>(g[0], Shape{2, 2}, {10.f, 20.f, 10.f, 20.f});
  expect_tensor<float>(g[1], Shape{2}, {1.f + 3.f + 2.f, 2.f + 4.f + 2.f});
}

TEST(GradientTape, TrainableVariablesAreWatchedWhenRead) {
  Variable w(constant({1.f, 2.f}), {.name = "w"});
  Variable frozen(constant(5.f), {.name = "frozen", .trainable = false});
  GradientTape tape;
  Tensor y = sum(w.read_value() * w.read_value()) * frozen.read_value();
  std::vector<Tensor> g = tape.gradient(y, std::vector<Variable>{w, frozen});
  expect_tensor<float>(g[0], Shape{2}, {10.f, 20.f});
  EXPECT_FALSE(g[1].defined());  // not trainable: not watched, no gradient
  ASSERT_EQ(tape.watched_variables().size(), 1u);
  EXPECT_EQ(tape.watched_variables()[0].name(), "w");
}

TEST(GradientTape, WatchAccessedVariablesCanBeTurnedOff) {
  Variable w(constant(2.f));
  GradientTape tape({.watch_accessed_variables = false});
  Tensor y = w.read_value() * 3.f;
  EXPECT_FALSE(tape.gradient(y, w).defined());
}

TEST(GradientTape, UnconnectedAndIntegerSourcesGiveUndefinedResults) {
  Tensor x = constant(2.f), unused = constant(1.f), n = constant(3);
  GradientTape tape;
  tape.watch(x);
  tape.watch(unused);
  tape.watch(n);
  Tensor y = x * cast(n, DType::Float32);
  std::vector<Tensor> g = tape.gradient(y, {x, unused, n});
  expect_tensor<float>(g[0], Shape{}, {3.f});
  EXPECT_FALSE(g[1].defined());
  EXPECT_FALSE(g[2].defined());
}

TEST(GradientTape, StopGradientBlocksTheFlow) {
  Tensor x = constant(3.f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * stop_gradient(x);  // d/dx = stop_gradient(x) = 3
  expect_tensor<float>(tape.gradient(y, x), Shape{}, {3.f});
}

TEST(GradientTape, NonPersistentTapeAllowsOneGradient) {
  Tensor x = constant(3.f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x;
  tape.gradient(y, x);
  expect_error<FailedPrecondition>([&] { tape.gradient(y, x); }, {"non-persistent", "persistent = true"});
}

TEST(GradientTape, PersistentTapeAllowsSeveral) {
  Tensor x = constant(3.f);
  GradientTape tape({.persistent = true});
  tape.watch(x);
  Tensor y = x * x, z = y * y;
  expect_tensor<float>(tape.gradient(y, x), Shape{}, {6.f});
  expect_tensor<float>(tape.gradient(z, x), Shape{}, {108.f});  // 4 x^3
  expect_tensor<float>(tape.gradient(z, y), Shape{}, {18.f});   // 2 y
}

TEST(GradientTape, NestedTapesGiveSecondDerivatives) {
  Tensor x = constant(2.f);
  GradientTape outer;
  outer.watch(x);
  Tensor dy;
  {
    GradientTape inner;
    inner.watch(x);
    Tensor y = x * x * x;
    dy = inner.gradient(y, x);  // 3 x^2 = 12, recorded by the outer tape
  }
  expect_tensor<float>(dy, Shape{}, {12.f});
  expect_tensor<float>(outer.gradient(dy, x), Shape{}, {12.f});  // 6 x
}

TEST(GradientTape, StopRecordingPauses) {
  Tensor x = constant(2.f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * x, z;
  {
    auto pause = tape.stop_recording();
    z = y * x;  // not recorded: z is not connected to x on this tape
  }
  std::vector<Tensor> g = tape.gradient({y, z}, {x});
  expect_tensor<float>(g[0], Shape{}, {4.f});  // only y's 2x
}

TEST(GradientTape, MismatchedOutputGradientIsAnError) {
  Tensor x = constant({1.f, 2.f});
  GradientTape tape;
  tape.watch(x);
  Tensor y = x * 2.f;
  expect_error<InvalidArgument>([&] { tape.gradient({y}, {x}, {constant({1.f, 2.f, 3.f})}); },
                                {"output gradient 0", "(3,)", "(2,)"});
}

TEST(GradientTape, NullSourceOrTargetIsAnError) {
  GradientTape tape;
  expect_error<InvalidArgument>([&] { tape.gradient(Tensor(), constant(1.f)); }, {"target 0 is null"});
  expect_error<InvalidArgument>([&] { tape.watch(Tensor()); }, {"null"});
}

TEST(GradientTape, ReductionsAndElementwiseChain) {
  Tensor x = constant({{1.0, 2.0}, {3.0, 4.0}});
  GradientTape tape;
  tape.watch(x);
  Tensor y = mean(tanh(x) * exp(x), 1);  // per row
  Tensor g = tape.gradient(y, x);
  std::vector<double> xv = {1, 2, 3, 4}, want;
  for (double v : xv) want.push_back(0.5 * ((1 - std::tanh(v) * std::tanh(v)) * std::exp(v) + std::tanh(v) * std::exp(v)));
  expect_tensor_near<double>(g, Shape{2, 2}, want, 1e-12);
}

// ---- inside kiln::function ------------------------------------------------------

TEST(GradientTapeTraced, ATrainingStepIsOneGraph) {
  Variable w(constant({1.f, -1.f}), {.name = "w"});
  auto step = function([&](const Tensor& x) {
    GradientTape tape;
    Tensor loss = sum(square(w.read_value() * x - 1.f));
    Tensor g = tape.gradient(loss, w);
    w.assign_sub(g * 0.1f);
    return loss;
  });
  // Eager reference with the same arithmetic.
  Tensor x = constant({2.f, 3.f});
  float w0 = 1.f, w1 = -1.f;
  for (int i = 0; i < 3; ++i) {
    float l = (w0 * 2 - 1) * (w0 * 2 - 1) + (w1 * 3 - 1) * (w1 * 3 - 1);
    expect_tensor_near<float>(step(x), Shape{}, {l}, 1e-4f);
    w0 -= 0.1f * 2 * (w0 * 2 - 1) * 2;
    w1 -= 0.1f * 2 * (w1 * 3 - 1) * 3;
  }
  expect_tensor_near<float>(w.read_value(), Shape{2}, {w0, w1}, 1e-5f);
  EXPECT_EQ(step.tracing_count(), 1);
}

TEST(GradientTapeTraced, TapeOutsideDoesNotSeeTheTraceButRecordsTheCall) {
  auto f = function([](const Tensor& x) { return x * x * x; });
  Tensor x = constant(2.f);
  GradientTape tape;
  tape.watch(x);
  Tensor y = f(x);
  expect_tensor<float>(y, Shape{}, {8.f});
  expect_tensor<float>(tape.gradient(y, x), Shape{}, {12.f});
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(GradientTapeTraced, FunctionWithVariableArgumentsUnderATape) {
  // The seeds' dense_layer, with an elementwise body (matmul has its own tests).
  auto layer = function([](const Tensor& x, const Variable& w, const Variable& b) { return x * w.read_value() + b.read_value(); });
  Variable w(constant({1.f, 2.f, 3.f})), b(constant({0.f, 0.f, 0.f}));
  Tensor x = constant({{1.f, 2.f, 3.f}});
  GradientTape tape;
  Tensor y = layer(x, w, b);
  std::vector<Tensor> g = tape.gradient(y, std::vector<Variable>{w, b});
  expect_tensor<float>(g[0], Shape{3}, {1.f, 2.f, 3.f});
  expect_tensor<float>(g[1], Shape{3}, {1.f, 1.f, 1.f});
}

TEST(GradientTapeTraced, BackwardGraphIsCachedAcrossCalls) {
  auto f = function([](const Tensor& x) { return sin(x); });
  for (float v : {0.f, 1.f, 2.f}) {
    Tensor x = constant(v);
    GradientTape tape;
    tape.watch(x);
    expect_tensor_near<float>(tape.gradient(f(x), x), Shape{}, {std::cos(v)}, 1e-6f);
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(GradientTapeTraced, GradientOfAGradientInsideAFunction) {
  auto d2 = function([](const Tensor& x) {
    GradientTape outer;
    outer.watch(x);
    GradientTape inner;
    inner.watch(x);
    Tensor y = x * x * x * x;
    Tensor dy = inner.gradient(y, x);
    return outer.gradient(dy, x);  // 12 x^2
  });
  expect_tensor<float>(d2(constant(2.f)), Shape{}, {48.f});
}

TEST(GradientTape, ValueAndGradOfAFunctionOfTensors) {
  auto vg = value_and_grad([](const Tensor& x, const Tensor& y) { return sum(x * x * y); });
  auto [value, grads] = vg(constant({1.f, 2.f}), constant({3.f, 4.f}));
  expect_tensor<float>(value, Shape{}, {1 * 1 * 3.f + 2 * 2 * 4.f});
  expect_tensor<float>(grads[0], Shape{2}, {6.f, 16.f});  // 2 x y
  expect_tensor<float>(grads[1], Shape{2}, {1.f, 4.f});   // x^2
  auto traced = function([&](const Tensor& x, const Tensor& y) { return vg(x, y).second[0]; });
  expect_tensor<float>(traced(constant({1.f, 2.f}), constant({3.f, 4.f})), Shape{2}, {6.f, 16.f});
}

// ---- identity: equal values are different tensors (docs/design-notes.md, "Tensor identity") ----

// TF's autodiff guide with values that collide: a variable holding 2 and the
// literal 2, two variables holding 3, a watched constant equal to a literal;
// each eagerly and traced.
TEST(TensorIdentity, AVariableTimesTheLiteralItHolds) {
  Variable x(2.0f);
  GradientTape t;
  Tensor y = x.read_value() * 2.0f;
  expect_tensor<float>(t.gradient(y, std::vector<Variable>{x})[0], Shape{}, {2.f});
  auto f = function([&] {
    GradientTape t2;
    return t2.gradient(x.read_value() * 2.0f, std::vector<Variable>{x})[0];
  });
  expect_tensor<float>(f(), Shape{}, {2.f});
}

TEST(TensorIdentity, AVariableSquaredByPow) {
  Variable x(2.0f);
  GradientTape t;
  Tensor y = pow(x.read_value(), 2.0f);
  expect_tensor<float>(t.gradient(y, std::vector<Variable>{x})[0], Shape{}, {4.f});
  auto f = function([&] {
    GradientTape t2;
    return t2.gradient(pow(x.read_value(), 2.0f), std::vector<Variable>{x})[0];
  });
  expect_tensor<float>(f(), Shape{}, {4.f});
}

TEST(TensorIdentity, TwoVariablesHoldingOneValue) {
  Variable a(3.0f), b(3.0f, {.trainable = false});
  GradientTape t;
  Tensor y = a.read_value() + b.read_value();
  std::vector<Tensor> g = t.gradient(y, std::vector<Variable>{a, b});
  expect_tensor<float>(g[0], Shape{}, {1.f});
  EXPECT_FALSE(g[1].defined());
  auto f = function([&] {
    GradientTape t2;
    return t2.gradient(a.read_value() + b.read_value(), std::vector<Variable>{a})[0];
  });
  expect_tensor<float>(f(), Shape{}, {1.f});
}

TEST(TensorIdentity, AWatchedConstantEqualToALiteral) {
  Tensor x = constant(1.0f), y = constant(2.0f);
  GradientTape t;
  t.watch(x);
  t.watch(y);
  Tensor z = x * 2.0f;
  std::vector<Tensor> g = t.gradient(z, {GradientSource(x), GradientSource(y)});
  expect_tensor<float>(g[0], Shape{}, {2.f});
  EXPECT_FALSE(g[1].defined());  // z does not depend on y
  auto f = function([](const Tensor& a, const Tensor& b) {
    GradientTape t2;
    t2.watch(a);
    t2.watch(b);
    std::vector<Tensor> g2 = t2.gradient(a * 2.0f, {GradientSource(a), GradientSource(b)});
    EXPECT_FALSE(g2[1].defined());
    return g2[0];
  });
  expect_tensor<float>(f(x, y), Shape{}, {2.f});
}

TEST(TensorIdentity, ScalarsOfEqualValueAreDistinctTensors) {
  Tensor a = constant(2.0f), b = constant(2.0f);
  EXPECT_NE(a.impl(), b.impl());
  Variable v(a);
  EXPECT_NE(v.read_value().impl(), a.impl());
  EXPECT_NE(v.read_value().impl(), v.read_value().impl());
}

TEST(TensorIdentity, AForwardingOpGivesANewTensor) {
  // reshape to the same shape hands back its input's buffer, never the input.
  Tensor x = constant({1.f, 2.f});
  Tensor y = reshape(x, Shape{2});
  EXPECT_NE(y.impl(), x.impl());
  GradientTape t;
  t.watch(y);
  Tensor z = x * 3.f;  // depends on x, not on y
  EXPECT_FALSE(t.gradient(z, y).defined());
}

TEST(TensorIdentity, AFunctionReturningItsArgumentGivesANewTensor) {
  auto f = function([](const Tensor& a) { return std::tuple{a, a * 2.f}; });
  Tensor x = constant(3.f);
  auto [same, twice] = f(x);
  EXPECT_NE(same.impl(), x.impl());
  GradientTape t;
  t.watch(x);
  auto [s, d] = f(x);
  std::vector<Tensor> g = t.gradient(s + d, {GradientSource(x)});
  expect_tensor<float>(g[0], Shape{}, {3.f});
}

// The side of zero TF's kernels take for the piecewise gradients.
TEST(GradientTape, PiecewiseGradientsAtZeroFollowTF) {
  auto grad_at = [](Tensor (*f)(Tensor, SourceLocation), float v) {
    Tensor x = constant(v);
    GradientTape t;
    t.watch(x);
    return t.gradient(f(x, SourceLocation::current()), x).to_vector<float>()[0];
  };
  EXPECT_FLOAT_EQ(grad_at(selu, 0.f), 1.0507009873554805f);  // SeluGrad: scale unless y < 0
  EXPECT_FLOAT_EQ(grad_at(elu, 0.f), 1.f);                   // EluGrad: 1 unless y < 0
  EXPECT_FLOAT_EQ(grad_at(relu, 0.f), 0.f);                  // ReluGrad: 0 unless y > 0
  EXPECT_FLOAT_EQ(grad_at(abs, 0.f), 0.f);                   // sign(0)
  Tensor x = constant(1.f), y = constant(1.f);
  GradientTape t({.persistent = true});
  t.watch(x);
  t.watch(y);
  std::vector<Tensor> gmax = t.gradient(maximum(x, y), {GradientSource(x), GradientSource(y)});
  EXPECT_EQ(gmax[0].to_vector<float>()[0], 1.f);  // a tie goes to x, as TF's x >= y
  EXPECT_EQ(gmax[1].to_vector<float>()[0], 0.f);
  std::vector<Tensor> gclip = t.gradient(clip(x, 1.f, 2.f), {GradientSource(x)});
  EXPECT_EQ(gclip[0].to_vector<float>()[0], 1.f);  // at the bound: x's, as TF's minimum/maximum
}

// A ConcreteFunction called eagerly is recorded as its Call op, as the
// Function it came from is: watched tensors and captured variables both get
// their gradients (before, the call ran unrecorded and gave none).
TEST(GradientTape, ConcreteFunctionCallsAreRecorded) {
  Variable w(constant(3.f));
  auto f = kiln::function([&](const Tensor& x) { return x * x * w.read_value(); });
  ConcreteFunction c = f.get_concrete_function(TensorSpec({}, DType::Float32));
  Tensor x = constant(2.f);
  GradientTape tape({.persistent = true});
  tape.watch(x);
  Tensor y = c(x);
  expect_tensor<float>(tape.gradient(y, x), Shape{}, {12.f});  // 2 x w
  expect_tensor<float>(tape.gradient(y, w), Shape{}, {4.f});   // x^2
  // The variable the call captured is watched, and listed as TF lists it.
  std::vector<Variable> watched = tape.watched_variables();
  ASSERT_EQ(watched.size(), 1u);
  EXPECT_EQ(watched[0].handle().impl(), w.handle().impl());
}
