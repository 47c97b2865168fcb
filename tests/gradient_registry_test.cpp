// The registry-wide gradient tests (DESIGN.md §9): every op has a gradient or
// is marked not differentiable, and every gradient agrees with central finite
// differences on each of the op's samples (float64 where the op takes it),
// eagerly and when the backward pass is traced into a graph.
#include "test_util.h"

#include <cmath>

#include <fmt/format.h>

#include "kiln/gradient.h"
#include "ops/op_def.h"
#include "runtime/dispatch.h"

using namespace kiln;
using namespace kiln::testing;
using detail::OpDef;
using detail::OpSample;

namespace {

// Deterministic weights in [-1, 1] so the loss sum(w * y) sees every output
// element with a distinct factor.
Tensor weights_like(const Tensor& y) {
  std::vector<double> w(static_cast<std::size_t>(y.size()));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::sin(1.7 * static_cast<double>(i) + 0.3);
  return cast(constant(w, y.shape()), y.dtype());
}

double weighted_sum(const detail::TensorList& outs, const std::vector<Tensor>& weights) {
  double total = 0;
  for (std::size_t j = 0; j < outs.size(); ++j) {
    if (!weights[j].defined()) continue;
    total += cast(sum(outs[j] * weights[j]), DType::Float64).item<double>();
  }
  return total;
}

bool floating(const Tensor& t) { return is_floating(t.dtype()); }

// The sample in float64 when the op takes it (finite differences need the
// precision); else as it is.
OpSample as_float64(const OpDef& op, const OpSample& s, bool* converted) {
  OpSample d{{}, s.attrs};
  for (const Tensor& t : s.inputs) d.inputs.push_back(floating(t) ? cast(t, DType::Float64) : t);
  try {
    std::vector<Tensor> probe = d.inputs;  // run_eager may write over inputs only it holds
    detail::run_eager(op, probe, d.attrs);
    *converted = true;
    return d;
  } catch (const Error&) {
    *converted = false;
    return s;
  }
}

// d(sum(w_j * y_j))/d(inputs) by the tape, run eagerly or traced.
std::vector<Tensor> tape_gradients(const OpDef& op, const OpSample& s, const std::vector<Tensor>& weights) {
  GradientTape tape;
  std::vector<GradientSource> sources;
  for (const Tensor& t : s.inputs) {
    if (floating(t)) tape.watch(t);
    sources.emplace_back(t);
  }
  detail::TensorList outs = detail::dispatch(op, s.inputs, detail::Attrs(s.attrs), SourceLocation());
  Tensor loss = constant(0.0);
  for (std::size_t j = 0; j < outs.size(); ++j)
    if (weights[j].defined()) loss = loss + cast(sum(outs[j] * weights[j]), DType::Float64);
  return tape.gradient(loss, sources);
}

void check_sample(const OpDef& op, const OpSample& original, int index) {
  bool f64 = false;
  OpSample s = as_float64(op, original, &f64);
  const double h = f64 ? 1e-6 : 1e-3, tol = f64 ? 1e-6 : 2e-2;
  std::vector<Tensor> probe = s.inputs;  // run_eager may write over inputs only it holds
  detail::TensorList outs = detail::run_eager(op, probe, s.attrs);
  std::vector<Tensor> weights;
  bool any_float_output = false;
  for (const Tensor& y : outs) {
    weights.push_back(floating(y) ? weights_like(y) : Tensor());
    any_float_output = any_float_output || floating(y);
  }
  if (!any_float_output) return;  // e.g. a cast to int32: nothing to differentiate
  std::string what = fmt::format("{} sample {}", op.name, index);

  std::vector<Tensor> eager = tape_gradients(op, s, weights);

  // The same backward pass traced into a graph gives the same values.
  auto traced_fn = function([&](const std::vector<Tensor>& xs) {
    OpSample t{xs, s.attrs};
    std::vector<Tensor> g = tape_gradients(op, t, weights);
    std::vector<Tensor> out;
    for (std::size_t i = 0; i < g.size(); ++i) out.push_back(g[i].defined() ? g[i] : zeros_like(xs[i]));
    return out;
  });
  std::vector<Tensor> traced = traced_fn(s.inputs);

  for (std::size_t i = 0; i < s.inputs.size(); ++i) {
    const Tensor& x = s.inputs[i];
    if (!floating(x)) continue;
    // No gradient means zeros (inputs that only give a shape, like x of BroadcastLike).
    Tensor ge = eager[i].defined() ? eager[i] : zeros_like(x);
    ASSERT_EQ(ge.shape(), x.shape()) << what << " input " << i;
    ASSERT_EQ(ge.dtype(), x.dtype()) << what << " input " << i;
    std::vector<double> g = cast(ge, DType::Float64).to_vector<double>();
    std::vector<double> gt = cast(traced[i], DType::Float64).to_vector<double>();
    std::vector<double> xv = cast(x, DType::Float64).to_vector<double>();
    for (std::size_t k = 0; k < xv.size(); ++k) {
      auto loss_at = [&](double v) {
        std::vector<double> moved = xv;
        moved[k] = v;
        std::vector<Tensor> in = s.inputs;
        in[i] = cast(constant(moved, x.shape()), x.dtype());
        return weighted_sum(detail::run_eager(op, in, s.attrs), weights);
      };
      double numeric = (loss_at(xv[k] + h) - loss_at(xv[k] - h)) / (2 * h);
      EXPECT_NEAR(g[k], numeric, tol * (1 + std::abs(numeric))) << what << " input " << i << " element " << k;
      EXPECT_NEAR(gt[k], g[k], 1e-9 * (1 + std::abs(g[k]))) << what << " traced, input " << i << " element " << k;
    }
  }
}

}  // namespace

TEST(GradientRegistry, EveryOpHasAGradientOrIsMarkedNotDifferentiable) {
  for (const OpDef* op : detail::OpRegistry::global().all()) {
    bool has = op->gradient != nullptr, marked = op->is(detail::kNotDifferentiable);
    EXPECT_TRUE(has != marked) << op->name << (has ? " has a gradient and is marked not differentiable"
                                                   : " has no gradient and is not marked not differentiable");
  }
}

TEST(GradientRegistry, EveryGradientMatchesFiniteDifferencesEagerAndTraced) {
  int checked = 0;
  for (const OpDef* op : detail::OpRegistry::global().all()) {
    if (!op->gradient || !op->samples || op->is(detail::kStateful) || op->is(detail::kGraphOnly)) continue;
    std::vector<OpSample> samples = op->samples();
    for (std::size_t i = 0; i < samples.size(); ++i) {
      bool any_float = false;
      for (const Tensor& t : samples[i].inputs) any_float = any_float || floating(t);
      if (!any_float) continue;
      check_sample(*op, samples[i], static_cast<int>(i));
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
}
