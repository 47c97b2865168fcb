// kiln::gradients (TF's tf.gradients, docs/design-notes.md, "Graph-side names"): the gradient of
// the graph being traced from values that already exist, intermediate ones and variables included.
#include "test_util.h"

#include <cmath>

#include "kiln/gradient.h"

using namespace kiln;
using namespace kiln::testing;

TEST(SymbolicGradients, IntermediateValuesAndInputs) {
  auto f = function([](const Tensor& x) {
    Tensor y = x * x;
    Tensor z = sin(y);
    std::vector<Tensor> g = gradients({z}, {y, x});
    return std::vector<Tensor>{g[0], g[1]};
  });
  std::vector<Tensor> g = f(constant({0.5, -1.0}));
  expect_tensor_near<double>(g[0], Shape{2}, {std::cos(0.25), std::cos(1.0)}, 1e-12);
  expect_tensor_near<double>(g[1], Shape{2}, {std::cos(0.25) * 1.0, std::cos(1.0) * -2.0}, 1e-12);
}

TEST(SymbolicGradients, StopGradientsAndWeightsAndVariables) {
  Variable w(constant(3.0), {.name = "w"});
  auto f = function([&](const Tensor& x) {
    Tensor h = exp(x);
    Tensor y = h * x * w.read_value();
    std::vector<Tensor> stopped = gradients({y}, {x}, {}, {h});       // h held constant
    std::vector<Tensor> weighted = gradients({y}, {w}, {constant(2.0)});  // 2 * h * x
    return std::vector<Tensor>{stopped[0], weighted[0]};
  });
  std::vector<Tensor> g = f(constant(1.0));
  expect_tensor_near<double>(g[0], Shape{}, {std::exp(1.0) * 3.0}, 1e-12);
  expect_tensor_near<double>(g[1], Shape{}, {2.0 * std::exp(1.0)}, 1e-12);
}

TEST(SymbolicGradients, UnconnectedIsUndefinedAndEagerIsAnError) {
  auto f = function([](const Tensor& x, const Tensor& other) {
    std::vector<Tensor> g = gradients({x * 2.0}, {other});
    return constant(g[0].defined() ? 1.0 : 0.0);
  });
  expect_tensor<double>(f(constant(1.0), constant(2.0)), Shape{}, {0.0});
  EXPECT_THROW(gradients({constant(1.0)}, {constant(2.0)}), FailedPrecondition);
}
