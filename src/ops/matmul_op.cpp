// MatMul: (batched, broadcasting) matrix multiplication, as tf.linalg.matmul.
// float32 runs on oneDNN, except a few rows times a matrix (ops/gemv.h); float64
// and integers (which oneDNN 2.x does not offer) on a plain loop.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include <omp.h>

#include "ops/gemv.h"
#include "ops/grad_util.h"
#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/nn_internal.h"
#include "ops/onednn.h"
#include "core/tensor_impl.h"
#include "kiln/reduce.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"

namespace kiln {
namespace ops {

namespace {

bool matmul_dtype_ok(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Int32 || d == DType::Int64;
}

// b_row_padding (graph-internal, set by the weight-rows pass): b is stored
// with its rows that many elements longer than the matrix, as a variable read
// in that form gives it ([K, N + padding] for b [K, N], either way
// transposed). The product is the same as of the dense matrix.
int64_t b_row_padding(const schema::Attrs& attrs) {
  return attrs.has(kMatmulBRowPadding) ? attrs.get_int(kMatmulBRowPadding) : 0;
}

// The matrix a b stored with `padding` stands for: its rows that much shorter.
Shape without_row_padding(const Shape& stored, int64_t padding) {
  return padding ? Shape{stored[0], stored[1] - padding} : stored;
}

// b_panels (graph-internal, set by the weight-rows pass): the matrix b
// [rows, cols] comes as its panels, a [cols / width, rows, width] tensor
// (nn_internal.h); read as it is (b [K, N], a dense layer's forward) or
// transposed (b [N, K], its input gradient, with Kiln's own kernel).
int64_t b_panel_width(const schema::Attrs& attrs) {
  return attrs.has(kMatmulBPanels) ? attrs.get_int(kMatmulBPanels) : 0;
}

// b's logical shape, checked.
Shape logical_b_shape(schema::InferContext& c) {
  const Shape& b = c.shape(1);
  if (const int64_t width = b_panel_width(c.attrs())) {
    if (width != kMatmulPanelWidth || c.dtype(1) != DType::Float32 || !b.is_fully_defined() || b.rank() != 3 ||
        b[2] != width || b_row_padding(c.attrs()) || !c.shape(0).has_known_rank() || c.shape(0).rank() != 2)
      c.fail("{}={} needs a float32 b of known shape [columns / {}, rows, {}] and a matrix a; got b {} {}",
             kMatmulBPanels, width, kMatmulPanelWidth, kMatmulPanelWidth, dtype_name(c.dtype(1)), b.to_string());
    return Shape{b[1], b[0] * width};
  }
  const int64_t padding = b_row_padding(c.attrs());
  if (padding != 0 &&
      (padding < 0 || !b.has_known_rank() || b.rank() != 2 || b[1] < padding || c.dtype(1) != DType::Float32))
    c.fail("{}={} needs a float32 b of rank 2 with at least that many columns, got {} {}", kMatmulBRowPadding,
           padding, dtype_name(c.dtype(1)), b.to_string());
  return without_row_padding(b, padding);
}

void matmul_infer(schema::InferContext& c) {
  DType da = c.dtype(0), db = c.dtype(1);
  if (da != db)
    c.fail("a and b must have the same dtype, got a: {} and b: {}", dtype_name(da), dtype_name(db));
  if (!matmul_dtype_ok(da))
    c.fail("dtype must be float32, float64, int32 or int64, got {}", dtype_name(da));
  const Shape& a = c.shape(0);
  const Shape b = logical_b_shape(c);
  if (a.has_known_rank() && a.rank() < 2)
    c.fail("a must have rank >= 2, got shape {} (b has shape {})", a.to_string(), b.to_string());
  if (b.has_known_rank() && b.rank() < 2)
    c.fail("b must have rank >= 2, got shape {} (a has shape {})", b.to_string(), a.to_string());
  if (!a.has_known_rank() || !b.has_known_rank()) {
    c.add_output(da, Shape::unknown_rank());
    return;
  }
  bool ta = c.attrs().get_bool("transpose_a"), tb = c.attrs().get_bool("transpose_b");
  int ra = a.rank(), rb = b.rank();
  int64_t m = ta ? a[ra - 1] : a[ra - 2];
  int64_t ka = ta ? a[ra - 2] : a[ra - 1];
  int64_t kb = tb ? b[rb - 1] : b[rb - 2];
  int64_t n = tb ? b[rb - 2] : b[rb - 1];
  if (ka >= 0 && kb >= 0 && ka != kb)
    c.fail("the inner dimensions do not match: a has shape {} and b has shape {} "
           "(transpose_a={}, transpose_b={}), so a gives {} columns and b {} rows",
           a.to_string(), b.to_string(), ta, tb, ka, kb);
  int r = std::max(ra, rb);
  Shape out;
  for (int i = 0; i < r - 2; ++i) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
    int64_t d;
    if (x == 1) d = y;
    else if (y == 1) d = x;
    else if (x < 0) d = y;  // unknown vs known (not 1): must be that
    else if (y < 0) d = x;
    else if (x == y) d = x;
    else
      c.fail("the batch dimensions cannot be broadcast: a has shape {} and b has shape {}",
             a.to_string(), b.to_string());
    out.push_back(d);
  }
  out.push_back(m);
  out.push_back(n);
  c.add_output(da, out);
}

// The multiplication, described once for both paths: batch dims padded to
// the output's rank, element strides of each logical [M, K] / [K, N] matrix.
struct MatmulGeometry {
  int batch_rank = 0;
  int64_t out_batch[Shape::kMaxRank] = {};
  int64_t a_batch[Shape::kMaxRank] = {}, b_batch[Shape::kMaxRank] = {};
  int64_t a_batch_stride[Shape::kMaxRank] = {}, b_batch_stride[Shape::kMaxRank] = {};
  int64_t m = 0, n = 0, k = 0;
  int64_t a_row = 0, a_col = 0;  // strides of a's logical [M, K]
  int64_t b_row = 0, b_col = 0;  // strides of b's logical [K, N] (unless in panels)
  bool ta = false, tb = false;
  bool b_panels = false;  // b comes in panels (b_panels): [N / 64, K, 64], or [K / 64, N, 64] transposed
};

// Row-major strides of the stored matrices, with broadcast batch dims padded.
void batch_strides(const Shape& s, int batch_rank, int64_t* dims, int64_t* strides) {
  int r = s.rank();
  int64_t stride = s[r - 1] * s[r - 2];
  for (int i = batch_rank - 1; i >= 0; --i) {
    int si = i - (batch_rank - (r - 2));
    dims[i] = si >= 0 ? s[si] : 1;
    strides[i] = stride;
    stride *= dims[i];
  }
}

MatmulGeometry geometry(const schema::KernelContext& c) {
  MatmulGeometry g;
  const Shape& as = c.in_shape(0);
  const int64_t padding = b_row_padding(c.attrs);
  g.b_panels = b_panel_width(c.attrs) != 0;
  const Shape& stored_b = c.in_shape(1);
  const Shape bs = g.b_panels ? Shape{stored_b[1], stored_b[0] * stored_b[2]} : without_row_padding(stored_b, padding);
  const Shape& os = c.out_shape(0);
  g.ta = c.attrs.get_bool("transpose_a");
  g.tb = c.attrs.get_bool("transpose_b");
  int r = os.rank();
  g.batch_rank = r - 2;
  for (int i = 0; i < g.batch_rank; ++i) g.out_batch[i] = os[i];
  g.m = os[r - 2];
  g.n = os[r - 1];
  g.k = g.ta ? as[as.rank() - 2] : as[as.rank() - 1];
  batch_strides(as, g.batch_rank, g.a_batch, g.a_batch_stride);
  batch_strides(bs, g.batch_rank, g.b_batch, g.b_batch_stride);
  g.a_row = g.ta ? 1 : g.k;
  g.a_col = g.ta ? g.m : 1;
  g.b_row = g.tb ? 1 : g.n + padding;
  g.b_col = g.tb ? g.k + padding : 1;
  return g;
}

// A few rows of a times one matrix b, not transposed: gemv_f32's case. The
// choice depends on the shapes and attrs alone, so eager and traced runs of
// the same product take the same kernel.
bool few_rows_times_matrix(const MatmulGeometry& g) {
  for (int i = 0; i < g.batch_rank; ++i)
    if (g.out_batch[i] != 1) return false;
  return g.m <= kGemvMaxRows && g.b_col == 1 && !g.b_panels;
}

// ---- float32: oneDNN --------------------------------------------------------
struct MatmulPrimitive {
  onednn::Executable exec;  // (a, b, c)
  // b's rows are copied this many elements apart before the run; 0 when the
  // primitive reads b in place.
  int64_t padded_ld = 0;
};

std::atomic<int> b_padding_mode{static_cast<int>(MatmulBPadding::kByRule)};

// oneDNN's own view of the CPU (ONEDNN_MAX_CPU_ISA included), not Kiln's
// AVX-512 check for its own kernels: the padding rule is about which sgemm
// oneDNN runs.
bool cpu_has_avx512_core() {
  static const bool has = [] {
    auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto core = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & core) == core;
  }();
  return has;
}

// b [k, n] in panels, as oneDNN describes that layout.
dnnl::memory::desc panels_desc(int64_t k, int64_t n) {
  return dnnl::memory::desc({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::BA16a64b);
}

std::shared_ptr<const MatmulPrimitive> make_matmul(const MatmulGeometry& g, bool fold) {
  using dims = dnnl::memory::dims;
  dims ad, as, bd, bs, cd, cs;
  if (fold) {
    // b is one matrix for the whole batch and a is not transposed: the batch
    // is just more rows of a, one larger GEMM.
    int64_t rows = g.m;
    for (int i = 0; i < g.batch_rank; ++i) rows *= g.out_batch[i];
    ad = {rows, g.k};
    as = {g.k, 1};
    bd = {g.k, g.n};
    bs = {g.b_row, g.b_col};
    cd = {rows, g.n};
    cs = {g.n, 1};
  } else {
    for (int i = 0; i < g.batch_rank; ++i) {
      ad.push_back(g.a_batch[i]);
      as.push_back(g.a_batch_stride[i]);
      bd.push_back(g.b_batch[i]);
      bs.push_back(g.b_batch_stride[i]);
      cd.push_back(g.out_batch[i]);
    }
    ad.insert(ad.end(), {g.m, g.k});
    as.insert(as.end(), {g.a_row, g.a_col});
    bd.insert(bd.end(), {g.k, g.n});
    bs.insert(bs.end(), {g.b_row, g.b_col});
    cd.insert(cd.end(), {g.m, g.n});
    cs.assign(cd.size(), 1);
    for (int i = static_cast<int>(cd.size()) - 2; i >= 0; --i) cs[i] = cs[i + 1] * cd[i + 1];
  }
  auto p = std::make_shared<MatmulPrimitive>();
  dnnl::memory::desc a = onednn::plain_desc(ad, as), b = onednn::plain_desc(bd, bs), c = onednn::plain_desc(cd, cs);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (g.b_panels) b = panels_desc(g.k, g.n);
  const int64_t rows = cd[cd.size() - 2];
  const bool single_b = fold || g.batch_rank == 0;
  const auto mode = static_cast<MatmulBPadding>(b_padding_mode.load(std::memory_order_relaxed));
  // b given in longer rows already (b_row_padding) is read as it is.
  const int64_t ld =
      single_b && !g.b_panels && g.b_col == 1 && g.b_row == g.n ? matmul_b_row_stride(rows, g.k, g.n) : g.n;
  if (ld != g.n) {
    dnnl::memory::desc padded = onednn::plain_desc(bd, {ld, 1});
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, padded, c), attr, onednn::engine());
    // Only the kernel the rule is about; any other one reads b in place.
    if (mode == MatmulBPadding::kAlways || std::string_view(pd.impl_info_str()).starts_with("gemm:jit")) {
      p->padded_ld = ld;
      p->exec.init(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, padded}, {DNNL_ARG_DST, c}},
                   pd.scratchpad_desc().get_size());
      return p;
    }
  }
  dnnl::matmul::desc desc(a, b, c);
  dnnl::matmul::primitive_desc pd(desc, attr, onednn::engine());
  p->exec.init(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}},
               pd.scratchpad_desc().get_size());
  return p;
}

// False when oneDNN could not run it (the caller falls back).
bool matmul_onednn(const MatmulGeometry& g, const float* a, const float* b, float* out) {
  try {
    bool b_single = true;
    for (int i = 0; i < g.batch_rank; ++i) b_single = b_single && g.b_batch[i] == 1;
    bool fold = b_single && !g.ta && g.batch_rank > 0;
    onednn::PrimitiveKey key(/*kind=*/1);
    key.add(g.batch_rank);
    key.add(fold);
    key.add(g.ta);
    key.add(g.tb);
    key.add(g.m);
    key.add(g.n);
    key.add(g.k);
    key.add(g.b_row);
    key.add(g.b_col);
    key.add(g.b_panels);
    for (int i = 0; i < g.batch_rank; ++i) {
      key.add(g.a_batch[i]);
      key.add(g.b_batch[i]);
    }
    key.add(b_padding_mode.load(std::memory_order_relaxed));
    auto p = onednn::cached<MatmulPrimitive>(key, [&] { return make_matmul(g, fold); });
    if (p->padded_ld) {
      auto* rows = static_cast<float*>(
          onednn::scratch(onednn::kWeights, static_cast<std::size_t>(g.k * p->padded_ld) * sizeof(float)));
      copy_rows(b, g.n, rows, p->padded_ld, g.k, g.n);
      b = rows;
    }
    p->exec.run({a, b, out});
    return true;
  } catch (...) {
    return false;
  }
}

template <class T>
void matmul_plain(const MatmulGeometry& g, const T* a, const T* b, T* out);

// ---- float32, b's panels read transposed ------------------------------------
// The dense product's geometry, b [n, k] read transposed in place.
MatmulGeometry dense_transposed_geometry(int64_t rows, int64_t k, int64_t n) {
  MatmulGeometry g;
  g.m = rows;
  g.k = k;
  g.n = n;
  g.a_row = k;
  g.a_col = 1;
  g.b_row = 1;
  g.b_col = k;
  g.tb = true;
  return g;
}

// Kiln's kernel where it runs and knows oneDNN's chains for the shape;
// elsewhere (a transposed a, a thread count whose oneDNN product sums
// otherwise) oneDNN on the dense b, made from the panels.
void transposed_panels_product(const MatmulGeometry& g, const float* a, const Tensor& panels, float* out) {
  const int64_t chain = g.ta ? 0 : matmul_transposed_panels_chain(g.m, g.k, g.n);
  if (chain) return multiply_by_transposed_panels(a, g.m, g.k, core::data_of<float>(panels), g.n, chain, out);
  const Tensor dense_b = rows_of_panels(panels);
  const float* b = core::data_of<float>(dense_b);
  MatmulGeometry dense = g;
  dense.b_panels = false;
  if (!matmul_onednn(dense, a, b, out)) matmul_plain<float>(dense, a, b, out);
}

// ---- other dtypes (and the fallback): a plain loop ---------------------------
template <class T>
void matmul_plain(const MatmulGeometry& g, const T* a, const T* b, T* out) {
  int64_t batches = 1;
  for (int i = 0; i < g.batch_rank; ++i) batches *= g.out_batch[i];
  int64_t rows = batches * g.m;
  int64_t work_per_row = std::max<int64_t>(1, g.n * g.k);
  core::parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          int64_t batch = row / g.m, i = row % g.m;
          int64_t a_off = 0, b_off = 0, rest = batch;
          for (int d = g.batch_rank - 1; d >= 0; --d) {
            int64_t idx = rest % g.out_batch[d];
            rest /= g.out_batch[d];
            if (g.a_batch[d] != 1) a_off += idx * g.a_batch_stride[d];
            if (g.b_batch[d] != 1) b_off += idx * g.b_batch_stride[d];
          }
          const T* arow = a + a_off + i * g.a_row;
          const T* bm = b + b_off;
          T* o = out + row * g.n;
          for (int64_t j = 0; j < g.n; ++j) o[j] = T(0);
          for (int64_t kk = 0; kk < g.k; ++kk) {
            T x = arow[kk * g.a_col];
            const T* brow = bm + kk * g.b_row;
            if (g.b_col == 1) {
              for (int64_t j = 0; j < g.n; ++j) o[j] += x * brow[j];
            } else {
              for (int64_t j = 0; j < g.n; ++j) o[j] += x * brow[j * g.b_col];
            }
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / work_per_row));
}

void matmul_kernel(schema::KernelContext& c) {
  Tensor& out = c.outputs[0];
  if (out.size() == 0) return;
  MatmulGeometry g = geometry(c);
  core::visit_numeric(out.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t>) {
      T* o = c.out<T>(0);
      if (g.k == 0) {
        std::fill(o, o + out.size(), T(0));
        return;
      }
      if constexpr (std::is_same_v<T, float>) {
        if (g.b_panels && g.tb) return transposed_panels_product(g, c.in<float>(0), c.inputs[1], o);
        if (few_rows_times_matrix(g))
          return gemv_f32({c.in<float>(0), g.m, g.a_row, g.a_col}, c.in<float>(1), g.b_row, g.k, g.n, o);
        if (matmul_onednn(g, c.in<float>(0), c.in<float>(1), o)) return;
        // The plain loop reads a dense b; panels are made only where
        // oneDNN's primitive reads them (matmul_reads_panels).
        if (g.b_panels) throw Internal("MatMul: oneDNN could not run a product of b in panels");
      }
      matmul_plain<T>(g, c.in<T>(0), c.in<T>(1), o);
    }
  });
}

std::vector<schema::OpSample> matmul_samples() {
  return {
      {{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}), constant({{1.f, 0.f}, {0.5f, -1.f}, {2.f, 1.f}})},
       schema::Attrs{{"transpose_a", false}, {"transpose_b", false}}},
      {{constant({{{1.0, 2.0}, {3.0, 4.0}}, {{0.5, -1.0}, {2.0, 0.0}}}),
        constant({{1.0, -2.0}, {0.25, 3.0}})},
       schema::Attrs{{"transpose_a", true}, {"transpose_b", true}}},
      // Batch dims broadcast from both sides ([2, 1] with [3] gives [2, 3]),
      // so the gradients must sum over the dims each operand was stretched on.
      {{constant({{{{1.0, -1.0, 0.5}, {2.0, 0.0, 1.0}}}, {{{0.5, 1.5, -2.0}, {1.0, 1.0, 3.0}}}}),
        constant({{{1.0, 2.0}, {0.0, -1.0}, {0.5, 0.25}},
                  {{-1.0, 1.0}, {2.0, 0.5}, {1.0, 0.0}},
                  {{0.25, -0.5}, {1.5, 2.0}, {-1.0, 1.0}}})},
       schema::Attrs{{"transpose_a", false}, {"transpose_b", false}}},
      // A few rows (ops/gemv.h).
      {{constant({{0.5f, -1.f, 2.f}}), constant({{1.f, 0.f, -2.f, 0.25f}, {0.5f, -1.f, 3.f, 1.f}, {2.f, 1.f, 0.f, -1.f}})},
       schema::Attrs{{"transpose_a", false}, {"transpose_b", false}}},
      {{constant({{{1.f, 2.f}, {3.f, 4.f}, {-1.f, 0.5f}}}),
        constant({{{1.f, 0.f, 2.f}, {-1.f, 0.5f, 1.f}}, {{0.5f, 2.f, -1.f}, {1.f, 1.f, 0.f}}})},
       schema::Attrs{{"transpose_a", true}, {"transpose_b", true}}},
  };
}

// With C = op(A) op(B) and op a transpose or not: dA = dC op(B)^T and
// dB = op(A)^T dC, each written as one matmul (transposed operands in place
// of transposes) in the operand's own layout.
void matmul_gradient(schema::GradContext& c) {
  // The pass that sets it runs on graphs already differentiated.
  if (b_row_padding(c.attrs) || b_panel_width(c.attrs))
    throw Internal(fmt::format("MatMul with {} or {} has no gradient", kMatmulBRowPadding, kMatmulBPanels));
  const Tensor& a = c.inputs[0];
  const Tensor& b = c.inputs[1];
  const Tensor& g = c.grad(0);
  bool ta = c.attrs.get_bool("transpose_a"), tb = c.attrs.get_bool("transpose_b");
  if (c.needs(0)) {
    Tensor da = !ta ? matmul(g, b, false, !tb) : matmul(b, g, tb, true);
    c.set(0, sum_to_shape_of(da, a));  // broadcast batch dims sum back
  }
  if (c.needs(1)) {
    Tensor db = !tb ? matmul(a, g, !ta, false) : matmul(g, a, true, ta);
    c.set(1, sum_to_shape_of(db, b));
  }
}

constexpr detail::OpDef kMatMul{.name = "MatMul", .infer = matmul_infer, .kernel = matmul_kernel,
                                .flags = schema::kCostlyToRecompute | schema::kShapeFromShapes,
                                .samples = matmul_samples, .gradient = matmul_gradient};

}  // namespace

void register_matmul_op(schema::OpRegistry& r) { r.add(kMatMul); }

}  // namespace ops

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              SourceLocation loc) {
  const Tensor in[] = {a, b};
  return runtime::dispatch1(ops::kMatMul, in,
                            schema::Attrs{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}},
                            loc);
}

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& matmul_op() { return ops::kMatMul; }

bool matmul_pads_b(int64_t rows, int64_t k, int64_t n) {
  // oneDNN 2.6's AVX2 sgemm takes its no-copy kernel when 1/M + 1/N >= 0.0038
  // (its FORCE_NOCOPY_THRESH; M and N of the product), which reads b's rows in
  // place; rows a multiple of 4 KB apart then fall into few cache sets. Its
  // AVX-512 sgemm avoids no-copy for such strides itself. With fewer than 32
  // rows, or rows 2 KB apart, the copy cost as much as it saved or more in
  // Kiln's own loop of warm calls (docs/design-notes.md, "Foundation"); past
  // kMatmulMaxPaddedB elements the thread would keep too large a copy.
  return !cpu_has_avx512_core() && n % 1024 == 0 && k >= 16 && rows >= 32 && k * n <= kMatmulMaxPaddedB &&
         1.0 / static_cast<double>(rows) + 1.0 / static_cast<double>(n) >= 0.0038;
}

int64_t matmul_b_row_stride(int64_t rows, int64_t k, int64_t n) {
  const auto mode = static_cast<MatmulBPadding>(b_padding_mode.load(std::memory_order_relaxed));
  const bool pad = mode == MatmulBPadding::kAlways || (mode == MatmulBPadding::kByRule && matmul_pads_b(rows, k, n));
  return pad ? n + kMatmulBPad : n;
}

void copy_rows(const float* from, int64_t from_stride, float* to, int64_t to_stride, int64_t rows, int64_t cols) {
  core::parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          std::memcpy(to + r * to_stride, from + r * from_stride, static_cast<std::size_t>(cols) * sizeof(float));
      },
      std::max<int64_t>(1, core::kParallelGrain / std::max<int64_t>(cols, 1)));
}

Tensor new_longer_rows(int64_t rows, int64_t cols, int64_t padding) {
  Tensor longer = core::make_tensor(DType::Float32, Shape{rows, cols + padding});
  float* m = core::data_of<float>(longer);
  for (int64_t r = 0; r < rows; ++r) std::fill_n(m + r * (cols + padding) + cols, padding, 0.f);
  return longer;
}

Tensor in_longer_rows(const Tensor& b, int64_t padding) {
  const int64_t k = b.shape()[0], n = b.shape()[1];
  Tensor longer = new_longer_rows(k, n, padding);
  copy_rows(core::data_of<float>(b), n, core::data_of<float>(longer), n + padding, k, n);
  return longer;
}

bool matmul_reads_panels(int64_t rows, int64_t k, int64_t n) {
  if (!cpu_has_avx512_core() || rows <= kGemvMaxRows || k < 16 || k % 16 != 0 || n % kMatmulPanelWidth != 0)
    return false;
  struct Answer {
    bool yes = false;
  };
  onednn::PrimitiveKey key(/*kind=*/8);
  for (int64_t v : {rows, k, n}) key.add(v);
  return onednn::cached<Answer>(key, [&] {
    auto answer = std::make_shared<Answer>();
    try {
      using dims = dnnl::memory::dims;
      const dnnl::memory::desc a = onednn::plain_desc(dims{rows, k}, dims{k, 1});
      const dnnl::memory::desc c = onednn::plain_desc(dims{rows, n}, dims{n, 1});
      const dnnl::memory::desc any({k, n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, any, c), attr, onednn::engine());
      answer->yes = pd.weights_desc() == panels_desc(k, n);
    } catch (const dnnl::error&) {
    }
    return answer;
  })->yes;
}

int64_t matmul_transposed_panels_chain(int64_t rows, int64_t k, int64_t n) {
  if (rows < 1 || !can_multiply_by_transposed_panels(k, n, kMatmulPanelWidth)) return 0;
  struct Answer {
    int64_t chain = 0;
  };
  onednn::PrimitiveKey key(/*kind=*/9);
  for (int64_t v : {rows, k, n, static_cast<int64_t>(omp_get_max_threads())}) key.add(v);
  return onednn::cached<Answer>(key, [&] {
    // Both products of one a and b: a chain length gives oneDNN's bits only
    // if it sums as oneDNN does.
    auto answer = std::make_shared<Answer>();
    const Tensor a = core::make_tensor(DType::Float32, Shape{rows, k});
    const Tensor b = core::make_tensor(DType::Float32, Shape{n, k});
    fill_probe_values({a, b});
    const Tensor panels = in_panels(b);
    std::vector<float> dense(static_cast<std::size_t>(rows * n)), ours(dense.size());
    if (!matmul_onednn(dense_transposed_geometry(rows, k, n), core::data_of<float>(a), core::data_of<float>(b),
                       dense.data()))
      return answer;
    for (int64_t chain = k; chain >= kMatmulPanelWidth && chain % kMatmulPanelWidth == 0; chain /= 2) {
      if (k % chain != 0) continue;
      multiply_by_transposed_panels(core::data_of<float>(a), rows, k, core::data_of<float>(panels), n, chain,
                                    ours.data());
      if (std::memcmp(ours.data(), dense.data(), dense.size() * sizeof(float)) == 0) {
        answer->chain = chain;
        break;
      }
    }
    return answer;
  })->chain;
}

void fill_probe_values(std::initializer_list<Tensor> tensors) {
  uint32_t state = 12345;
  for (const Tensor& t : tensors) {
    float* p = core::data_of<float>(t);
    for (int64_t i = 0; i < t.size(); ++i) {
      state = state * 1664525u + 1013904223u;
      p[i] = static_cast<float>(static_cast<int32_t>(state >> 8) - (1 << 23)) / static_cast<float>(1 << 23) *
             static_cast<float>(1 + (state & 7));
    }
  }
}

bool matmul_reads_transposed_from_panels(int64_t rows, int64_t k, int64_t n) {
  return rows <= kMatmulTransposedPanelsMaxRows && matmul_transposed_panels_chain(rows, k, n) != 0;
}

void set_matmul_b_padding(MatmulBPadding mode) {
  b_padding_mode.store(static_cast<int>(mode), std::memory_order_relaxed);
}
}  // namespace kiln::ops
