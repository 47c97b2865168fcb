// Triangular solves and what is built on them: MatrixTriangularSolve (BLAS trsm; batch dims
// broadcast, as TF's), Cholesky (LAPACK potrf) and MatrixSolveLs (tf.linalg.lstsq: the
// regularized normal equations by Cholesky when `fast`, else LAPACK's gelsd), with TF's
// gradients. Cholesky's is TF's symmetric one, which finite differences of one entry at a time
// cannot see (the kernel reads the lower triangle only): its samples skip the registry's
// finite-difference walk, and python/tests/test_linalg_factor.py checks it along symmetric
// perturbations instead.
#include <algorithm>

#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/linalg.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "kiln/reduce.h"
#include "ops/grad_util.h"
#include "ops/lapack.h"
#include "ops/linalg_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {
namespace linalg {

namespace {

// The flat index into an input's batch of the output's batch element `out_index`, the input's
// batch dims broadcast (aligned at the end) against the output's.
int64_t broadcast_batch_index(const Shape& in, const Shape& out, int64_t out_index) {
  int64_t index = 0, stride = 1;
  for (int d = out.rank() - 1; d >= 0; --d) {
    int64_t coordinate = out_index % out[d];
    out_index /= out[d];
    int in_d = d - (out.rank() - in.rank());
    if (in_d < 0) continue;
    if (in[in_d] != 1) index += coordinate * stride;
    stride *= in[in_d];
  }
  return index;
}

// ---- MatrixTriangularSolve ----

void triangular_solve_infer(schema::InferContext& c) {
  if (!check_matrix_and_rhs(c, true)) return;
  const Shape &a = c.shape(0), &b = c.shape(1);
  int64_t n = rows(a), m = rows(b);
  if (n >= 0 && m >= 0 && n != m)
    c.fail("Input matrix and right-hand side must have the same number of rows, got shapes {} and {}",
           a.to_string(), b.to_string());
  Shape ba = batch_shape(a), bb = batch_shape(b), out;
  int r = std::max(ba.rank(), bb.rank());
  for (int d = 0; d < r; ++d) {
    int ia = d - (r - ba.rank()), ib = d - (r - bb.rank());
    int64_t x = ia >= 0 ? ba[ia] : 1, y = ib >= 0 ? bb[ib] : 1;
    if (x == 1) out.push_back(y);
    else if (y == 1) out.push_back(x);
    else if (x < 0 || y < 0) out.push_back(std::max(x, y));
    else if (x == y) out.push_back(x);
    else c.fail("the batch dims of matrix {} and rhs {} do not broadcast", a.to_string(), b.to_string());
  }
  out.push_back(n >= 0 ? n : m);
  out.push_back(cols(b));
  c.add_output(c.dtype(0), out);
}

void triangular_solve_kernel(schema::KernelContext& c) {
  const Shape &sa = c.in_shape(0), &sb = c.in_shape(1), &so = c.out_shape(0);
  const Shape ba = batch_shape(sa), bb = batch_shape(sb), bo = batch_shape(so);
  const int n = lapack_int(cols(sa)), k = lapack_int(cols(sb));
  const int64_t count = num_matrices(so), size = int64_t{n} * n, rhs_size = int64_t{n} * k;
  const bool lower = c.attrs.get_bool("lower"), adjoint = c.attrs.get_bool("adjoint");
  scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    std::vector<T> a(static_cast<std::size_t>(size)), x(static_cast<std::size_t>(rhs_size));
    for (int64_t b = 0; b < count && n > 0 && k > 0; ++b) {
      to_col_major(c.in<T>(0) + broadcast_batch_index(ba, bo, b) * size, n, n, a.data(), n);
      to_col_major(c.in<T>(1) + broadcast_batch_index(bb, bo, b) * rhs_size, n, k, x.data(), n);
      lapack::trsm('L', lower ? 'L' : 'U', !adjoint ? 'N' : is_complex_v<T> ? 'C' : 'T', 'N', n, k, T(1), a.data(), n,
                   x.data(), n);
      from_col_major(x.data(), n, k, n, c.out<T>(0) + b * rhs_size);
    }
  });
}

// As MatrixSolve's, the matrix's gradient kept to the triangle the kernel reads, and both summed
// back over broadcast batch dims.
void triangular_solve_grad(schema::GradContext& c) {
  refuse_complex_gradient(c, "MatrixTriangularSolve");
  bool lower = c.attrs.get_bool("lower"), adjoint = c.attrs.get_bool("adjoint");
  const Tensor &a = c.inputs[0], &x = c.outputs[0];
  Tensor grad_b = matrix_triangular_solve(a, c.grad(0), lower, !adjoint);
  Tensor grad_a = adjoint ? -matmul(x, grad_b, false, true) : -matmul(grad_b, x, false, true);
  grad_a = lower ? lower_part(grad_a) : upper_part(grad_a);
  c.set(0, sum_to_shape_of(grad_a, a));
  c.set(1, sum_to_shape_of(grad_b, c.inputs[1]));
}

schema::Attrs triangular_attrs(bool lower, bool adjoint) {
  return schema::Attrs{{"lower", lower}, {"adjoint", adjoint}};
}

std::vector<schema::OpSample> triangular_solve_samples() {
  Tensor a = constant({{3.f, 0.5f, -1.f}, {1.f, 2.f, 0.25f}, {-0.5f, 1.5f, 4.f}});
  Tensor b = constant({{1.f, -2.f}, {0.5f, 1.f}, {3.f, 0.25f}});
  Tensor batch_a = constant({{{2.f, 1.f}, {0.5f, 3.f}}, {{-1.5f, 2.f}, {1.f, 2.f}}});
  return {{{a, b}, triangular_attrs(true, false)},
          {{a, b}, triangular_attrs(false, false)},
          {{a, b}, triangular_attrs(true, true)},
          {{a, b}, triangular_attrs(false, true)},
          {{batch_a, constant({{1.f}, {2.f}})}, triangular_attrs(true, false)},  // rhs broadcast
          {{constant({{2.f, 7.f}, {1.f, 4.f}}), constant({{2.f}, {5.f}})},
           triangular_attrs(true, false),
           false,
           {constant({{1.f}, {1.f}})}},
          {{complex_sample_matrix(), complex_sample_rhs()}, triangular_attrs(false, true)}};
}

constexpr detail::OpDef kMatrixTriangularSolve{
    .name = "MatrixTriangularSolve", .infer = triangular_solve_infer, .kernel = triangular_solve_kernel, .samples = triangular_solve_samples,
    .gradient = triangular_solve_grad};

// ---- Cholesky ----

void cholesky_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  c.add_output(c.dtype(0), c.shape(0));
}

constexpr const char* kCholeskyFailed = "Cholesky decomposition was not successful. The input might not be valid.";

void cholesky_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(cols(s));
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  scalar_switch(c.inputs[0].dtype(), [&]<class T>() {  // complex: Hermitian, L L^H
    std::vector<T> a(static_cast<std::size_t>(size));
    for (int64_t b = 0; b < count && n > 0; ++b) {
      to_col_major(c.in<T>(0) + b * size, n, n, a.data(), n);
      T* out = c.out<T>(0) + b * size;
      bool finite = true;  // of the lower triangle, the part read
      for (int j = 0; j < n; ++j) finite = finite && all_finite(a.data() + int64_t{j} * n + j, n - j);
      if (!finite) {  // NaN out, as TF's (Eigen's) factorization gives; LAPACKs differ on NaN
        fill_nan(out, size);
        continue;
      }
      int info = 0;
      lapack::potrf('L', n, a.data(), n, &info);
      if (info != 0) throw InvalidArgument(kCholeskyFailed);
      from_col_major(a.data(), n, n, n, out);
      for (int i = 0; i < n; ++i) std::fill(out + int64_t{i} * n + i + 1, out + int64_t{i + 1} * n, T(0));
    }
  });
}

// TF's: L^-T (lower(L^T G) with its diagonal halved) L^-1, made symmetric.
void cholesky_grad(schema::GradContext& c) {
  refuse_complex_gradient(c, "Cholesky");
  const Tensor& l = c.outputs[0];
  Tensor l_inverse = matrix_triangular_solve(l, identity_like(l), true, false);
  Tensor middle = lower_part(scale_diagonal(matmul(l, c.grad(0), true, false), 0.5));
  Tensor grad_a = matmul(matmul(l_inverse, middle, true, false), l_inverse);
  c.set(0, (grad_a + adjoint(grad_a)) * constant(0.5, grad_a.dtype()));
}

std::vector<schema::OpSample> cholesky_samples() {
  // special_values: the symmetric gradient is checked in python/tests/test_linalg_factor.py.
  return {{{constant({{4.f, 2.f, -1.f}, {2.f, 5.f, 0.5f}, {-1.f, 0.5f, 3.f}})}, {}, true},
          {{constant({{{2.f, 0.5f}, {0.5f, 1.f}}, {{9.f, -3.f}, {-3.f, 5.f}}})}, {}, true},
          {{constant({{4.f, 2.f}, {2.f, 10.f}})}, {}, true, {constant({{2.f, 0.f}, {1.f, 3.f}})}},
          {{hermitian_sample_matrix()}}};
}

constexpr detail::OpDef kCholesky{.name = "Cholesky", .infer = cholesky_infer, .kernel = cholesky_kernel,
                                  .samples = cholesky_samples, .gradient = cholesky_grad};

// ---- MatrixSolveLs ----

void solve_ls_infer(schema::InferContext& c) {
  check_matrices(c, 0, false);
  check_matrices(c, 1, false);
  if (c.dtype(0) != c.dtype(1) || c.dtype(2) != c.dtype(0))
    c.fail("matrix, rhs and l2_regularizer must have the same dtype, got {}, {} and {}", dtype_name(c.dtype(0)),
           dtype_name(c.dtype(1)), dtype_name(c.dtype(2)));
  if (c.shape(2).has_known_rank() && c.shape(2).rank() != 0)
    c.fail("l2_regularizer must be a scalar, got shape {}", c.shape(2).to_string());
  const Shape &a = c.shape(0), &b = c.shape(1);
  if (!a.has_known_rank() || !b.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  bool same = a.rank() == b.rank() && (rows(a) < 0 || rows(b) < 0 || rows(a) == rows(b));
  for (int d = 0; same && d + 2 < a.rank(); ++d) same = a[d] < 0 || b[d] < 0 || a[d] == b[d];
  if (!same)
    c.fail("matrix and rhs must have the same batch dims and number of rows, got shapes {} and {}", a.to_string(),
           b.to_string());
  Shape out = batch_shape(b);
  out.push_back(cols(a));
  out.push_back(cols(b));
  c.add_output(c.dtype(0), out);
}

// One least-squares problem: A (m x n) and B (m x k) column-major, X (n x k) column-major.
template <class T> void solve_ls_fast(int m, int n, int k, T l2, const T* a, T* b, T* x) {
  const int g = m >= n ? n : m;  // the Gramian's order
  std::vector<T> gram(static_cast<std::size_t>(int64_t{g} * g));
  if (m >= n) lapack::gemm('T', 'N', n, n, m, T(1), a, std::max(m, 1), a, std::max(m, 1), T(0), gram.data(), n);
  else lapack::gemm('N', 'T', m, m, n, T(1), a, m, a, m, T(0), gram.data(), m);
  for (int i = 0; i < g; ++i) gram[static_cast<std::size_t>(int64_t{i} * g + i)] += l2;
  int info = 0;
  lapack::potrf('L', g, gram.data(), g, &info);
  if (info != 0)
    throw InvalidArgument(
        "Input matrix was rank deficient or ill-conditioned. Try setting fast=False or provide a larger "
        "l2_regularizer > 0.");
  if (m >= n) {  // X = (A^T A + l2 I)^-1 A^T B
    lapack::gemm('T', 'N', n, k, m, T(1), a, std::max(m, 1), b, std::max(m, 1), T(0), x, n);
    lapack::potrs('L', n, k, gram.data(), n, x, n, &info);
  } else {  // X = A^T (A A^T + l2 I)^-1 B
    lapack::potrs('L', m, k, gram.data(), m, b, m, &info);
    lapack::gemm('T', 'N', n, k, m, T(1), a, m, b, m, T(0), x, n);
  }
}

// The minimum-norm solution (LAPACK's gelsd, SVD-based), as TF's complete orthogonal decomposition.
template <class T> void solve_ls_min_norm(int m, int n, int k, T* a, const T* b, T* x) {
  const int ldb = std::max({1, m, n});
  std::vector<T> work_b(static_cast<std::size_t>(int64_t{ldb} * k), T(0)), s(static_cast<std::size_t>(std::min(m, n)));
  for (int j = 0; j < k; ++j) std::copy(b + int64_t{j} * m, b + int64_t{j + 1} * m, work_b.data() + int64_t{j} * ldb);
  int rank = 0, info = 0, iquery = 0;
  T query = 0;
  lapack::gelsd(m, n, k, a, std::max(m, 1), work_b.data(), ldb, s.data(), T(-1), &rank, &query, -1, &iquery, &info);
  std::vector<T> work(static_cast<std::size_t>(std::max<T>(query, 1)));
  std::vector<int> iwork(static_cast<std::size_t>(std::max(iquery, 1)));
  lapack::gelsd(m, n, k, a, std::max(m, 1), work_b.data(), ldb, s.data(), T(-1), &rank, work.data(),
                static_cast<int>(work.size()), iwork.data(), &info);
  if (info > 0) {
    fill_nan(x, int64_t{n} * k);
    return;
  }
  for (int j = 0; j < k; ++j)
    std::copy(work_b.data() + int64_t{j} * ldb, work_b.data() + int64_t{j} * ldb + n, x + int64_t{j} * n);
}

void solve_ls_kernel(schema::KernelContext& c) {
  const Shape &sa = c.in_shape(0), &sb = c.in_shape(1);
  const int m = lapack_int(rows(sa)), n = lapack_int(cols(sa)), k = lapack_int(cols(sb));
  const int64_t count = num_matrices(sa);
  const bool fast = c.attrs.get_bool("fast");
  float_switch(c.inputs[0].dtype(), [&]<class T>() {
    const T l2 = *c.in<T>(2);
    std::vector<T> a(static_cast<std::size_t>(int64_t{m} * n)), b(static_cast<std::size_t>(int64_t{m} * k)),
        x(static_cast<std::size_t>(int64_t{n} * k));
    for (int64_t i = 0; i < count; ++i) {
      T* out = c.out<T>(0) + i * n * k;
      if (n == 0 || k == 0) continue;
      if (m == 0) {
        std::fill(out, out + int64_t{n} * k, T(0));
        continue;
      }
      to_col_major(c.in<T>(0) + i * m * n, m, n, a.data(), m);
      to_col_major(c.in<T>(1) + i * m * k, m, k, b.data(), m);
      if (!all_finite(a.data(), int64_t{m} * n)) fill_nan(x.data(), int64_t{n} * k);
      else if (fast) solve_ls_fast(m, n, k, l2, a.data(), b.data(), x.data());
      else solve_ls_min_norm(m, n, k, a.data(), b.data(), x.data());
      from_col_major(x.data(), n, k, n, out);
    }
  });
}

// chol's (lower) Cholesky factor solves: (L L^T)^-1 rhs.
Tensor cholesky_solve_with(const Tensor& chol, const Tensor& rhs) {
  return matrix_triangular_solve(chol, matrix_triangular_solve(chol, rhs, true, false), true, true);
}

// TF's gradients of the regularized normal equations (of the first kind when m >= n, the second
// otherwise), and l2_regularizer's: d/dl2 of (G + l2 I)^-1 is -(G + l2 I)^-2.
void solve_ls_grad(schema::GradContext& c) {
  if (!c.attrs.get_bool("fast")) throw InvalidArgument("Gradient not defined for fast=False");
  const Tensor &a = c.inputs[0], &b = c.inputs[1], &l2 = c.inputs[2], &x = c.outputs[0];
  const Tensor& grad = c.grad(0);
  const Shape& s = a.shape();
  if (!s.has_known_rank() || rows(s) < 0 || cols(s) < 0)
    throw Unimplemented("MatrixSolveLs's gradient needs the matrix dims known");
  if (rows(s) >= cols(s)) {
    Tensor gram = matmul(a, a, true, false);
    Tensor chol = cholesky(gram + l2 * identity_like(gram));
    Tensor z = cholesky_solve_with(chol, grad);
    Tensor xzt = matmul(x, z, false, true);
    c.set(0, matmul(b, z, false, true) - matmul(a, xzt + adjoint(xzt)));
    c.set(1, matmul(a, z));
    c.set(2, -sum(z * x));
  } else {
    Tensor gram = matmul(a, a, false, true);
    Tensor chol = cholesky(gram + l2 * identity_like(gram));
    Tensor grad_b = cholesky_solve_with(chol, matmul(a, grad));
    Tensor tmp = cholesky_solve_with(chol, b);
    Tensor a1 = -matmul(grad_b, matmul(tmp, a, true, false));
    Tensor a2 = matmul(tmp, grad - matmul(a, grad_b, true, false), false, true);
    c.set(0, a1 + a2);
    c.set(1, grad_b);
    c.set(2, -sum(grad_b * tmp));
  }
}

std::vector<schema::OpSample> solve_ls_samples() {
  Tensor tall = constant({{1.f, 2.f}, {3.f, -1.f}, {0.5f, 4.f}, {-2.f, 1.f}});
  Tensor tall_rhs = constant({{1.f}, {0.f}, {2.f}, {-1.f}});
  Tensor wide = constant({{1.f, 2.f, -1.f}, {0.5f, -3.f, 2.f}});
  Tensor wide_rhs = constant({{1.f, 2.f}, {-1.f, 0.5f}});
  schema::Attrs fast{{"fast", true}};
  return {{{tall, tall_rhs, constant(0.f)}, fast},
          {{tall, tall_rhs, constant(0.5f)}, fast},
          {{wide, wide_rhs, constant(0.f)}, fast},
          {{wide, wide_rhs, constant(0.25f)}, fast},
          {{constant({{{2.f, 0.f}, {0.f, 4.f}, {0.f, 0.f}}}), constant({{{2.f}, {2.f}, {1.f}}}), constant(0.f)},
           fast,
           false,
           {constant({{{1.f}, {0.5f}}})}}};
}

constexpr detail::OpDef kMatrixSolveLs{.name = "MatrixSolveLs", .infer = solve_ls_infer, .kernel = solve_ls_kernel,
                                       .samples = solve_ls_samples, .gradient = solve_ls_grad};

}  // namespace

void register_solve_ops(schema::OpRegistry& r) {
  r.add(kMatrixTriangularSolve);
  r.add(kCholesky);
  r.add(kMatrixSolveLs);
}

}  // namespace linalg
}  // namespace ops

Tensor matrix_triangular_solve(const Tensor& matrix, const Tensor& rhs, bool lower, bool adjoint,
                               SourceLocation loc) {
  const Tensor in[] = {matrix, rhs};
  return runtime::dispatch1(ops::linalg::kMatrixTriangularSolve, in, ops::linalg::triangular_attrs(lower, adjoint),
                            loc);
}

Tensor cholesky(const Tensor& x, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::linalg::kCholesky, in, schema::Attrs{}, loc);
}

Tensor matrix_solve_ls(const Tensor& matrix, const Tensor& rhs, const Tensor& l2_regularizer, bool fast,
                       SourceLocation loc) {
  const Tensor in[] = {matrix, rhs, l2_regularizer};
  return runtime::dispatch1(ops::linalg::kMatrixSolveLs, in, schema::Attrs{{"fast", fast}}, loc);
}

}  // namespace kiln
