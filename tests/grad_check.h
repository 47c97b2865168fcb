#pragma once
// Checks an op's gradient function (OpDef::gradient, docs/design-notes.md, "Autodiff") at op
// level, without a tape:
//   check_op_gradient: against central finite differences. The op runs
//     eagerly, a random upstream gradient dy is drawn per output, and for every
//     element k of every floating input, <analytic gradient, e_k> is compared
//     with (<dy, f(x + h e_k)> - <dy, f(x - h e_k)>) / 2h. Meant for float64
//     inputs. An input the gradient function leaves undefined counts as zeros
//     (so a shape-only input is checked to have no effect). A complex value
//     counts as its real and imaginary parts (interleaved), so a complex
//     gradient is checked as TF's dL/dRe + i dL/dIm and <dy, y> is Re(conj(dy) y).
//   check_op_gradient_traces: the gradient function run while tracing (static
//     and unknown dims) gives the same values as run eagerly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <kiln/kiln.h>

#include "exec/plan.h"
#include "graph_feeds.h"
#include "trace/tracing_context.h"
#include "schema/op_def.h"
#include "runtime/dispatch.h"

namespace kiln::testing {

// Uniform values in [lo, hi) of `shape`, reproducible from `seed`.
inline Tensor random_tensor(const Shape& shape, uint32_t seed, DType dtype = DType::Float64,
                            double lo = -1.0, double hi = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(shape.num_elements()));
  for (double& x : v) x = dist(rng);
  return constant(v, shape, dtype);
}

namespace grad_check_detail {

inline bool differentiable(DType d) { return is_floating(d) || is_complex(d); }

// The values in float64; a complex tensor's as re, im pairs.
inline std::vector<double> values(const Tensor& t) {
  if (is_complex(t.dtype())) {
    std::vector<double> re = values(real(t)), im = values(imag(t)), out;
    for (std::size_t k = 0; k < re.size(); ++k) out.insert(out.end(), {re[k], im[k]});
    return out;
  }
  return t.dtype() == DType::Float64 ? t.to_vector<double>() : cast(t, DType::Float64).to_vector<double>();
}
// The inverse of values().
inline Tensor from_values(const std::vector<double>& v, const Shape& shape, DType dtype) {
  if (!is_complex(dtype)) return constant(v, shape, dtype);
  std::vector<double> re, im;
  for (std::size_t k = 0; k < v.size(); k += 2) re.push_back(v[k]), im.push_back(v[k + 1]);
  return cast(complex(constant(re, shape), constant(im, shape)), dtype);
}

// The upstream gradients: random for floating outputs, undefined otherwise.
inline std::vector<Tensor> random_dys(const runtime::TensorList& outputs, uint32_t seed) {
  std::vector<Tensor> dys;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& y = outputs[i];
    const uint32_t s = seed + 1000 + static_cast<uint32_t>(i);
    if (is_complex(y.dtype()))
      dys.push_back(cast(complex(random_tensor(y.shape(), s), random_tensor(y.shape(), s + 500)), y.dtype()));
    else
      dys.push_back(is_floating(y.dtype()) ? random_tensor(y.shape(), s, y.dtype()) : Tensor());
  }
  return dys;
}

// Calls the gradient function; returns one entry per input (maybe undefined).
inline std::vector<Tensor> run_gradient(const detail::OpDef& op, std::span<const Tensor> inputs,
                                        std::span<const Tensor> outputs,
                                        const schema::Attrs& attrs, std::span<const Tensor> dys) {
  schema::GradContext ctx{op, inputs, outputs, attrs, dys,
                          detail::SmallVector<Tensor, 4>(inputs.size()), {}};
  op.gradient(ctx);
  return {ctx.input_grads.begin(), ctx.input_grads.end()};
}

// sum over outputs of <dy, f(inputs)>.
inline double weighted_output(const detail::OpDef& op, const std::vector<Tensor>& inputs,
                              const schema::Attrs& attrs, const std::vector<Tensor>& dys) {
  std::vector<Tensor> args = inputs;
  runtime::TensorList outs = runtime::run_eager(op, args, attrs);
  double total = 0;
  for (std::size_t i = 0; i < outs.size(); ++i) {
    if (!dys[i].defined()) continue;
    std::vector<double> y = values(outs[i]), w = values(dys[i]);
    for (std::size_t k = 0; k < y.size(); ++k) total += y[k] * w[k];
  }
  return total;
}

}  // namespace grad_check_detail

// Passes when |analytic - numeric| <= tolerance * max(1, |numeric|) for every
// element of every floating input. Reports the first few mismatches per input.
inline void check_op_gradient(std::string_view op_name, const std::vector<Tensor>& inputs,
                              const schema::Attrs& attrs = {}, double tolerance = 1e-6,
                              double step = 1e-6, uint32_t seed = 1) {
  namespace gc = grad_check_detail;
  const detail::OpDef& op = schema::OpRegistry::global().get(op_name);
  ASSERT_NE(op.gradient, nullptr) << op_name << " has no gradient function";
  std::vector<Tensor> args = inputs;
  runtime::TensorList outputs = runtime::run_eager(op, args, attrs);
  std::vector<Tensor> dys = gc::random_dys(outputs, seed);
  std::vector<Tensor> grads = gc::run_gradient(op, inputs, outputs, attrs, dys);
  ASSERT_EQ(grads.size(), inputs.size()) << op_name;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!gc::differentiable(x.dtype())) continue;
    std::vector<double> analytic(static_cast<std::size_t>(x.size() * (is_complex(x.dtype()) ? 2 : 1)), 0.0);
    if (grads[i].defined()) {
      ASSERT_EQ(grads[i].dtype(), x.dtype()) << op_name << " input " << i;
      ASSERT_EQ(grads[i].shape(), x.shape())
          << op_name << " input " << i << ": gradient shape " << grads[i].shape().to_string();
      analytic = gc::values(grads[i]);
    }
    std::vector<double> base = gc::values(x);
    int mismatches = 0;
    for (std::size_t k = 0; k < base.size(); ++k) {
      std::vector<Tensor> moved = inputs;
      std::vector<double> v = base;
      v[k] = base[k] + step;
      moved[i] = gc::from_values(v, x.shape(), x.dtype());
      double plus = gc::weighted_output(op, moved, attrs, dys);
      v[k] = base[k] - step;
      moved[i] = gc::from_values(v, x.shape(), x.dtype());
      double minus = gc::weighted_output(op, moved, attrs, dys);
      double numeric = (plus - minus) / (2 * step);
      double error = std::abs(analytic[k] - numeric);
      if (error > tolerance * std::max(1.0, std::abs(numeric)) && ++mismatches <= 5)
        ADD_FAILURE() << fmt::format("{} input {} element {}: gradient {} but finite differences {}",
                                     op_name, i, k, analytic[k], numeric);
    }
    EXPECT_EQ(mismatches, 0) << op_name << " input " << i << " (" << base.size() << " elements)";
  }
}

// The gradient function traced into a graph (forward op included, inputs and
// upstream gradients as parameters, with static or every dim unknown) and run
// gives the eager gradients, within `tolerance` (0: bitwise).
inline void check_op_gradient_traces(std::string_view op_name, const std::vector<Tensor>& inputs,
                                     const schema::Attrs& attrs = {}, double tolerance = 0,
                                     bool unknown_dims = true, uint32_t seed = 1) {
  namespace gc = grad_check_detail;
  const detail::OpDef& op = schema::OpRegistry::global().get(op_name);
  ASSERT_NE(op.gradient, nullptr) << op_name;
  std::vector<Tensor> args = inputs;
  runtime::TensorList outputs = runtime::run_eager(op, args, attrs);
  std::vector<Tensor> dys = gc::random_dys(outputs, seed);
  std::vector<Tensor> eager = gc::run_gradient(op, inputs, outputs, attrs, dys);
  for (bool unknown : {false, true}) {
    if (unknown && !unknown_dims) continue;
    std::string what = fmt::format("{} (dims {})", op_name, unknown ? "unknown" : "static");
    auto graph = std::make_shared<graph::Graph>(std::string(op_name) + "_grad");
    trace::TracingContext ctx(graph);
    auto parameter = [&](const Tensor& t, std::string name) {
      Shape shape = t.shape();
      if (unknown)
        for (int d = 0; d < shape.rank(); ++d) shape[d] = None;
      return ctx.add_parameter({t.dtype(), shape}, name);
    };
    std::vector<Tensor> feeds;
    std::vector<Tensor> params, dy_params;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      params.push_back(parameter(inputs[i], "x" + std::to_string(i)));
      feeds.push_back(inputs[i]);
    }
    for (std::size_t i = 0; i < dys.size(); ++i) {
      if (!dys[i].defined()) {
        dy_params.emplace_back();
        continue;
      }
      dy_params.push_back(parameter(dys[i], "dy" + std::to_string(i)));
      feeds.push_back(dys[i]);
    }
    std::vector<std::size_t> defined;
    {
      runtime::DispatchHandlerGuard guard(&ctx);
      schema::Attrs forward_attrs = attrs;
      runtime::TensorList outs =
          runtime::dispatch(op, params, std::move(forward_attrs), SourceLocation::current());
      std::vector<Tensor> traced = gc::run_gradient(op, params, outs, attrs, dy_params);
      for (std::size_t i = 0; i < traced.size(); ++i) {
        ASSERT_EQ(traced[i].defined(), eager[i].defined()) << what << " input " << i;
        if (!traced[i].defined()) continue;
        graph->results().push_back(ctx.value_of(traced[i]));
        defined.push_back(i);
      }
    }
    graph->verify();
    exec::Plan plan(graph);
    feeds = feeds_with_captures(*graph, std::move(feeds));
    detail::ResultLeaves got = plan.run(feeds);
    ASSERT_EQ(got.size(), defined.size()) << what;
    for (std::size_t r = 0; r < defined.size(); ++r) {
      const Tensor& want = eager[defined[r]];
      ASSERT_EQ(got[r].dtype(), want.dtype()) << what << " input " << defined[r];
      ASSERT_EQ(got[r].shape(), want.shape()) << what << " input " << defined[r];
      std::vector<double> a = gc::values(got[r]), b = gc::values(want);
      for (std::size_t k = 0; k < a.size(); ++k)
        ASSERT_NEAR(a[k], b[k], tolerance * std::max(1.0, std::abs(b[k])))
            << what << " input " << defined[r] << " element " << k;
    }
  }
}

}  // namespace kiln::testing
