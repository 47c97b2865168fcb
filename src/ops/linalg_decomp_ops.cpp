// The orthogonal decompositions: Qr (LAPACK geqrf + orgqr), Svd (gesdd) and SelfAdjointEigV2
// (syevd, reading the lower triangle), with TF's gradients, which need the matrix dims known
// (as TF's do). A matrix with a NaN or an infinity gives NaN outputs rather than reaching the
// iterative routines; an empty matrix gives identities where TF's full factors are square.
#include <algorithm>

#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/linalg.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "ops/lapack.h"
#include "ops/linalg_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {
namespace linalg {

namespace {

template <class T> void identity(T* out, int64_t rows, int64_t cols) {
  std::fill(out, out + rows * cols, T(0));
  for (int64_t i = 0; i < std::min(rows, cols); ++i) out[i * cols + i] = T(1);
}

Shape with_matrix(const Shape& batch, int64_t r, int64_t c) {
  Shape s = batch;
  s.push_back(r);
  s.push_back(c);
  return s;
}

int64_t min_dim(int64_t m, int64_t n) { return m < 0 || n < 0 ? -1 : std::min(m, n); }

// x[..., :, begin:begin+size] (size -1: to the end).
Tensor columns(const Tensor& x, int64_t begin, int64_t size) {
  std::vector<int64_t> b(static_cast<std::size_t>(x.rank()), 0), s(static_cast<std::size_t>(x.rank()), -1);
  b.back() = begin;
  s.back() = size;
  return slice(x, b, s);
}

int64_t static_dim(const Tensor& x, int from_end, const char* op) {
  const Shape& s = x.shape();
  if (!s.has_known_rank() || s.rank() < 2 || s[s.rank() - from_end] < 0)
    throw Unimplemented(fmt::format("{}'s gradient needs the matrix dims known, got shape {}", op, s.to_string()));
  return s[s.rank() - from_end];
}

// ---- Qr ----

void qr_infer(schema::InferContext& c) {
  check_matrices(c, 0, false, true);
  const Shape& s = c.shape(0);
  if (!s.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  bool full = c.attrs().get_bool("full_matrices");
  int64_t m = rows(s), n = cols(s), k = full ? m : min_dim(m, n);
  c.add_output(c.dtype(0), with_matrix(batch_shape(s), m, k));
  c.add_output(c.dtype(0), with_matrix(batch_shape(s), k, n));
}

void qr_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int m = lapack_int(rows(s)), n = lapack_int(cols(s)), k = std::min(m, n);
  const bool full = c.attrs.get_bool("full_matrices");
  const int q_cols = full ? m : k;
  const int64_t count = num_matrices(s);
  scalar_switch(c.inputs[0].dtype(), [&]<class T>() {  // complex: geqrf and ungqr
    std::vector<T> a(static_cast<std::size_t>(int64_t{m} * std::max(n, q_cols))), tau(static_cast<std::size_t>(k));
    for (int64_t b = 0; b < count; ++b) {
      T* q = c.out<T>(0) + b * m * q_cols;
      T* r = c.out<T>(1) + b * q_cols * n;
      if (k == 0) {  // no reflections: Q is an identity, R empty or zero
        identity(q, m, q_cols);
        std::fill(r, r + int64_t{q_cols} * n, T(0));
        continue;
      }
      to_col_major(c.in<T>(0) + b * m * n, m, n, a.data(), m);
      T query = 0;
      int info = 0;
      lapack::geqrf(m, n, a.data(), m, tau.data(), &query, -1, &info);
      T query_q = 0;
      lapack::orgqr(m, q_cols, k, a.data(), m, tau.data(), &query_q, -1, &info);
      std::vector<T> work(std::max(work_size(query), work_size(query_q)));
      lapack::geqrf(m, n, a.data(), m, tau.data(), work.data(), static_cast<int>(work.size()), &info);
      for (int i = 0; i < q_cols; ++i)  // R: the upper triangle
        for (int j = 0; j < n; ++j) r[int64_t{i} * n + j] = j >= i ? a[int64_t{j} * m + i] : T(0);
      lapack::orgqr(m, q_cols, k, a.data(), m, tau.data(), work.data(), static_cast<int>(work.size()), &info);
      from_col_major(a.data(), m, q_cols, m, q);
    }
  });
}

// X (r upper-triangular): X r^-1, as TF's _TriangularSolve.
Tensor times_inverse_of_upper(const Tensor& x, const Tensor& r) {
  return adjoint(matrix_triangular_solve(r, adjoint(x), false, false));
}

Tensor qr_grad_square_or_deep(const Tensor& q, const Tensor& r, const Tensor& dq, const Tensor& dr) {
  Tensor qdq = matmul(q, dq, true, false);
  Tensor rdr = matmul(r, dr, false, true);
  Tensor tril = lower_part(qdq - adjoint(qdq) + rdr - adjoint(rdr));
  Tensor grad_a = matmul(q, dr + times_inverse_of_upper(tril, r));
  return grad_a + times_inverse_of_upper(dq - matmul(q, qdq), r);
}

void qr_grad(schema::GradContext& c) {
  refuse_complex_gradient(c, "Qr");
  const Tensor &q = c.outputs[0], &r = c.outputs[1];
  Tensor dq = c.grad_or_zeros(0), dr = c.grad_or_zeros(1);
  int64_t m = static_dim(c.inputs[0], 2, "Qr"), n = static_dim(c.inputs[0], 1, "Qr");
  if (m > n && c.attrs.get_bool("full_matrices"))
    throw Unimplemented("QrGrad not implemented when nrows > ncols and full_matrices is true.");
  if (m >= n) {
    c.set(0, qr_grad_square_or_deep(q, r, dq, dr));
    return;
  }
  // a = [x, y], r = [u, v]: the square case for x, and y = q v.
  Tensor y = columns(c.inputs[0], m, -1), u = columns(r, 0, m);
  Tensor dv = columns(dr, m, -1), du = columns(dr, 0, m);
  Tensor dx = qr_grad_square_or_deep(q, u, dq + matmul(y, dv, false, true), du);
  c.set(0, concat({dx, matmul(q, dv)}, -1));
}

std::vector<schema::OpSample> qr_samples() {
  Tensor tall = constant({{1.f, 2.f}, {3.f, -1.f}, {0.5f, 4.f}, {-2.f, 1.f}});
  Tensor wide = constant({{1.f, 2.f, -1.f}, {0.5f, -3.f, 2.f}});
  Tensor square = constant({{{4.f, 1.f, -2.f}, {0.5f, 3.f, 1.f}, {1.f, -1.f, 5.f}}});
  schema::Attrs reduced{{"full_matrices", false}}, full{{"full_matrices", true}};
  return {{{tall}, reduced}, {{wide}, reduced}, {{square}, reduced}, {{square}, full}, {{wide}, full},
          {{complex_sample_rhs()}, full}};
}

constexpr detail::OpDef kQr{.name = "Qr", .infer = qr_infer, .kernel = qr_kernel,
                            .samples = qr_samples, .gradient = qr_grad};

// ---- Svd ----

// Complex matrices have real singular values, as TF's.
void svd_infer(schema::InferContext& c) {
  check_matrices(c, 0, false, true);
  const Shape& s = c.shape(0);
  bool full = c.attrs().get_bool("full_matrices"), uv = c.attrs().get_bool("compute_uv");
  if (!s.has_known_rank()) {
    for (int i = 0; i < 3; ++i)
      c.add_output(i == 0 ? real_dtype(c.dtype(0)) : c.dtype(0), uv || i == 0 ? Shape::unknown_rank() : Shape{0});
    return;
  }
  int64_t m = rows(s), n = cols(s), k = min_dim(m, n);
  Shape values = batch_shape(s);
  values.push_back(k);
  c.add_output(real_dtype(c.dtype(0)), values);
  c.add_output(c.dtype(0), uv ? with_matrix(batch_shape(s), m, full ? m : k) : Shape{0});
  c.add_output(c.dtype(0), uv ? with_matrix(batch_shape(s), n, full ? n : k) : Shape{0});
}

void svd_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int m = lapack_int(rows(s)), n = lapack_int(cols(s)), k = std::min(m, n);
  const bool full = c.attrs.get_bool("full_matrices"), uv = c.attrs.get_bool("compute_uv");
  const int u_cols = full ? m : k, v_cols = full ? n : k;
  const int64_t count = num_matrices(s);
  const char job = !uv ? 'N' : full ? 'A' : 'S';
  scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    using R = real_t<T>;
    std::vector<T> a(static_cast<std::size_t>(int64_t{m} * n)), u(uv ? static_cast<std::size_t>(int64_t{m} * u_cols) : 1),
        vt(uv ? static_cast<std::size_t>(int64_t{v_cols} * n) : 1);
    std::vector<int> iwork(static_cast<std::size_t>(8 * std::max(k, 1)));
    // complex gesdd's real workspace, LAPACK's bound for any job
    const int64_t mn = k, mx = std::max(m, n);
    std::vector<R> rwork(is_complex_v<T> ? static_cast<std::size_t>(std::max(
                                               {5 * mn * mn + 7 * mn, 2 * mx * mn + 2 * mn * mn + mn, int64_t{1}}))
                                         : 1);
    auto gesdd = [&](T* work, int lwork, R* sv, int ldvt, int* info) {
      if constexpr (is_complex_v<T>)
        lapack::gesdd(job, m, n, a.data(), m, sv, u.data(), m, vt.data(), ldvt, work, lwork, rwork.data(),
                      iwork.data(), info);
      else
        lapack::gesdd(job, m, n, a.data(), m, sv, u.data(), m, vt.data(), ldvt, work, lwork, iwork.data(), info);
    };
    for (int64_t b = 0; b < count; ++b) {
      R* sv = c.out<R>(0) + b * k;
      T* uo = uv ? c.out<T>(1) + b * m * u_cols : nullptr;
      T* vo = uv ? c.out<T>(2) + b * n * v_cols : nullptr;
      if (k == 0) {
        if (uv) identity(uo, m, u_cols), identity(vo, n, v_cols);
        continue;
      }
      const T* x = c.in<T>(0) + b * m * n;
      if (!all_finite(x, int64_t{m} * n)) {
        fill_nan(sv, k);
        if (uv) fill_nan(uo, int64_t{m} * u_cols), fill_nan(vo, int64_t{n} * v_cols);
        continue;
      }
      to_col_major(x, m, n, a.data(), m);
      T query = 0;
      int info = 0;
      const int ldvt = uv ? v_cols : 1;
      gesdd(&query, -1, sv, ldvt, &info);
      std::vector<T> work(work_size(query));
      gesdd(work.data(), static_cast<int>(work.size()), sv, ldvt, &info);
      if (info != 0) {
        fill_nan(sv, k);
        if (uv) fill_nan(uo, int64_t{m} * u_cols), fill_nan(vo, int64_t{n} * v_cols);
        continue;
      }
      if (!uv) continue;
      from_col_major(u.data(), m, u_cols, m, uo);
      // V row-major is V^T column-major; LAPACK's vt holds V^H, conjugated for complex matrices
      std::transform(vt.data(), vt.data() + int64_t{v_cols} * n, vo, [](T x) { return conj_if_complex(x); });
    }
  });
}

// TF's gradient (Giles; Townsend for the reduced case): written for m <= n, a tall matrix
// through its transpose.
void svd_grad(schema::GradContext& c) {
  refuse_complex_gradient(c, "Svd");
  const Tensor& a = c.inputs[0];
  Tensor grad_s = c.grad_or_zeros(0);
  if (!c.attrs.get_bool("compute_uv")) {
    auto [s, u, v] = svd(a, false, true);
    c.set(0, matmul(u, matmul(diag_matrix(grad_s), v, false, true)));
    return;
  }
  int64_t m = static_dim(a, 2, "Svd"), n = static_dim(a, 1, "Svd");
  bool full = c.attrs.get_bool("full_matrices");
  Tensor s = c.outputs[0], u = c.outputs[1], v = c.outputs[2];
  Tensor grad_u = c.grad_or_zeros(1), grad_v = c.grad_or_zeros(2);
  bool transposed = m > n;
  if (transposed) {
    std::swap(m, n);
    std::swap(u, v);
    std::swap(grad_u, grad_v);
  }
  if (full && n - m > 1)
    throw Unimplemented("svd gradient is not implemented for abs(m - n) > 1 when full_matrices is True");
  Tensor s_mat = diag_matrix(s), f = reciprocal_gaps(s * s);
  Tensor v1 = columns(v, 0, m), grad_v1 = columns(grad_v, 0, m);
  Tensor f_u = f * matmul(u, grad_u, true, false), f_v = f * matmul(v1, grad_v1, true, false);
  Tensor inner = diag_matrix(grad_s) + matmul(f_u + adjoint(f_u), s_mat) + matmul(s_mat, f_v + adjoint(f_v));
  Tensor grad_a = matmul(u, matmul(inner, v1, false, true));
  if (m != n) {
    Tensor gv1t = adjoint(grad_v1);
    Tensor outside = gv1t - matmul(matmul(gv1t, v1), v1, false, true);
    if (full) {
      Tensor v2 = columns(v, m, n - m), grad_v2 = columns(grad_v, m, n - m);
      outside = outside - matmul(matmul(v1, grad_v2, true, false), v2, false, true);
    }
    grad_a = grad_a + matmul(matmul(u, diag_matrix(safe_reciprocal(s))), outside);
  }
  c.set(0, transposed ? adjoint(grad_a) : grad_a);
}

schema::Attrs svd_attrs(bool full, bool uv) { return schema::Attrs{{"full_matrices", full}, {"compute_uv", uv}}; }

std::vector<schema::OpSample> svd_samples() {
  Tensor tall = constant({{1.f, 2.f}, {3.f, -1.f}, {0.5f, 4.f}, {-2.f, 1.f}});
  Tensor wide = constant({{1.f, 2.f, -1.f}, {0.5f, -3.f, 2.f}});
  // No zero entries: LAPACK's Householder signs jump where an exact zero becomes nonzero, which
  // finite differences would straddle.
  Tensor square = constant({{{4.f, 1.f, -2.f}, {0.5f, 3.f, 1.f}, {1.f, -1.f, 5.f}},
                            {{1.f, 0.3f, -0.2f}, {0.4f, 2.f, 0.5f}, {-0.6f, -1.f, 3.f}}});
  return {{{tall}, svd_attrs(false, true)},   {{wide}, svd_attrs(false, true)},
          {{square}, svd_attrs(false, true)}, {{square}, svd_attrs(true, true)},
          {{tall}, svd_attrs(false, false)},  {{wide}, svd_attrs(true, true)},
          {{constant({{3.f, 0.f}, {0.f, -2.f}})}, svd_attrs(false, false), false,
           {constant({3.f, 2.f}), constant(std::vector<float>{}, Shape{0}), constant(std::vector<float>{}, Shape{0})}},
          {{complex_sample_rhs()}, svd_attrs(false, true)}};
}

constexpr detail::OpDef kSvd{.name = "Svd", .infer = svd_infer, .kernel = svd_kernel,
                             .samples = svd_samples, .gradient = svd_grad};

// ---- SelfAdjointEigV2 ----

// Hermitian complex matrices have real eigenvalues and complex vectors, as TF's.
void eig_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  const Shape& s = c.shape(0);
  bool with_vectors = c.attrs().get_bool("compute_v");
  if (!s.has_known_rank()) {
    c.add_output(real_dtype(c.dtype(0)), Shape::unknown_rank());
    c.add_output(c.dtype(0), with_vectors ? Shape::unknown_rank() : Shape{0});
    return;
  }
  int64_t n = cols(s) >= 0 ? cols(s) : rows(s);
  Shape values = batch_shape(s);
  values.push_back(n);
  c.add_output(real_dtype(c.dtype(0)), values);
  c.add_output(c.dtype(0), with_vectors ? with_matrix(batch_shape(s), n, n) : Shape{0});
}

void eig_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(cols(s));
  const bool with_vectors = c.attrs.get_bool("compute_v");
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    using R = real_t<T>;
    std::vector<T> a(static_cast<std::size_t>(size));
    for (int64_t b = 0; b < count && n > 0; ++b) {
      const T* x = c.in<T>(0) + b * size;
      R* e = c.out<R>(0) + b * n;
      T* v = with_vectors ? c.out<T>(1) + b * size : nullptr;
      to_col_major(x, n, n, a.data(), n);
      bool finite = true;  // of the lower triangle, the part read
      for (int j = 0; j < n; ++j) finite = finite && all_finite(a.data() + int64_t{j} * n + j, n - j);
      int info = 0;
      if (finite) {
        T query = 0;
        R rquery = 0;
        int iquery = 0;
        const char job = with_vectors ? 'V' : 'N';
        if constexpr (is_complex_v<T>) {  // heevd: a real workspace too
          lapack::heevd(job, 'L', n, a.data(), n, e, &query, -1, &rquery, -1, &iquery, -1, &info);
          std::vector<T> work(work_size(query));
          std::vector<R> rwork(work_size(rquery));
          std::vector<int> iwork(work_size(iquery));
          lapack::heevd(job, 'L', n, a.data(), n, e, work.data(), static_cast<int>(work.size()), rwork.data(),
                        static_cast<int>(rwork.size()), iwork.data(), static_cast<int>(iwork.size()), &info);
        } else {
          lapack::syevd(job, 'L', n, a.data(), n, e, &query, -1, &iquery, -1, &info);
          std::vector<T> work(work_size(query));
          std::vector<int> iwork(work_size(iquery));
          lapack::syevd(job, 'L', n, a.data(), n, e, work.data(), static_cast<int>(work.size()), iwork.data(),
                        static_cast<int>(iwork.size()), &info);
        }
      }
      if (!finite || info != 0) {
        fill_nan(e, n);
        if (v) fill_nan(v, size);
        continue;
      }
      if (v) from_col_major(a.data(), n, n, n, v);
    }
  });
}

// TF's: V (diag(ge) + F o V^T gv) V^T, then the lower triangle of its symmetric sum (the kernel
// reads the lower triangle), the diagonal halved.
void eig_grad(schema::GradContext& c) {
  refuse_complex_gradient(c, "SelfAdjointEigV2");
  Tensor grad_e = c.grad_or_zeros(0);
  Tensor grad_a;
  if (c.attrs.get_bool("compute_v")) {
    const Tensor &e = c.outputs[0], &v = c.outputs[1];
    Tensor inner = diag_matrix(grad_e) + reciprocal_gaps(e) * matmul(v, c.grad_or_zeros(1), true, false);
    grad_a = matmul(v, matmul(inner, v, false, true));
  } else {
    Tensor v = self_adjoint_eig(c.inputs[0], true).second;
    grad_a = matmul(v, matmul(diag_matrix(grad_e), v, false, true));
  }
  c.set(0, scale_diagonal(lower_part(grad_a + adjoint(grad_a)), 0.5));
}

std::vector<schema::OpSample> eig_samples() {
  Tensor sym = constant({{4.f, 1.f, -0.5f}, {1.f, 2.f, 0.25f}, {-0.5f, 0.25f, -1.f}});
  Tensor batch = constant({{{2.f, 0.5f}, {0.5f, -1.f}}, {{1.f, 3.f}, {3.f, 1.5f}}});
  schema::Attrs vectors{{"compute_v", true}}, values{{"compute_v", false}};
  return {{{sym}, vectors},
          {{batch}, vectors},
          {{sym}, values},
          {{constant({{2.f, 9.f}, {1.f, 2.f}})},  // the upper triangle is not read
           values,
           false,
           {constant({1.f, 3.f}), constant(std::vector<float>{}, Shape{0})}},
          {{hermitian_sample_matrix()}, vectors}};
}

constexpr detail::OpDef kSelfAdjointEigV2{.name = "SelfAdjointEigV2", .infer = eig_infer, .kernel = eig_kernel,
                                          .samples = eig_samples, .gradient = eig_grad};

}  // namespace

void register_decomp_ops(schema::OpRegistry& r) {
  r.add(kQr);
  r.add(kSvd);
  r.add(kSelfAdjointEigV2);
}

}  // namespace linalg
}  // namespace ops

std::pair<Tensor, Tensor> qr(const Tensor& x, bool full_matrices, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out =
      runtime::dispatch(ops::linalg::kQr, in, schema::Attrs{{"full_matrices", full_matrices}}, loc);
  return {std::move(out[0]), std::move(out[1])};
}

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& x, bool full_matrices, bool compute_uv, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(ops::linalg::kSvd, in, ops::linalg::svd_attrs(full_matrices, compute_uv), loc);
  return {std::move(out[0]), std::move(out[1]), std::move(out[2])};
}

std::pair<Tensor, Tensor> self_adjoint_eig(const Tensor& x, bool compute_v, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out =
      runtime::dispatch(ops::linalg::kSelfAdjointEigV2, in, schema::Attrs{{"compute_v", compute_v}}, loc);
  return {std::move(out[0]), std::move(out[1])};
}

}  // namespace kiln
