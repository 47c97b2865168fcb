// MatrixExponential (tf.linalg.expm): Higham's scaling and squaring with Pade approximants of
// order 3 to 13 (Higham 2005, as TF's and SciPy's), in double precision for float32 too; the
// products are BLAS gemm, the Pade quotient an LU solve (LAPACK getrf/getrs). Its gradient is
// the adjoint of the Frechet derivative, read off the exponential of a block matrix:
// expm([[A^T, G], [0, A^T]]) holds L(A^T, G) in its upper-right block, so it is itself an
// expm, and nests.
#include <cmath>

#include "kiln/array.h"
#include "kiln/linalg.h"
#include "ops/lapack.h"
#include "ops/linalg_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {
namespace linalg {

namespace {

// The Pade approximants' coefficients b_0..b_m (Higham 2005, table 2.3) and the largest 1-norm
// each is accurate for in double precision (table 2.3's theta_m).
constexpr double kPade3[] = {120., 60., 12., 1.};
constexpr double kPade5[] = {30240., 15120., 3360., 420., 30., 1.};
constexpr double kPade7[] = {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
constexpr double kPade9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                             2162160.,     110880.,     3960.,       90.,        1.};
constexpr double kPade13[] = {64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
                              129060195264000.,   10559470521600.,    670442572800.,     33522128640.,
                              1323241920.,        40840800.,          960960.,           16380.,
                              182.,               1.};
constexpr double kTheta[] = {1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                             2.097847961257068e0, 5.371920351148152e0};

using Matrix = std::vector<double>;

// Column-major n x n products: c = a b.
Matrix product(const Matrix& a, const Matrix& b, int n) {
  Matrix c(a.size());
  lapack::gemm('N', 'N', n, n, n, 1.0, a.data(), n, b.data(), n, 0.0, c.data(), n);
  return c;
}

// sum_k coefficients[k] * powers[k] (+ c0 I).
Matrix combine(const std::vector<std::pair<double, const Matrix*>>& terms, double identity, int n) {
  Matrix out(static_cast<std::size_t>(n) * n, 0.0);
  for (const auto& [coefficient, m] : terms)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] += coefficient * (*m)[i];
  for (int i = 0; i < n; ++i) out[static_cast<std::size_t>(i) * n + i] += identity;
  return out;
}

// exp(a) of a column-major n x n matrix (a finite), in place.
void exponential(Matrix& a, int n) {
  double norm = 0;  // the 1-norm: the largest column sum
  for (int j = 0; j < n; ++j) {
    double column = 0;
    for (int i = 0; i < n; ++i) column += std::abs(a[static_cast<std::size_t>(j) * n + i]);
    norm = std::max(norm, column);
  }
  int squarings = 0;
  const double* b = kPade13;
  int order = 13;
  const double* orders[] = {kPade3, kPade5, kPade7, kPade9};
  for (int k = 0; k < 4; ++k)
    if (norm <= kTheta[k]) {
      b = orders[k];
      order = 3 + 2 * k;
      break;
    }
  if (order == 13 && norm > kTheta[4]) {
    squarings = static_cast<int>(std::ceil(std::log2(norm / kTheta[4])));
    double scale = std::ldexp(1.0, -squarings);
    for (double& x : a) x *= scale;
  }
  Matrix a2 = product(a, a, n), u_inner, v;
  if (order < 13) {
    // U = A (b_m A^{m-1} + ... + b_1 I), V = b_{m-1} A^{m-1} + ... + b_0 I, in powers of A^2.
    std::vector<Matrix> even{a2};
    for (int p = 4; p < order; p += 2) even.push_back(product(even.back(), a2, n));
    std::vector<std::pair<double, const Matrix*>> odd_terms, even_terms;
    for (std::size_t k = 0; k < even.size(); ++k) {
      odd_terms.emplace_back(b[2 * k + 3], &even[k]);
      even_terms.emplace_back(b[2 * k + 2], &even[k]);
    }
    u_inner = combine(odd_terms, b[1], n);
    v = combine(even_terms, b[0], n);
  } else {
    Matrix a4 = product(a2, a2, n), a6 = product(a4, a2, n);
    Matrix high_u = product(a6, combine({{b[13], &a6}, {b[11], &a4}, {b[9], &a2}}, 0, n), n);
    u_inner = combine({{1.0, &high_u}, {b[7], &a6}, {b[5], &a4}, {b[3], &a2}}, b[1], n);
    Matrix high_v = product(a6, combine({{b[12], &a6}, {b[10], &a4}, {b[8], &a2}}, 0, n), n);
    v = combine({{1.0, &high_v}, {b[6], &a6}, {b[4], &a4}, {b[2], &a2}}, b[0], n);
  }
  Matrix u = product(a, u_inner, n);
  // (V - U) X = V + U
  Matrix q = combine({{1.0, &v}, {-1.0, &u}}, 0, n), x = combine({{1.0, &v}, {1.0, &u}}, 0, n);
  std::vector<int> pivots(static_cast<std::size_t>(n));
  int info = 0;
  lapack::getrf(n, n, q.data(), n, pivots.data(), &info);
  if (info > 0) {
    fill_nan(a.data(), static_cast<int64_t>(a.size()));
    return;
  }
  lapack::getrs('N', n, n, q.data(), n, pivots.data(), x.data(), n, &info);
  for (int s = 0; s < squarings; ++s) x = product(x, x, n);
  a = std::move(x);
}

void expm_infer(schema::InferContext& c) {
  check_matrices(c, 0, true);
  c.add_output(c.dtype(0), c.shape(0));
}

void expm_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(cols(s));
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  float_switch(c.inputs[0].dtype(), [&]<class T>() {
    Matrix a(static_cast<std::size_t>(size));
    for (int64_t b = 0; b < count && n > 0; ++b) {
      const T* x = c.in<T>(0) + b * size;
      T* out = c.out<T>(0) + b * size;
      if (!all_finite(x, size)) {
        fill_nan(out, size);
        continue;
      }
      // The row-major buffer read column-major is A^T, and exp(A^T) = exp(A)^T: written back
      // row-major it is exp(A), with no transposes.
      std::copy(x, x + size, a.begin());
      exponential(a, n);
      for (int64_t i = 0; i < size; ++i) out[i] = static_cast<T>(a[static_cast<std::size_t>(i)]);
    }
  });
}

void expm_grad(schema::GradContext& c) {
  const Tensor& x = c.inputs[0];
  const Shape& s = x.shape();
  if (!s.has_known_rank() || cols(s) < 0)
    throw Unimplemented("MatrixExponential's gradient needs the matrix dims known");
  int64_t n = cols(s);
  Tensor at = adjoint(x);
  Tensor block = concat({concat({at, c.grad(0)}, -1), concat({zeros_like(at), at}, -1)}, -2);
  Tensor e = matrix_exponential(block);
  std::vector<int64_t> begin(static_cast<std::size_t>(s.rank()), 0), size(static_cast<std::size_t>(s.rank()), -1);
  begin.back() = n;
  size[size.size() - 2] = n;
  c.set(0, slice(e, begin, size));
}

std::vector<schema::OpSample> expm_samples() {
  // 1-norms 0.008 (order 3), 0.35 (7), 1.1 (9), and past 5.4 (13 after squarings)
  return {{{constant({{0.005f, 0.002f}, {-0.003f, 0.001f}})}},
          {{constant({{0.1f, 0.2f}, {-0.05f, 0.15f}})}},
          {{constant({{0.5f, -0.3f, 0.2f}, {0.1f, 0.4f, -0.2f}, {0.3f, 0.f, -0.6f}})}},
          {{constant({{{1.5f, -2.f}, {3.f, 0.5f}}, {{-4.f, 1.f}, {2.5f, 3.f}}})}},
          {{constant({{0.f, 1.f}, {-1.f, 0.f}})},  // a rotation by 1 radian
           {},
           false,
           {constant({{0.5403023f, 0.84147096f}, {-0.84147096f, 0.5403023f}})}}};
}

constexpr detail::OpDef kMatrixExponential{.name = "MatrixExponential", .infer = expm_infer, .kernel = expm_kernel,
                                           .samples = expm_samples, .gradient = expm_grad};

}  // namespace

void register_expm_op(schema::OpRegistry& r) { r.add(kMatrixExponential); }

}  // namespace linalg
}  // namespace ops

Tensor matrix_exponential(const Tensor& x, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::linalg::kMatrixExponential, in, schema::Attrs{}, loc);
}

}  // namespace kiln
