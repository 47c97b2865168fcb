#pragma once
// What the linalg ops (linalg_lu_ops.cpp, linalg_solve_ops.cpp, linalg_decomp_ops.cpp) share:
// shape checks for batches of matrices, the copies between Kiln's row-major matrices and the
// column-major buffers LAPACK works in, and the small matrix helpers their gradients are built of
// (public ops only, so the gradients run eagerly, traced and nested alike).
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/error.h"
#include "kiln/tensor.h"
#include "schema/op_def.h"

namespace kiln::ops::linalg {

// Checks that input i is a float32 or float64 (or, with `complex_ok`, complex64 or complex128)
// batch of matrices (rank >= 2), square when asked, with the message TF's kernels give ("Input
// matrix must be square", naming the shape).
void check_matrices(const schema::InferContext& c, int i, bool square, bool complex_ok = false);
// A square matrix (input 0) and a right-hand side (input 1) of the same dtype; false, with an
// output of unknown rank added, when either rank is unknown.
bool check_matrix_and_rhs(schema::InferContext& c, bool complex_ok = false);
// Gradients of complex matrices wait for complex gradients in the tape (docs/design-notes.md,
// "Linear algebra: complex and eig"): Unimplemented naming the op and dtype.
void refuse_complex_gradient(const schema::GradContext& c, const char* op);
// The leading (batch) dims of input i's shape, and its last two.
Shape batch_shape(const Shape& s);
inline int64_t rows(const Shape& s) { return s[s.rank() - 2]; }
inline int64_t cols(const Shape& s) { return s[s.rank() - 1]; }
// The number of matrices in a concrete shape of rank >= 2.
int64_t num_matrices(const Shape& s);
// `dim` as LAPACK's int; an InvalidArgument past 2^31 - 1.
int lapack_int(int64_t dim);

// Calls f.template operator()<T>() for T = float or double, as `d` says.
template <class F> void float_switch(DType d, F&& f) {
  if (d == DType::Float32) f.template operator()<float>();
  else if (d == DType::Float64) f.template operator()<double>();
  else throw InvalidArgument("linalg: expected float32 or float64");
}

template <class T> struct RealOf { using type = T; };
template <class R> struct RealOf<std::complex<R>> { using type = R; };
// float of complex<float>, else T itself.
template <class T> using real_t = typename RealOf<T>::type;
template <class T> inline constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

// As float_switch, with T = std::complex<float> or std::complex<double> for the complex dtypes.
template <class F> void scalar_switch(DType d, F&& f) {
  if (d == DType::Complex64) f.template operator()<std::complex<float>>();
  else if (d == DType::Complex128) f.template operator()<std::complex<double>>();
  else float_switch(d, std::forward<F>(f));
}
// A workspace size from LAPACK's query (its real part), at least `at_least`.
template <class T> std::size_t work_size(T query, int64_t at_least = 1) {
  return static_cast<std::size_t>(std::max<double>(static_cast<double>(std::real(query)), static_cast<double>(at_least)));
}
template <class T> T conj_if_complex(T x) {
  if constexpr (is_complex_v<T>) return std::conj(x);
  else return x;
}

// A row-major rows x cols matrix into a column-major buffer with leading dimension `ld` >= rows.
template <class T> void to_col_major(const T* src, int64_t rows, int64_t cols, T* dst, int64_t ld) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[j * ld + i] = src[i * cols + j];
}
// A column-major buffer (leading dimension ld) back into a row-major rows x cols matrix.
template <class T> void from_col_major(const T* src, int64_t rows, int64_t cols, int64_t ld, T* dst) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) dst[i * cols + j] = src[j * ld + i];
}
template <class T> bool all_finite(const T* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(std::real(x[i])) || !std::isfinite(std::imag(x[i]))) return false;
  return true;
}
template <class T> void fill_nan(T* x, int64_t n) {
  const real_t<T> nan = std::numeric_limits<real_t<T>>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (is_complex_v<T>) x[i] = T(nan, nan);
    else x[i] = nan;
  }
}

// ---- gradient helpers (public ops; the matrix dims must be known) ----
// The last two dims swapped (real dtypes: the adjoint).
Tensor adjoint(const Tensor& x);
// Entries on or below (lower) / on or above (upper) the main diagonal kept, the rest zero.
Tensor lower_part(const Tensor& x);
Tensor upper_part(const Tensor& x);
// A batch of square matrices with `d`'s last dim on the diagonal.
Tensor diag_matrix(const Tensor& d);
// The main diagonal of each (square) matrix.
Tensor diagonal(const Tensor& x);
// x with its diagonal multiplied by `factor`.
Tensor scale_diagonal(const Tensor& x, double factor);
// x * reciprocal(x * x + 1e-20): TF's Lorentz-broadened reciprocal, finite at zero.
Tensor safe_reciprocal(const Tensor& x);
// f[i][j] = safe_reciprocal(e[j] - e[i]) off the diagonal, 0 on it.
Tensor reciprocal_gaps(const Tensor& e);
// A batch of identities shaped like the square matrices of x.
Tensor identity_like(const Tensor& x);

// Registry samples of the complex kernels (complex64): a well-conditioned 3x3 matrix, a 3x2
// right-hand side, and a Hermitian positive definite 3x3 matrix.
Tensor complex_sample_matrix();
Tensor complex_sample_rhs();
Tensor hermitian_sample_matrix();

// Registered from linalg_lu_ops.cpp's register_linalg_ops.
void register_solve_ops(schema::OpRegistry& r);
void register_decomp_ops(schema::OpRegistry& r);
void register_expm_op(schema::OpRegistry& r);
void register_eig_ops(schema::OpRegistry& r);

}  // namespace kiln::ops::linalg
