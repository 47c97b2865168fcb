// A layer's gradients checked three ways: the tape's gradient of
// sum(w * layer(x)) with respect to the input and to every trainable weight
// (w = wave(0.9, 0.2) of the output's shape), against central finite
// differences, and the same gradients from a kiln::function against the
// eager ones.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/kiln.h"
#include "test_util.h"
#include "wave_values.h"

namespace kiln::testing {

struct LayerGradientCheck {
  double h = 1e-6;             // the finite-difference step
  double tol = 1e-6;           // eager against finite differences, relative to 1 + |numeric|
  double traced_tol = 1e-5;    // traced against eager, relative to 1 + |eager|
  int max_elements = 40;       // elements checked per source, spread over it...
  int64_t stride = 0;          // ...or every stride-th element when nonzero
  bool training = false;       // the layer's call mode
};

inline void check_layer_gradients(nn::Layer& layer, const Tensor& x, const LayerGradientCheck& c = {}) {
  const Tensor y = layer(x, c.training);
  const Tensor w = cast(constant(wave(y.size(), 0.9, 0.2), y.shape()), y.dtype());
  std::vector<Variable> vars = layer.trainable_variables();
  auto loss = [&](const Tensor& in) { return sum(layer(in, c.training) * w); };
  auto grads_of = [&](const Tensor& in) {
    GradientTape tape;
    tape.watch(in);
    std::vector<GradientSource> sources{in};
    for (const Variable& v : vars) sources.emplace_back(v);
    return tape.gradient(loss(in), sources);
  };
  std::vector<Tensor> grads = grads_of(x);
  auto traced = function([&](const Tensor& in) {
    std::vector<Tensor> g = grads_of(in);
    // A graph returns tensors: a source the loss does not reach gives zeros.
    for (std::size_t i = 0; i < g.size(); ++i)
      if (!g[i].defined()) g[i] = zeros_like(i == 0 ? in : vars[i - 1].read_value());
    return g;
  });
  std::vector<Tensor> traced_grads = traced(x);

  auto loss_at = [&](const Tensor& in) { return cast(loss(in), DType::Float64).item<double>(); };
  for (std::size_t s = 0; s < grads.size(); ++s) {
    Tensor base = s == 0 ? x : vars[s - 1].read_value();
    ASSERT_TRUE(grads[s].defined()) << layer.name() << " source " << s;
    std::vector<double> g = cast(grads[s], DType::Float64).to_vector<double>();
    std::vector<double> gt = cast(traced_grads[s], DType::Float64).to_vector<double>();
    std::vector<double> v = cast(base, DType::Float64).to_vector<double>();
    const int64_t stride =
        c.stride > 0 ? c.stride : std::max<int64_t>(1, static_cast<int64_t>(v.size()) / c.max_elements);
    for (std::size_t k = 0; k < v.size(); k += static_cast<std::size_t>(stride)) {
      auto moved = [&](double delta) {
        std::vector<double> m = v;
        m[k] += delta;
        Tensor t = cast(constant(m, base.shape()), base.dtype());
        if (s == 0) return loss_at(t);
        vars[s - 1].assign(t);
        double l = loss_at(x);
        vars[s - 1].assign(base);
        return l;
      };
      double numeric = (moved(c.h) - moved(-c.h)) / (2 * c.h);
      EXPECT_NEAR(g[k], numeric, c.tol * (1 + std::abs(numeric))) << layer.name() << " source " << s << " element " << k;
      EXPECT_NEAR(gt[k], g[k], c.traced_tol * (1 + std::abs(g[k]))) << layer.name() << " traced, source " << s;
    }
  }
}

}  // namespace kiln::testing
