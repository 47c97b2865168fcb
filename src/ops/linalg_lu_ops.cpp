// The ops built on an LU factorization (LAPACK's getrf): MatrixInverse (tf.linalg.inv),
// MatrixDeterminant (det), LogMatrixDeterminant (slogdet), MatrixSolve (solve) and Lu (lu), with TF's
// gradients. A zero pivot is TF's InvalidArgument for the inverse and the solve, and a zero
// determinant (sign 0, log |det| = -inf) for the others.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "kiln/array.h"
#include "kiln/linalg.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "ops/lapack.h"
#include "ops/linalg_util.h"
#include "ops/register_ops.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

using linalg::check_matrices;
using linalg::float_switch;
using linalg::from_col_major;
using linalg::lapack_int;
using linalg::num_matrices;
using linalg::to_col_major;

// LU of a row-major n x n matrix (of its adjoint when `adjoint`) into column-major `a`.
// Returns LAPACK's info: > 0 names a zero pivot.
template <class T> int lu(const T* src, int n, bool adjoint, T* a, int* pivots) {
  if (adjoint)  // row-major A read column-major is A^T; conjugated, A^H
    std::transform(src, src + int64_t{n} * n, a, [](T x) { return linalg::conj_if_complex(x); });
  else to_col_major(src, n, n, a, n);
  int info = 0;
  if (n > 0) lapack::getrf(n, n, a, n, pivots, &info);
  return info;
}

// (sign, log |det|) from an LU factorization: the pivots' product, one sign flip per row swap.
// For complex matrices the sign is the unit complex number det / |det|, and log |det| a complex
// number with no imaginary part, as TF's.
template <class T> std::pair<T, T> lu_log_det(const T* a, int n, const int* pivots) {
  using R = linalg::real_t<T>;
  T sign = 1;
  R log_abs = 0;
  for (int i = 0; i < n; ++i) {
    T u = a[int64_t{i} * n + i];
    R magnitude = std::abs(u);
    if (pivots[i] != i + 1) sign = -sign;
    if (magnitude == 0) return {T(0), T(-std::numeric_limits<R>::infinity())};
    log_abs += std::log(magnitude);
    if constexpr (linalg::is_complex_v<T>) {
      sign *= u / magnitude;
    } else {
      if (u < 0) sign = -sign;
      if (std::isnan(u)) sign = u;
    }
  }
  return {sign, T(log_abs)};
}

Shape out_batch(const schema::InferContext& c) {
  const Shape& s = c.shape(0);
  return s.has_known_rank() ? linalg::batch_shape(s) : Shape::unknown_rank();
}

// ---- MatrixInverse ----

void inverse_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  c.add_output(c.dtype(0), c.shape(0));
}

void inverse_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(linalg::cols(s));
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  const bool adjoint = c.attrs.get_bool("adjoint");
  linalg::scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    std::vector<T> a(static_cast<std::size_t>(size));
    std::vector<int> pivots(static_cast<std::size_t>(n));
    for (int64_t b = 0; b < count; ++b) {
      if (n == 0) break;
      if (lu(c.in<T>(0) + b * size, n, adjoint, a.data(), pivots.data()) > 0)
        throw InvalidArgument("Input is not invertible.");
      T query = 0;
      int info = 0;
      lapack::getri(n, a.data(), n, pivots.data(), &query, -1, &info);
      std::vector<T> work(linalg::work_size(query, n));
      lapack::getri(n, a.data(), n, pivots.data(), work.data(), static_cast<int>(work.size()), &info);
      from_col_major(a.data(), n, n, n, c.out<T>(0) + b * size);
    }
  });
}

// d(A^-1) = -A^-1 dA A^-1: the gradient is -Y^T G Y^T (transposed for the adjoint's inverse).
void inverse_grad(schema::GradContext& c) {
  linalg::refuse_complex_gradient(c, "MatrixInverse");
  const Tensor& y = c.outputs[0];
  const Tensor& g = c.grad(0);
  if (c.attrs.get_bool("adjoint")) c.set(0, -matmul(matmul(y, g, false, true), y));
  else c.set(0, -matmul(y, matmul(g, y, false, true), true, false));
}

Tensor well_conditioned_3x3() { return constant({{4.f, 1.f, -2.f}, {0.5f, 3.f, 1.f}, {1.f, -1.f, 5.f}}); }
Tensor well_conditioned_batch() {
  return constant({{{2.f, -1.f}, {0.5f, 3.f}}, {{-1.5f, 0.25f}, {1.f, 2.f}}, {{3.f, 1.f}, {1.f, 1.f}}});
}

std::vector<schema::OpSample> inverse_samples() {
  return {{{well_conditioned_3x3()}, schema::Attrs{{"adjoint", false}}},
          {{well_conditioned_batch()}, schema::Attrs{{"adjoint", false}}},
          {{well_conditioned_3x3()}, schema::Attrs{{"adjoint", true}}},
          {{constant({{2.f, 0.f}, {0.f, 4.f}})},
           schema::Attrs{{"adjoint", false}},
           false,
           {constant({{0.5f, -0.f}, {0.f, 0.25f}})}},  // getri leaves a -0 above the diagonal
          {{linalg::complex_sample_matrix()}, schema::Attrs{{"adjoint", true}}}};
}

constexpr detail::OpDef kMatrixInverse{.name = "MatrixInverse", .infer = inverse_infer, .kernel = inverse_kernel,
                                       .samples = inverse_samples, .gradient = inverse_grad};

// ---- MatrixDeterminant, LogMatrixDeterminant ----

void determinant_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  c.add_output(c.dtype(0), out_batch(c));
}

void log_determinant_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  c.add_output(c.dtype(0), out_batch(c));
  c.add_output(c.dtype(0), out_batch(c));
}

// Each matrix's LU factorization to `emit(b, lu, pivots)`.
template <class T, class Emit> void each_lu(const schema::KernelContext& c, Emit emit) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(linalg::cols(s));
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  std::vector<T> a(static_cast<std::size_t>(size));
  std::vector<int> pivots(static_cast<std::size_t>(n));
  for (int64_t b = 0; b < count; ++b) {
    lu(c.in<T>(0) + b * size, n, false, a.data(), pivots.data());
    emit(b, a.data(), n, pivots.data());
  }
}

void determinant_kernel(schema::KernelContext& c) {
  linalg::scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    T* out = c.out<T>(0);
    each_lu<T>(c, [&](int64_t b, const T* a, int n, const int* pivots) {
      T det = 1;  // the pivots' product: no overflow through logs for merely large determinants
      for (int i = 0; i < n; ++i) det *= T(pivots[i] != i + 1 ? -1 : 1) * a[int64_t{i} * n + i];
      out[b] = det + T(0);  // a zero determinant is +0, as NumPy's
    });
  });
}

void log_determinant_kernel(schema::KernelContext& c) {
  linalg::scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    T* sign = c.out<T>(0);
    T* log_abs = c.out<T>(1);
    each_lu<T>(c, [&](int64_t b, const T* a, int n, const int* pivots) {
      std::tie(sign[b], log_abs[b]) = lu_log_det(a, n, pivots);
    });
  });
}

Tensor as_matrix_factor(const Tensor& per_matrix) { return expand_dims(expand_dims(per_matrix, -1), -1); }

// d det(A) = det(A) tr(A^-1 dA): the gradient is g det(A) A^-T.
void determinant_grad(schema::GradContext& c) {
  linalg::refuse_complex_gradient(c, "MatrixDeterminant");
  c.set(0, as_matrix_factor(c.grad(0) * c.outputs[0]) * matrix_inverse(c.inputs[0], true));
}

// Only log |det| has a gradient: g A^-T.
void log_determinant_grad(schema::GradContext& c) {
  linalg::refuse_complex_gradient(c, "LogMatrixDeterminant");
  if (!c.grad(1).defined()) return;
  c.set(0, as_matrix_factor(c.grad(1)) * matrix_inverse(c.inputs[0], true));
}

std::vector<schema::OpSample> determinant_samples() {
  return {{{well_conditioned_3x3()}},
          {{well_conditioned_batch()}},
          {{constant({{1.f, 2.f}, {2.f, 4.f}})}, {}, true, {constant(0.f)}},
          {{constant({{0.f, 2.f}, {3.f, 1.f}})}, {}, false, {constant(-6.f)}},
          {{linalg::complex_sample_matrix()}}};
}

std::vector<schema::OpSample> log_determinant_samples() {
  return {{{well_conditioned_3x3()}},
          {{well_conditioned_batch()}},
          {{constant({{0.f, 2.f}, {3.f, 1.f}})}, {}, false, {constant(-1.f), constant(std::log(6.f))}},
          {{constant({{1.f, 2.f}, {2.f, 4.f}})},
           {},
           true,
           {constant(0.f), constant(-std::numeric_limits<float>::infinity())}},
          {{linalg::complex_sample_matrix()}}};
}

constexpr detail::OpDef kMatrixDeterminant{.name = "MatrixDeterminant", .infer = determinant_infer,
                                           .kernel = determinant_kernel,
                                           .samples = determinant_samples, .gradient = determinant_grad};
constexpr detail::OpDef kLogMatrixDeterminant{.name = "LogMatrixDeterminant", .infer = log_determinant_infer,
                                              .kernel = log_determinant_kernel,
                                              .samples = log_determinant_samples,
                                              .gradient = log_determinant_grad};

// ---- MatrixSolve ----

void solve_infer(schema::InferContext& c) {
  if (!linalg::check_matrix_and_rhs(c, true)) return;
  const Shape &a = c.shape(0), &b = c.shape(1);
  Shape out = b;
  bool same_batch = a.rank() == b.rank();
  for (int d = 0; same_batch && d + 2 < a.rank(); ++d) {
    if (a[d] >= 0 && b[d] >= 0 && a[d] != b[d]) same_batch = false;
    if (out[d] < 0) out[d] = a[d];
  }
  int64_t n = linalg::rows(a), m = linalg::rows(b);
  if (!same_batch || (n >= 0 && m >= 0 && n != m))
    c.fail("Input matrix and right-hand side must have the same number of rows and batch dims, got shapes {} and {}",
           a.to_string(), b.to_string());
  if (out[out.rank() - 2] < 0) out[out.rank() - 2] = n;
  c.add_output(c.dtype(0), out);
}

void solve_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(linalg::cols(s)), k = lapack_int(linalg::cols(c.in_shape(1)));
  const int64_t count = num_matrices(s), size = int64_t{n} * n, rhs_size = int64_t{n} * k;
  const bool adjoint = c.attrs.get_bool("adjoint");
  linalg::scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    std::vector<T> a(static_cast<std::size_t>(size)), x(static_cast<std::size_t>(rhs_size));
    std::vector<int> pivots(static_cast<std::size_t>(n));
    for (int64_t b = 0; b < count; ++b) {
      if (n == 0 || k == 0) break;
      if (lu(c.in<T>(0) + b * size, n, false, a.data(), pivots.data()) > 0)
        throw InvalidArgument("Input matrix is not invertible.");
      to_col_major(c.in<T>(1) + b * rhs_size, n, k, x.data(), n);
      int info = 0;
      lapack::getrs(!adjoint ? 'N' : linalg::is_complex_v<T> ? 'C' : 'T', n, k, a.data(), n, pivots.data(), x.data(), n, &info);
      from_col_major(x.data(), n, k, n, c.out<T>(0) + b * rhs_size);
    }
  });
}

// X = A^-1 B: dB = A^-T G, dA = -dB X^T (for the adjoint, A^-T B: dA = -X dB^T).
void solve_grad(schema::GradContext& c) {
  linalg::refuse_complex_gradient(c, "MatrixSolve");
  bool adjoint = c.attrs.get_bool("adjoint");
  Tensor grad_b = matrix_solve(c.inputs[0], c.grad(0), !adjoint);
  const Tensor& x = c.outputs[0];
  c.set(0, adjoint ? -matmul(x, grad_b, false, true) : -matmul(grad_b, x, false, true));
  c.set(1, grad_b);
}

std::vector<schema::OpSample> solve_samples() {
  Tensor rhs = constant({{1.f, -2.f}, {0.5f, 1.f}, {3.f, 0.25f}});
  return {{{well_conditioned_3x3(), rhs}, schema::Attrs{{"adjoint", false}}},
          {{well_conditioned_3x3(), rhs}, schema::Attrs{{"adjoint", true}}},
          {{well_conditioned_batch(), constant({{{1.f}, {2.f}}, {{-1.f}, {0.5f}}, {{0.f}, {3.f}}})},
           schema::Attrs{{"adjoint", false}}},
          {{constant({{2.f, 0.f}, {0.f, 4.f}}), constant({{1.f}, {2.f}})},
           schema::Attrs{{"adjoint", false}},
           false,
           {constant({{0.5f}, {0.5f}})}},
          {{linalg::complex_sample_matrix(), linalg::complex_sample_rhs()}, schema::Attrs{{"adjoint", true}}}};
}

constexpr detail::OpDef kMatrixSolve{.name = "MatrixSolve", .infer = solve_infer, .kernel = solve_kernel,
                                     .samples = solve_samples, .gradient = solve_grad};

// ---- Lu (tf.linalg.lu) ----

void lu_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  DType index = c.attrs().get_dtype("output_idx_type");
  if (index != DType::Int32 && index != DType::Int64)
    c.fail("output_idx_type must be int32 or int64, got {}", dtype_name(index));
  const Shape& s = c.shape(0);
  c.add_output(c.dtype(0), s);
  if (!s.has_known_rank()) {
    c.add_output(index, Shape::unknown_rank());
    return;
  }
  Shape p = linalg::batch_shape(s);
  p.push_back(linalg::cols(s) >= 0 ? linalg::cols(s) : linalg::rows(s));
  c.add_output(index, p);
}

// The packed factors (L's strict lower triangle, its unit diagonal implied, and U) and the
// permutation p with x[p] = L U, from getrf's row swaps.
void lu_kernel(schema::KernelContext& c) {
  const bool wide_index = c.outputs[1].dtype() == DType::Int64;
  linalg::scalar_switch(c.inputs[0].dtype(), [&]<class T>() {
    std::vector<int64_t> perm;
    each_lu<T>(c, [&](int64_t b, const T* a, int n, const int* pivots) {
      from_col_major(a, n, n, n, c.out<T>(0) + b * n * n);
      perm.resize(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
      for (int i = 0; i < n; ++i) std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(pivots[i] - 1)]);
      for (int i = 0; i < n; ++i) {
        if (wide_index) c.out<int64_t>(1)[b * n + i] = perm[static_cast<std::size_t>(i)];
        else c.out<int32_t>(1)[b * n + i] = static_cast<int32_t>(perm[static_cast<std::size_t>(i)]);
      }
    });
  });
}

// P A = L U: L^-1 d(PA) U^-1 = L^-1 dL + dU U^-1 splits into its strict lower and upper parts,
// so d(PA) = L^-T (strict_lower(L^T gL) + upper(gU U^T)) U^-T, and A's rows are p's inverse.
void lu_grad(schema::GradContext& c) {
  linalg::refuse_complex_gradient(c, "Lu");
  const Tensor &packed = c.outputs[0], &perm = c.outputs[1];
  const Tensor& g = c.grad(0);
  Tensor u = linalg::upper_part(packed), l = packed - u + linalg::identity_like(packed);
  Tensor grad_l = g - linalg::upper_part(g), grad_u = linalg::upper_part(g);
  Tensor lower_term = matmul(l, grad_l, true, false);
  Tensor middle = lower_term - linalg::upper_part(lower_term) + linalg::upper_part(matmul(grad_u, u, false, true));
  Tensor left = matrix_triangular_solve(l, middle, true, true);
  Tensor grad_pa = linalg::adjoint(matrix_triangular_solve(u, linalg::adjoint(left), false, false));
  int64_t n = packed.shape()[packed.rank() - 1];
  c.set(0, matmul(one_hot(perm, n, 1, 0, -1, packed.dtype()), grad_pa, true, false));
}

std::vector<schema::OpSample> lu_samples() {
  schema::Attrs int32{{"output_idx_type", DType::Int32}}, int64{{"output_idx_type", DType::Int64}};
  return {{{well_conditioned_3x3()}, int32},
          {{well_conditioned_batch()}, int64},
          {{constant({{1.f, 2.f}, {4.f, 2.f}})},  // rows swapped: [4, 2] = 1 * [4, 2]; [1, 2] = 0.25 [4, 2] + [0, 1.5]
           int32,
           false,
           {constant({{4.f, 2.f}, {0.25f, 1.5f}}), constant({1, 0})}},
          {{linalg::complex_sample_matrix()}, int32}};
}

constexpr detail::OpDef kLu{.name = "Lu", .infer = lu_infer, .kernel = lu_kernel, .samples = lu_samples,
                            .gradient = lu_grad};

}  // namespace

void register_linalg_ops(schema::OpRegistry& r) {
  r.add(kMatrixInverse);
  r.add(kMatrixDeterminant);
  r.add(kLogMatrixDeterminant);
  r.add(kMatrixSolve);
  r.add(kLu);
  linalg::register_solve_ops(r);
  linalg::register_decomp_ops(r);
  linalg::register_expm_op(r);
  linalg::register_eig_ops(r);
}

}  // namespace ops

Tensor matrix_inverse(const Tensor& x, bool adjoint, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kMatrixInverse, in, schema::Attrs{{"adjoint", adjoint}}, loc);
}

Tensor matrix_determinant(const Tensor& x, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kMatrixDeterminant, in, schema::Attrs{}, loc);
}

std::pair<Tensor, Tensor> log_matrix_determinant(const Tensor& x, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(ops::kLogMatrixDeterminant, in, schema::Attrs{}, loc);
  return {std::move(out[0]), std::move(out[1])};
}

std::pair<Tensor, Tensor> lu(const Tensor& x, DType output_idx_type, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(ops::kLu, in, schema::Attrs{{"output_idx_type", output_idx_type}}, loc);
  return {std::move(out[0]), std::move(out[1])};
}

Tensor matrix_solve(const Tensor& matrix, const Tensor& rhs, bool adjoint, SourceLocation loc) {
  const Tensor in[] = {matrix, rhs};
  return runtime::dispatch1(ops::kMatrixSolve, in, schema::Attrs{{"adjoint", adjoint}}, loc);
}

}  // namespace kiln
