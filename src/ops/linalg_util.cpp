// Shape checks and gradient helpers shared by the linalg ops (linalg_util.h).
#include "ops/linalg_util.h"

#include <fmt/format.h>

#include "kiln/array.h"
#include "kiln/complex_math.h"
#include "kiln/math.h"
#include "kiln/reduce.h"

namespace kiln::ops::linalg {

void check_matrices(const schema::InferContext& c, int i, bool square, bool complex_ok) {
  DType d = c.dtype(i);
  if (d != DType::Float32 && d != DType::Float64 && !(complex_ok && is_complex(d)))
    c.fail("input {} must be float32 or float64{}, got {}", i, complex_ok ? ", complex64 or complex128" : "",
           dtype_name(d));
  const Shape& s = c.shape(i);
  if (!s.has_known_rank()) return;
  if (s.rank() < 2) c.fail("Input tensor {} must have rank >= 2, got shape {}", i, s.to_string());
  if (square && rows(s) >= 0 && cols(s) >= 0 && rows(s) != cols(s))
    c.fail("Input matrix must be square, got shape {}", s.to_string());
}

bool check_matrix_and_rhs(schema::InferContext& c, bool complex_ok) {
  check_matrices(c, 0, true, complex_ok);
  check_matrices(c, 1, false, complex_ok);
  if (c.dtype(0) != c.dtype(1))
    c.fail("matrix and rhs must have the same dtype, got {} and {}", dtype_name(c.dtype(0)), dtype_name(c.dtype(1)));
  if (c.shape(0).has_known_rank() && c.shape(1).has_known_rank()) return true;
  c.add_output(c.dtype(0), Shape::unknown_rank());
  return false;
}

void refuse_complex_gradient(const schema::GradContext& c, const char* op) {
  DType d = c.inputs[0].dtype();
  if (is_complex(d))
    throw Unimplemented(fmt::format("{}'s gradient for {} input is not implemented yet (Kiln has no complex "
                                    "gradients)", op, dtype_name(d)));
}

Tensor complex_sample_matrix() {
  return complex(constant({{4.f, 1.f, -2.f}, {0.5f, 3.f, 1.f}, {1.f, -1.f, 5.f}}),
                 constant({{0.5f, -1.f, 0.25f}, {1.f, 0.f, -0.5f}, {-0.25f, 0.75f, 1.f}}));
}

Tensor complex_sample_rhs() {
  return complex(constant({{1.f, -2.f}, {0.5f, 1.f}, {3.f, 0.25f}}), constant({{0.f, 1.f}, {-1.f, 0.5f}, {2.f, 0.f}}));
}

Tensor hermitian_sample_matrix() {  // a symmetric real part, an antisymmetric imaginary one
  return complex(constant({{4.f, 2.f, -1.f}, {2.f, 5.f, 0.5f}, {-1.f, 0.5f, 3.f}}),
                 constant({{0.f, 0.5f, -0.25f}, {-0.5f, 0.f, 1.f}, {0.25f, -1.f, 0.f}}));
}

Shape batch_shape(const Shape& s) {
  Shape b;
  for (int d = 0; d + 2 < s.rank(); ++d) b.push_back(s[d]);
  return b;
}

int64_t num_matrices(const Shape& s) {
  int64_t n = 1;
  for (int d = 0; d + 2 < s.rank(); ++d) n *= s[d];
  return n;
}

int lapack_int(int64_t dim) {
  if (dim > std::numeric_limits<int>::max())
    throw InvalidArgument(fmt::format("linalg: a matrix dim of {} is past LAPACK's 2^31 - 1", dim));
  return static_cast<int>(dim);
}

namespace {

int64_t known_dim(const Tensor& x, int from_end) {
  const Shape& s = x.shape();
  if (!s.has_known_rank() || s.rank() < 2 || s[s.rank() - from_end] < 0)
    throw Unimplemented(fmt::format("linalg gradients need the matrix dims known, got shape {}", s.to_string()));
  return s[s.rank() - from_end];
}

// An m x n mask of x's dtype: 1 where keep(row, col).
template <class Keep> Tensor mask(const Tensor& x, int64_t m, int64_t n, Keep keep) {
  std::vector<double> v(static_cast<std::size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) v[static_cast<std::size_t>(i * n + j)] = keep(i, j) ? 1.0 : 0.0;
  return constant(v, Shape{m, n}, x.dtype());
}

}  // namespace

Tensor adjoint(const Tensor& x) {
  int r = x.rank();
  std::vector<int64_t> perm;
  for (int d = 0; d < r - 2; ++d) perm.push_back(d);
  perm.push_back(r - 1);
  perm.push_back(r - 2);
  return transpose(x, perm);
}

Tensor lower_part(const Tensor& x) {
  return x * mask(x, known_dim(x, 2), known_dim(x, 1), [](int64_t i, int64_t j) { return j <= i; });
}

Tensor upper_part(const Tensor& x) {
  return x * mask(x, known_dim(x, 2), known_dim(x, 1), [](int64_t i, int64_t j) { return j >= i; });
}

Tensor identity_like(const Tensor& x) {
  int64_t n = known_dim(x, 1);
  return mask(x, n, n, [](int64_t i, int64_t j) { return i == j; });
}

Tensor diag_matrix(const Tensor& d) {
  const Shape& s = d.shape();
  if (!s.has_known_rank() || s.rank() < 1 || s[s.rank() - 1] < 0)
    throw Unimplemented(fmt::format("linalg gradients need the vector dim known, got shape {}", s.to_string()));
  int64_t n = s[s.rank() - 1];
  return expand_dims(d, -1) * mask(d, n, n, [](int64_t i, int64_t j) { return i == j; });
}

Tensor diagonal(const Tensor& x) { return sum(x * identity_like(x), {-1}); }

Tensor scale_diagonal(const Tensor& x, double factor) {
  int64_t n = known_dim(x, 1);
  std::vector<double> v(static_cast<std::size_t>(n * n), 1.0);
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = factor;
  return x * constant(v, Shape{n, n}, x.dtype());
}

Tensor safe_reciprocal(const Tensor& x) { return x / (x * x + constant(1e-20, x.dtype())); }

Tensor reciprocal_gaps(const Tensor& e) {
  Tensor gaps = expand_dims(e, -2) - expand_dims(e, -1);  // [i][j] = e[j] - e[i]
  int64_t n = known_dim(gaps, 1);
  return safe_reciprocal(gaps) * mask(gaps, n, n, [](int64_t i, int64_t j) { return i != j; });
}

}  // namespace kiln::ops::linalg
