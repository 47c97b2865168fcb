#include "exec/fused_adam.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "ops/adam_update.h"
#include "ops/cast_loops.h"
#include "core/parallel.h"
#include "core/small_vector.h"
#include "core/tensor_impl.h"
#include "ops/creation.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"
#include "ops/onednn.h"
#include "ops/variable_ops.h"
#include "runtime/dispatch.h"

namespace kiln::exec {

namespace {

using schema::Attrs;

constexpr const char* kRole[] = {"var", "m", "v"};

// Per variable: 1 where the gradient is given as a, b (2 inputs), 0 where it
// is one tensor.
const std::vector<int64_t>& from_matmul(const Attrs& attrs) { return attrs.get_ints("grad_from_matmul"); }

// A float32 variable takes a bfloat16 gradient (widened by the kernel).
bool widens_bf16(DType var, DType grad) { return var == DType::Float32 && grad == DType::BFloat16; }

// ApplyAdam's checks, for each variable's inputs. The handles carry no
// shape: the kernel checks each variable's value against its gradient.
void fused_apply_adam_infer(schema::InferContext& c) {
  const DType dtype = c.attrs().get_dtype("dtype");
  if (!is_floating(dtype)) c.fail("the variables must be float32 or float64, got {}", dtype_name(dtype));
  std::vector<int> grads;  // each variable's number of gradient inputs
  for (int64_t flag : from_matmul(c.attrs())) grads.push_back(flag ? 2 : 1);
  int expected = 1;
  for (int g : grads) expected += 3 + g;
  if (grads.empty() || c.num_inputs() != expected)
    c.fail("takes var, m, v and a gradient (or its MatMul's a and b) per variable, and alpha: {} inputs for {} "
           "variables, got {}", expected, grads.size(), c.num_inputs());
  int base = 0;
  for (std::size_t j = 0; j < grads.size(); ++j) {
    for (int i = 0; i < 3; ++i)
      if (c.dtype(base + i) != DType::Resource)
        c.fail("input {} ({} of variable {}) must be a variable's resource handle, got a {} tensor", base + i,
               kRole[i], j, dtype_name(c.dtype(base + i)));
    for (int i = 3; i < 3 + grads[j]; ++i)
      if (c.dtype(base + i) != dtype && !(grads[j] == 1 && widens_bf16(dtype, c.dtype(base + i))))
        c.fail("the variables are {} but gradient input {} of variable {} is {}", dtype_name(dtype), base + i, j,
               dtype_name(c.dtype(base + i)));
    if (grads[j] == 2) {
      const Shape &a = c.shape(base + 3), &b = c.shape(base + 4);
      if (dtype != DType::Float32) c.fail("a gradient from a MatMul must be float32, got {}", dtype_name(dtype));
      const bool ranks_known = a.has_known_rank() && b.has_known_rank();
      if ((a.has_known_rank() && a.rank() != 2) || (b.has_known_rank() && b.rank() != 2) ||
          (ranks_known && a[0] >= 0 && b[0] >= 0 && a[0] != b[0]))
        c.fail("variable {}'s gradient MatMul(a, b, transpose_a=true) needs matrices with as many rows, got {} and {}",
               j, a.to_string(), b.to_string());
    }
    base += 3 + grads[j];
  }
  if (c.dtype(base) != dtype)
    c.fail("the variables are {} but alpha is {}", dtype_name(dtype), dtype_name(c.dtype(base)));
  if (c.shape(base).has_known_rank() && c.shape(base).rank() != 0)
    c.fail("alpha must be a scalar, got shape {}", c.shape(base).to_string());
}

// The rows [begin, end) of a^T b (a: [K, M], b: [K, N], row-major): MatMul's
// oneDNN primitive restricted to those rows of a^T (which are columns of a),
// so each element is the same sum in the same order (checked by
// tests/passes_adam_test.cpp). Made per band size, cached like every primitive.
// b's rows are ldb apart: n, or n + kMatmulBPad where MatMul would copy b into
// longer rows for a band's product (ops/matmul_layout.h; here the copy is made
// once per step, not per band).
struct BandPrimitive {
  ops::onednn::Executable exec;  // (a^T rows, b, out rows)
};

std::shared_ptr<const BandPrimitive> band_primitive(int64_t rows, int64_t k, int64_t m, int64_t n, int64_t ldb) {
  ops::onednn::PrimitiveKey key(/*kind=*/6);
  for (int64_t v : {rows, k, m, n, ldb}) key.add(v);
  return ops::onednn::cached<BandPrimitive>(key, [&] {
    using dims = dnnl::memory::dims;
    auto a = ops::onednn::plain_desc(dims{rows, k}, dims{1, m});
    auto b = ops::onednn::plain_desc(dims{k, n}, dims{ldb, 1});
    auto c = ops::onednn::plain_desc(dims{rows, n}, dims{n, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, ops::onednn::engine());
    auto p = std::make_shared<BandPrimitive>();
    p->exec.init(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}},
                 pd.scratchpad_desc().get_size());
    return p;
  });
}

// A band of the gradient: 256 KB, which stays in a core's L2 cache between
// being written and being read.
constexpr int64_t kBandElements = 65536;

// The largest gradient whose update the band probe times (see band_plan):
// 16M elements, whose scratch states take 192 MB while it runs.
constexpr int64_t kMaxProbedUpdate = int64_t(1) << 24;

// How a gradient a^T b of given sizes is made, decided once per size and
// cached like the primitives: both band sizes' primitives, and whether to use
// them at all (see band_plan).
struct BandPlan {
  int64_t band_rows = 0;
  int64_t ldb = 0;  // b's row stride in the bands' primitives
  std::shared_ptr<const BandPrimitive> full, last;
  bool use = false;
};

// The attrs of a FusedApplyAdam (its samples, and the band probe's update).
Attrs adam_attrs(DType dtype, std::vector<int64_t> grad_from_matmul, double beta_1, double beta_2, double epsilon) {
  return Attrs{{"dtype", dtype},
               {"grad_from_matmul", std::move(grad_from_matmul)},
               {"beta_1", beta_1},
               {"beta_2", beta_2},
               {"epsilon", epsilon}};
}

// What a banded gradient runs: its sizes' plan and the operands.
struct BandedMatmul {
  std::shared_ptr<const BandPlan> plan;
  const float *a = nullptr, *b = nullptr;

  // AdamGradient::rows. It runs on the update's threads, where an exception
  // cannot travel: with the primitives made, running one fails only when
  // memory runs out.
  static void rows(const void* context, int64_t begin, int64_t end, float* out) noexcept {
    const auto& self = *static_cast<const BandedMatmul*>(context);
    const BandPlan& plan = *self.plan;
    (end - begin == plan.band_rows ? plan.full : plan.last)->exec.run({self.a + begin, self.b, out});
  }
};

// The attrs of the MatMul a banded gradient stands for (built once: the
// whole-gradient path runs on every step where bands are not used).
const Attrs& gradient_matmul_attrs() {
  static const Attrs attrs{{"transpose_a", true}, {"transpose_b", false}};
  return attrs;
}

// b (k rows of n) with its rows ldb apart: b itself when ldb is n, else a
// copy in `buffer` (grown, never shrunk, so a warm step allocates nothing).
const float* rows_apart(const float* b, int64_t k, int64_t n, int64_t ldb, std::vector<float>& buffer) {
  if (ldb == n) return b;
  if (buffer.size() < static_cast<std::size_t>(k * ldb)) buffer.resize(static_cast<std::size_t>(k * ldb));
  ops::copy_rows(b, n, buffer.data(), ldb, k, n);
  return buffer.data();
}

// The plan for gradients of these sizes (n > 0) on this machine: bands only
// where they give MatMul's bits and the update with them is not slower than
// with the whole product. Made once per size; `use` false keeps the gradient
// whole (MatMul's kernel).
//
// Bits: a band is the whole product's primitive restricted to some rows, but
// oneDNN may order a row's sum by where the row falls in its blocking (on
// AVX2's gemm:jit, K = 8, M = 1000, N = 300 in bands of 218 rows changes 12
// whole rows). The order of oneDNN's sums does not depend on the values, so
// one product of probe values, made both ways on the threads the update uses,
// tells for every product of these sizes.
// Speed: oneDNN picks its gemm kernel by shape, and for some band shapes it
// picks a much slower one than for the whole product; where the bands are
// only a little slower, the update with them can still win, since it then
// reads the gradient from cache instead of memory. So the probe times what a
// step runs, product and update together, each way on scratch variables of
// the gradient's shape: the faster of three alternated runs each way decides
// (a large gap shows through any load; a near tie keeps the bands, which
// leave the caches to the rest of the step). Why, and the figures:
// docs/design-notes.md, "Graph passes"; docs/perf-log.md.
std::shared_ptr<const BandPlan> band_plan(int64_t k, int64_t m, int64_t n) {
  const int64_t band_rows = std::min(m, std::max<int64_t>(1, kBandElements / n));
  const int64_t ldb = ops::matmul_b_row_stride(band_rows, k, n);
  ops::onednn::PrimitiveKey key(/*kind=*/7);
  for (int64_t v : {k, m, n, ldb}) key.add(v);
  return ops::onednn::cached<BandPlan>(key, [&] {
    auto plan = std::make_shared<BandPlan>();
    plan->band_rows = band_rows;
    plan->ldb = ldb;
    plan->full = band_primitive(band_rows, k, m, n, ldb);
    plan->last = m % band_rows ? band_primitive(m % band_rows, k, m, n, ldb) : plan->full;
    Tensor a = core::make_tensor(DType::Float32, Shape{k, m}), b = core::make_tensor(DType::Float32, Shape{k, n});
    ops::fill_probe_values({a, b});
    const Tensor in[] = {a, b};
    std::vector<float> padded_b;
    const BandedMatmul probe{plan, core::data_of<float>(a), rows_apart(core::data_of<float>(b), k, n, ldb, padded_b)};
    // Every band as adam_in_bands runs them (ops/training_ops.cpp), one band
    // a unit.
    std::vector<float> banded(static_cast<std::size_t>(m * n));
    auto make_bands = [&] {
      core::parallel_for(
          (m + band_rows - 1) / band_rows,
          [&](int64_t first, int64_t last) {
            for (int64_t band = first; band < last; ++band) {
              const int64_t begin = band * band_rows;
              BandedMatmul::rows(&probe, begin, std::min(m, begin + band_rows), banded.data() + begin * n);
            }
          },
          1);
    };
    make_bands();
    const Tensor whole = runtime::run_eager(ops::matmul_op(), in, gradient_matmul_attrs())[0];
    if (std::memcmp(banded.data(), core::data_of<float>(whole), banded.size() * sizeof(float)) != 0) return plan;
    // Speed: the update of scratch var, m and v with either gradient, up to
    // kMaxProbedUpdate elements. Past that, where the scratch would be three
    // more copies of a large layer, the products alone, and the bands then
    // may be at most 10% slower than the whole product.
    const bool with_update = m * n <= kMaxProbedUpdate;
    std::vector<Tensor> handles;
    if (with_update)
      for (const char* role : kRole) handles.push_back(ops::sample_resource(zeros(Shape{m, n}), role));
    const Tensor alpha = constant(1e-3f);
    const Attrs attrs = adam_attrs(DType::Float32, {1}, 0.9, 0.999, 1e-7);
    const ops::AdamGradient in_bands{.shape = Shape{m, n},
                                     .band_rows = band_rows,
                                     .rows = &BandedMatmul::rows,
                                     .context = &probe};
    double whole_s = 1e300, banded_s = 1e300;
    using Clock = std::chrono::steady_clock;
    for (int run = 0; run < 3; ++run) {
      Clock::time_point t0 = Clock::now();
      const ops::AdamGradient made{.tensor = runtime::run_eager(ops::matmul_op(), in, gradient_matmul_attrs())[0]};
      if (with_update) ops::run_adam(handles, std::span(&made, 1), alpha, attrs, "FusedApplyAdam");
      Clock::time_point t1 = Clock::now();
      if (with_update) ops::run_adam(handles, std::span(&in_bands, 1), alpha, attrs, "FusedApplyAdam");
      else make_bands();
      Clock::time_point t2 = Clock::now();
      whole_s = std::min(whole_s, std::chrono::duration<double>(t1 - t0).count());
      banded_s = std::min(banded_s, std::chrono::duration<double>(t2 - t1).count());
    }
    plan->use = banded_s <= (with_update ? 1.05 : 1.1) * whole_s;
    return plan;
  });
}

// The gradient a^T b, made in bands by the update (`banded` holds what they
// run, made here, where a failure can still fall back: then the MatMul op's
// kernel makes the gradient whole).
ops::AdamGradient matmul_gradient(const Tensor& a, const Tensor& b, BandedMatmul& banded,
                                  std::vector<float>& padded_b) {
  if (a.shape().rank() != 2 || b.shape().rank() != 2 || a.shape()[0] != b.shape()[0])
    throw InvalidArgument(fmt::format(
        "FusedApplyAdam: a gradient MatMul(a, b, transpose_a=true) needs matrices with as many rows, got {} and {}",
        a.shape().to_string(), b.shape().to_string()));
  const int64_t k = a.shape()[0], m = a.shape()[1], n = b.shape()[1];
  ops::AdamGradient grad;
  grad.shape = Shape{m, n};
  // An empty product has no bands.
  if (m != 0 && n != 0 && k != 0) {
    try {
      banded.plan = band_plan(k, m, n);
      banded.a = core::data_of<float>(a);
      if (banded.plan->use) {
        banded.b = rows_apart(core::data_of<float>(b), k, n, banded.plan->ldb, padded_b);
        grad.band_rows = banded.plan->band_rows;
        grad.rows = &BandedMatmul::rows;
        grad.context = &banded;
        return grad;
      }
    } catch (...) {
    }
  }
  const Tensor in[] = {a, b};
  grad.rows = nullptr;
  grad.tensor = runtime::run_eager(ops::matmul_op(), in, gradient_matmul_attrs())[0];
  return grad;
}

// A bfloat16 gradient of a float32 variable, widened a band of rows at a time
// as the update reads it (AdamGradient::rows): exact, the bits of a Cast.
struct WidenedRows {
  const bfloat16_t* g = nullptr;
  int64_t cols = 0;

  static void rows(const void* context, int64_t begin, int64_t end, float* out) noexcept {
    const auto& self = *static_cast<const WidenedRows*>(context);
    const uint16_t* in = &self.g[begin * self.cols].bits;
    const int64_t count = (end - begin) * self.cols;
    for (int64_t i = 0; i < count; ++i) out[i] = detail::bfloat16_bits_to_float(in[i]);
  }
};

// A bf16 gradient (`t`) for the update: banded by rows of its last dim, or
// (a scalar, an empty tensor) widened whole.
ops::AdamGradient widened_gradient(const Tensor& t, WidenedRows& widened) {
  if (t.shape().rank() == 0 || t.size() == 0) {
    Tensor wide = core::make_tensor(DType::Float32, t.shape());
    ops::cast_into(t, wide);
    return {.tensor = std::move(wide)};
  }
  widened = {core::data_of<bfloat16_t>(t), t.shape()[t.shape().rank() - 1]};
  return {.shape = t.shape(),
          .band_rows = std::max<int64_t>(1, kBandElements / widened.cols),
          .rows = &WidenedRows::rows,
          .context = &widened};
}

// No heap allocation up to ops::kAdamInlineVariables variables.
void fused_apply_adam_kernel(schema::KernelContext& c) {
  constexpr std::size_t kInline = ops::kAdamInlineVariables;
  const std::vector<int64_t>& flags = from_matmul(c.attrs);
  detail::SmallVector<Tensor, 3 * kInline> handles;
  detail::SmallVector<ops::AdamGradient, kInline> gradients;
  // Reserved: the gradients point into it.
  detail::SmallVector<BandedMatmul, kInline> banded;
  banded.reserve(flags.size());
  detail::SmallVector<WidenedRows, kInline> widened;
  widened.reserve(flags.size());
  // The banded gradients' b in longer rows, one buffer each, kept by the
  // thread from step to step.
  thread_local std::vector<std::vector<float>> padded_b;
  if (padded_b.size() < flags.size()) padded_b.resize(flags.size());
  std::size_t base = 0;
  for (int64_t flag : flags) {
    for (int i = 0; i < 3; ++i) handles.push_back(c.inputs[base + i]);
    if (flag) {
      std::vector<float>& padded = padded_b[banded.size()];
      gradients.push_back(matmul_gradient(c.inputs[base + 3], c.inputs[base + 4], banded.emplace_back(), padded));
    } else if (c.inputs[base + 3].dtype() == DType::BFloat16) [[unlikely]] {
      gradients.push_back(widened_gradient(c.inputs[base + 3], widened.emplace_back()));
    } else {
      gradients.push_back({.tensor = c.inputs[base + 3]});
    }
    base += flag ? 5 : 4;
  }
  ops::run_adam(std::span(handles.data(), handles.size()), std::span(gradients.data(), gradients.size()),
                c.inputs[base], c.attrs, "FusedApplyAdam");
}

// Variables of different shapes and sizes, so that the pass over them laid
// end to end crosses from one to the next; a gradient from a MatMul.
std::vector<schema::OpSample> fused_apply_adam_samples() {
  using ops::sample_resource;
  return {{{sample_resource(constant({1.f, -2.f, 0.5f}), "var"), sample_resource(constant({0.1f, 0.f, -0.2f}), "m"),
            sample_resource(constant({0.01f, 0.f, 0.04f}), "v"), constant({3.f, -0.5f, 0.f}),
            sample_resource(constant({{4.f, 1.f}, {-1.f, 2.f}}), "var_1"),
            sample_resource(constant({{0.5f, 0.f}, {0.25f, -1.f}}), "m_1"),
            sample_resource(constant({{0.f, 1.f}, {1.f, 0.5f}}), "v_1"), constant({{1.f, -2.f}, {0.5f, 3.f}}),
            constant({{0.25f, 1.f}, {-1.f, 0.5f}}), constant(0.01f)},
           adam_attrs(DType::Float32, {0, 1}, 0.9, 0.999, 1e-7)},
          {{sample_resource(constant({{1.0, 2.0}}), "var"), sample_resource(constant({{0.0, 0.5}}), "m"),
            sample_resource(constant({{0.0, 0.25}}), "v"), constant({{-1.0, 4.0}}), constant(0.001)},
           adam_attrs(DType::Float64, {0}, 0.8, 0.99, 1e-8)},
          // mixed_bfloat16: bf16 gradients of float32 variables (a matrix, widened in bands; a vector).
          {{sample_resource(constant({{1.f, -2.f}, {0.5f, 4.f}}), "var"),
            sample_resource(constant({{0.1f, 0.f}, {-0.2f, 0.5f}}), "m"),
            sample_resource(constant({{0.01f, 0.f}, {0.04f, 1.f}}), "v"),
            cast(constant({{3.f, -0.5f}, {0.f, 1.25f}}), DType::BFloat16),
            sample_resource(constant({2.f, -1.f}), "var_1"),
            sample_resource(constant({0.f, 0.5f}), "m_1"), sample_resource(constant({0.f, 0.25f}), "v_1"),
            cast(constant({-1.f, 4.f}), DType::BFloat16), constant(0.01f)},
           adam_attrs(DType::Float32, {0, 0}, 0.9, 0.999, 1e-7)}};
}

// Made by a pass after differentiation: nothing differentiates it.
constexpr detail::OpDef kFusedApplyAdam{.name = "FusedApplyAdam", .infer = fused_apply_adam_infer,
                                        .kernel = fused_apply_adam_kernel,
                                        .flags = schema::kStateful | schema::kNotDifferentiable,
                                        .samples = fused_apply_adam_samples};

}  // namespace

const detail::OpDef& fused_apply_adam_op() { return kFusedApplyAdam; }

}  // namespace kiln::exec
