// MatMul: (batched, broadcasting) matrix multiplication, as tf.linalg.matmul.
// float32 runs on oneDNN, except a few rows times a matrix (ops/gemv.h); float64
// and integers (which oneDNN 2.x does not offer) on a plain loop.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "kiln/complex_math.h"
#include "kiln/math.h"
#include "ops/gemv.h"
#include "ops/grad_util.h"
#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"
#include "ops/onednn.h"
#include "core/tensor_impl.h"
#include "kiln/reduce.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

bool matmul_dtype_ok(DType d) {
  return d == DType::Float32 || d == DType::Float64 || d == DType::Int32 || d == DType::Int64 || is_half(d);
}

// b_layout (graph-internal, set by the layout-assignment pass): b comes
// packed in that weight layout (ops/matmul_layout.h).
const MatmulLayout* b_layout(const schema::Attrs& attrs) {
  return attrs.has(kMatmulBLayout) ? find_layout(attrs.get_string(kMatmulBLayout)) : nullptr;
}

// b's logical shape, checked.
Shape logical_b_shape(schema::InferContext& c) {
  const Shape& b = c.shape(1);
  if (!c.attrs().has(kMatmulBLayout)) return b;
  const MatmulLayout* layout = b_layout(c.attrs());
  int64_t k = 0, n = 0;
  const bool transposed = c.attrs().get_bool("transpose_b");
  if (!layout || c.dtype(1) != DType::Float32 || !layout->unpacked_shape(b, k, n) || !layout->fits(k, n) ||
      c.attrs().get_bool("transpose_a") || (transposed && !layout->unpack) || !c.shape(0).has_known_rank() ||
      c.shape(0).rank() != 2)
    c.fail("{}={} needs a float32 b packed so, transposed only where the layout can, and a matrix a not "
           "transposed; got b {} {}{}",
           kMatmulBLayout, c.attrs().get_string(kMatmulBLayout), dtype_name(c.dtype(1)), b.to_string(),
           transposed ? " (transposed)" : "");
  return Shape{k, n};
}

void matmul_infer(schema::InferContext& c) {
  DType da = c.dtype(0), db = c.dtype(1);
  if (da != db)
    c.fail("a and b must have the same dtype, got a: {} and b: {}", dtype_name(da), dtype_name(db));
  if (!matmul_dtype_ok(da))
    c.fail("dtype must be float16, bfloat16, float32, float64, int32 or int64, got {}", dtype_name(da));
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
  int64_t b_row = 0, b_col = 0;  // strides of b's logical [K, N] (unless packed)
  bool ta = false, tb = false;
  const MatmulLayout* b_layout = nullptr;  // b comes packed so (b_layout)
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
  g.b_layout = b_layout(c.attrs);
  Shape bs = c.in_shape(1);
  if (g.b_layout) {
    int64_t k = 0, n = 0;
    g.b_layout->unpacked_shape(bs, k, n);
    bs = Shape{k, n};
  }
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
  g.b_row = g.tb ? 1 : g.n;
  g.b_col = g.tb ? g.k : 1;
  return g;
}

// A few rows of a times one matrix b, not transposed: gemv_f32's case. The
// choice depends on the shapes and attrs alone, so eager and traced runs of
// the same product take the same kernel.
bool few_rows_times_matrix(const MatmulGeometry& g) {
  for (int i = 0; i < g.batch_rank; ++i)
    if (g.out_batch[i] != 1) return false;
  return g.m <= kGemvMaxRows && g.b_col == 1;
}

// ---- float32: oneDNN --------------------------------------------------------
struct MatmulPrimitive {
  onednn::Executable exec;  // (a, b, c)
  // b's rows are copied this many elements apart before the run; 0 when the
  // primitive reads b in place.
  int64_t padded_ld = 0;
};

// Of float32, or of bfloat16 (bf16 operands and result, float32 accumulation;
// unset where oneDNN has only its reference kernel for it).
std::shared_ptr<const MatmulPrimitive> make_matmul(const MatmulGeometry& g, bool fold,
                                                   dnnl::memory::data_type type) {
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
  dnnl::memory::desc a = onednn::plain_desc(ad, as, type), b = onednn::plain_desc(bd, bs, type),
                     c = onednn::plain_desc(cd, cs, type);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (type != dnnl::memory::data_type::f32) {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, c), attr, onednn::engine());
    if (onednn::is_fast_impl(pd.impl_info_str()))
      p->exec.init(dnnl::matmul(pd), {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}},
                   pd.scratchpad_desc().get_size());
    return p;
  }
  const int64_t rows = cd[cd.size() - 2];
  const bool single_b = fold || g.batch_rank == 0;
  const MatmulBPadding mode = matmul_b_padding();
  const int64_t ld = single_b && g.b_col == 1 ? matmul_b_row_stride(rows, g.k, g.n) : g.n;
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

// False when oneDNN could not run it (the caller falls back). `type` is f32
// (float* operands) or bf16 (bfloat16_t*).
bool matmul_onednn(const MatmulGeometry& g, const void* a, const void* b, void* out,
                   dnnl::memory::data_type type = dnnl::memory::data_type::f32) {
  try {
    bool b_single = true;
    for (int i = 0; i < g.batch_rank; ++i) b_single = b_single && g.b_batch[i] == 1;
    bool fold = b_single && !g.ta && g.batch_rank > 0;
    const bool bf16 = type == dnnl::memory::data_type::bf16;
    onednn::PrimitiveKey key(/*kind=*/bf16 ? 101 : 1);
    key.add(g.batch_rank);
    key.add(fold);
    key.add(g.ta);
    key.add(g.tb);
    key.add(g.m);
    key.add(g.n);
    key.add(g.k);
    key.add(g.b_row);
    key.add(g.b_col);
    for (int i = 0; i < g.batch_rank; ++i) {
      key.add(g.a_batch[i]);
      key.add(g.b_batch[i]);
    }
    key.add(static_cast<int>(matmul_b_padding()));
    auto p = onednn::cached<MatmulPrimitive>(key, [&] { return make_matmul(g, fold, type); });
    if (!p->exec) return false;
    if (p->padded_ld) {
      auto* rows = static_cast<float*>(
          onednn::scratch(onednn::kWeights, static_cast<std::size_t>(g.k * p->padded_ld) * sizeof(float)));
      copy_rows(static_cast<const float*>(b), g.n, rows, p->padded_ld, g.k, g.n);
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

// ---- float32, b packed -------------------------------------------------------
// The layout's product; where it cannot run one read transposed (a thread
// count whose oneDNN product sums otherwise), oneDNN on the dense b made
// from the packed one.
void packed_product(const MatmulGeometry& g, const float* a, const Tensor& b, float* out) {
  const MatmulLayout& layout = *g.b_layout;
  if (!g.tb && layout.multiply(a, g.m, g.k, g.n, b, out)) return;
  if (g.tb && layout.multiply_transposed && layout.multiply_transposed(a, g.m, g.k, g.n, b, out)) return;
  // Layouts are assigned only where oneDNN reads them (MatmulLayout::wants).
  if (!g.tb) throw Internal(fmt::format("MatMul: oneDNN could not run a product of b in {}", layout.name));
  const Tensor dense_b = layout.unpack(b);
  MatmulGeometry dense = g;
  dense.b_layout = nullptr;
  if (!matmul_onednn(dense, a, core::data_of<float>(dense_b), out))
    matmul_plain<float>(dense, a, core::data_of<float>(dense_b), out);
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

// bfloat16 on oneDNN's bf16 kernel (float32 accumulation, one rounding of
// each result), where the CPU has bf16 instructions; false leaves it to the
// float32 path (widen_bridge). A packed b is float32 only.
bool matmul_bf16(schema::KernelContext& c) {
  if (!onednn::bf16_kernels() || c.attrs.has(kMatmulBLayout) || c.outputs[0].size() == 0) return false;
  const MatmulGeometry g = geometry(c);
  if (g.k == 0) return false;
  return matmul_onednn(g, c.in<bfloat16_t>(0), c.in<bfloat16_t>(1), c.out<bfloat16_t>(0),
                       dnnl::memory::data_type::bf16);
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
        if (g.b_layout) return packed_product(g, c.in<float>(0), c.inputs[1], o);
        if (few_rows_times_matrix(g))
          return gemv_f32({c.in<float>(0), g.m, g.a_row, g.a_col}, c.in<float>(1), g.b_row, g.k, g.n, o);
        if (matmul_onednn(g, c.in<float>(0), c.in<float>(1), o)) return;
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
  if (c.attrs.has(kMatmulBLayout)) throw Internal(fmt::format("MatMul with {} has no gradient", kMatmulBLayout));
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

constexpr detail::OpDef kMatMul{.name = "MatMul", .infer = matmul_infer,
                                .kernel = bf16_or_widened<matmul_bf16, matmul_kernel>,
                                .flags = schema::kCostlyToRecompute | schema::kShapeFromShapes,
                                .samples = matmul_samples, .gradient = matmul_gradient};

}  // namespace

void register_matmul_op(schema::OpRegistry& r) { r.add(kMatMul); }

}  // namespace ops

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b,
              SourceLocation loc) {
  if (is_complex(a.dtype()) && a.dtype() == b.dtype()) [[unlikely]] {
    // (A + iB)(C + iD) = (AC - BD) + i(AD + BC), four real products.
    Tensor ar = real(a, loc), ai = imag(a, loc), br = real(b, loc), bi = imag(b, loc);
    auto mm = [&](const Tensor& x, const Tensor& y) { return matmul(x, y, transpose_a, transpose_b, loc); };
    return complex(subtract(mm(ar, br), mm(ai, bi), loc), add(mm(ar, bi), mm(ai, br), loc), loc);
  }
  const Tensor in[] = {a, b};
  return runtime::dispatch1(ops::kMatMul, in,
                            schema::Attrs{{"transpose_a", transpose_a}, {"transpose_b", transpose_b}},
                            loc);
}

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& matmul_op() { return ops::kMatMul; }

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

}  // namespace kiln::ops
