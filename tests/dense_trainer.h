#pragma once
// Shared by the tests of the training-step passes (Adam fusion, weight rows):
// a small model of two dense layers trained by nn::Adam, eagerly or traced,
// bitwise comparisons of two models' variables, and a trace's optimized graph.
#include <functional>
#include <vector>

#include "function/traced_graph.h"
#include "kiln/kiln.h"
#include "graph_test_util.h"
#include "kernel_test_util.h"

namespace kiln::testing {

using StepFn = std::function<void(const Tensor&)>;

// Dense(units, relu) on `inputs` features (and Dense(hidden, relu) where
// hidden > 0), then Dense(3), trained on sum(y^2). The first kernel is read
// by its forward only; the others by their forward and, transposed, by the
// layer before's input gradient.
struct DenseTrainer {
  nn::Sequential model{"mlp"};
  nn::Adam adam{1e-2};
  explicit DenseTrainer(int64_t inputs = 1000, int64_t units = 300, int64_t hidden = 0) {
    model.add(nn::Dense(units, {.activation = "relu", .input_shape = Shape{inputs}, .seed = 1}));
    if (hidden > 0) model.add(nn::Dense(hidden, {.activation = "relu", .seed = 3}));
    model.add(nn::Dense(3, {.seed = 2}));
  }
  void step(const Tensor& x) {
    GradientTape tape;
    Tensor loss = kiln::sum(square(model(x, true)));
    std::vector<Variable> vars = model.trainable_variables();
    adam.apply_gradients(tape.gradient(loss, vars), vars);
  }
  kiln::Function<StepFn> traced() {
    return kiln::function(StepFn([this](const Tensor& x) { step(x); }));
  }
  // Layer `layer`'s kernel.
  Variable kernel(int layer) { return model.trainable_variables()[2 * layer]; }
};

inline void expect_same_variables(const std::vector<Variable>& a, const std::vector<Variable>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].name());
    expect_bitwise(a[i].read_value(), b[i].read_value());
  }
}

// One step of a traced trainer (`f`, traced.traced()) and of an eager one on
// `x`, after `write` (eager code writing a variable between steps), if any,
// on each.
inline void step_both(const kiln::Function<StepFn>& f, DenseTrainer& traced, DenseTrainer& eager, const Tensor& x,
                      const std::function<void(DenseTrainer&)>& write = {}) {
  if (write) {
    write(traced);
    write(eager);
  }
  f(x);
  eager.step(x);
}

// The model's and the optimizer's variables, bit for bit.
inline void expect_same_training(DenseTrainer& a, DenseTrainer& b) {
  expect_same_variables(a.model.variables(), b.model.variables());
  expect_same_variables(a.adam.variables(), b.adam.variables());
}

// The optimized graph of `f`'s trace for `x`.
template <class Fn>
const graph::Graph& optimized(const kiln::Function<Fn>& f, const Tensor& x) {
  return f.get_concrete_function(x).impl()->plan->graph();
}

// Three steps of a Trainer traced and of one eager on `x`, at 1 and 2
// threads, give the same variables; `check` sees each trace's optimized graph.
template <class Trainer>
void expect_traced_training_is_eagers(const Tensor& x, const std::function<void(const graph::Graph&)>& check) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << threads << " threads");
    ThreadCount scope(threads);
    Trainer traced, eager;
    auto f = traced.traced();
    check(optimized(f, x));
    for (int step = 0; step < 3; ++step) step_both(f, traced, eager, x);
    expect_same_training(traced, eager);
  }
}

}  // namespace kiln::testing
