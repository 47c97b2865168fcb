// Eig (tf.linalg.eig / eigvals): the eigen decomposition of general square matrices through
// LAPACK's geev on the matrix made complex (cgeev for float32 and complex64, zgeev for float64
// and complex128), and EigGrad, TF's gradient (_EigGrad) computed in one kernel so that it
// needs no complex gradients of other ops. Conventions follow TF's CPU kernel (Eigen's
// ComplexEigenSolver): eigenvalues in ascending order of magnitude, eigenvectors of unit
// 2-norm as columns; a vector's phase is LAPACK's (its largest entry real), which TF leaves to
// Eigen's Schur vectors (docs/design-notes.md, "Linear algebra: complex and eig").
#include <algorithm>
#include <complex>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "kiln/complex_math.h"
#include "kiln/linalg.h"
#include "ops/lapack.h"
#include "ops/linalg_util.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {
namespace linalg {

namespace {

DType complex_dtype_of(DType d) {
  return d == DType::Float64 || d == DType::Complex128 ? DType::Complex128 : DType::Complex64;
}

// Calls f.template operator()<R, T>(): R the real type, T the input's element type.
template <class F> void eig_switch(DType d, F&& f) {
  switch (d) {
    case DType::Float32: f.template operator()<float, float>(); break;
    case DType::Float64: f.template operator()<double, double>(); break;
    case DType::Complex64: f.template operator()<float, std::complex<float>>(); break;
    case DType::Complex128: f.template operator()<double, std::complex<double>>(); break;
    default: throw InvalidArgument(fmt::format("Eig: unsupported dtype {}", dtype_name(d)));
  }
}

// Calls f.template operator()<R>(), R the real type of complex64 or complex128.
template <class F> void complex_switch(DType d, F&& f) {
  if (d == DType::Complex128) f.template operator()<double>();
  else f.template operator()<float>();
}

void eig_infer(schema::InferContext& c) {
  check_matrices(c, 0, true, true);
  const DType out = complex_dtype_of(c.dtype(0));
  const Shape& s = c.shape(0);
  const bool with_vectors = c.attrs().get_bool("compute_v");
  if (!s.has_known_rank()) {
    c.add_output(out, Shape::unknown_rank());
    c.add_output(out, with_vectors ? Shape::unknown_rank() : Shape{0});
    return;
  }
  int64_t n = cols(s) >= 0 ? cols(s) : rows(s);
  Shape values = batch_shape(s), vectors = batch_shape(s);
  values.push_back(n);
  vectors.push_back(n);
  vectors.push_back(n);
  c.add_output(out, values);
  c.add_output(out, with_vectors ? vectors : Shape{0});
}

// Eigen's ComplexEigenSolver::sortEigenvalues: a selection sort by magnitude, each step
// swapping the first smallest remaining value into place (which fixes the order of ties).
template <class C> std::vector<int> magnitude_order(const C* w, int n) {
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  for (int i = 0; i < n; ++i) {
    int k = i;
    for (int j = i + 1; j < n; ++j)
      if (std::abs(w[order[j]]) < std::abs(w[order[k]])) k = j;
    std::swap(order[i], order[k]);
  }
  return order;
}

void eig_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(0);
  const int n = lapack_int(cols(s));
  const bool with_vectors = c.attrs.get_bool("compute_v");
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  eig_switch(c.inputs[0].dtype(), [&]<class R, class T>() {
    using C = std::complex<R>;
    std::vector<C> a(static_cast<std::size_t>(size)), w(static_cast<std::size_t>(n)),
        vr(with_vectors ? static_cast<std::size_t>(size) : 1);
    std::vector<R> rwork(static_cast<std::size_t>(2 * std::max(n, 1)));
    const char job = with_vectors ? 'V' : 'N';
    for (int64_t b = 0; b < count && n > 0; ++b) {
      const T* x = c.in<T>(0) + b * size;
      C* e = c.out<C>(0) + b * n;
      C* v = with_vectors ? c.out<C>(1) + b * size : nullptr;
      if (!all_finite(x, size)) {
        fill_nan(e, n);
        if (v) fill_nan(v, size);
        continue;
      }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) a[static_cast<std::size_t>(j * n + i)] = C(x[i * n + j]);
      C query = 0;
      int info = 0;
      lapack::geev(job, n, a.data(), n, w.data(), vr.data(), n, &query, -1, rwork.data(), &info);
      std::vector<C> work(work_size(query, 2 * n));
      lapack::geev(job, n, a.data(), n, w.data(), vr.data(), n, work.data(), static_cast<int>(work.size()),
                   rwork.data(), &info);
      if (info != 0) throw InvalidArgument("Eigen decomposition was not successful. The input might not be valid.");
      std::vector<int> order = magnitude_order(w.data(), n);
      for (int i = 0; i < n; ++i) {
        e[i] = w[static_cast<std::size_t>(order[i])];
        if (!v) continue;
        const C* column = vr.data() + int64_t{order[i]} * n;  // unit 2-norm from geev
        for (int r = 0; r < n; ++r) v[int64_t{r} * n + i] = column[r];
      }
    }
  });
}

// ---- EigGrad: TF's _EigGrad in one kernel ----

// TF's _SafeReciprocal on a complex number: x / (x * x + 1e-20).
template <class C> C safe_reciprocal_of(C x) { return x / (x * x + C(1e-20)); }

// Row-major n x n products, conjugating a first when asked.
template <class C> void multiply(const C* a, const C* b, int n, C* out, bool adjoint_a = false) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      C total = 0;
      for (int k = 0; k < n; ++k)
        total += (adjoint_a ? std::conj(a[int64_t{k} * n + i]) : a[int64_t{i} * n + k]) * b[int64_t{k} * n + j];
      out[int64_t{i} * n + j] = total;
    }
}

// With V^H = vt: grad_a = vt^-1 (diag(ge) + conj(F) o (V^H gv - V^H V diag(re(diag(V^H gv))))) vt,
// F[i][j] = safe_reciprocal(e[j] - e[i]) off the diagonal; an undefined vector gradient is zero.
void eig_grad_kernel(schema::KernelContext& c) {
  const Shape& s = c.in_shape(1);
  const int n = lapack_int(cols(s));
  const int64_t count = num_matrices(s), size = int64_t{n} * n;
  complex_switch(c.inputs[0].dtype(), [&]<class R>() {
    using C = std::complex<R>;
    std::vector<C> vgv(static_cast<std::size_t>(size)), vtv(static_cast<std::size_t>(size)),
        mid(static_cast<std::size_t>(size)), rhs(static_cast<std::size_t>(size)), vt(static_cast<std::size_t>(size)),
        lu(static_cast<std::size_t>(size));
    std::vector<int> pivots(static_cast<std::size_t>(n));
    for (int64_t b = 0; b < count && n > 0; ++b) {
      const C* e = c.in<C>(0) + b * n;
      const C* v = c.in<C>(1) + b * size;
      const C* ge = c.in<C>(2) + b * n;
      const C* gv = c.in<C>(3) + b * size;
      multiply(v, gv, n, vgv.data(), true);
      multiply(v, v, n, vtv.data(), true);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const int64_t ij = int64_t{i} * n + j;
          // (V^H V diag(re(diag(vgv))))[i][j] = vtv[i][j] re(vgv[j][j])
          C inner = vgv[ij] - vtv[ij] * std::real(vgv[int64_t{j} * n + j]);
          C f = i == j ? C(0) : std::conj(safe_reciprocal_of(e[j] - e[i]));
          mid[ij] = f * inner + (i == j ? ge[i] : C(0));
        }
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) vt[int64_t{i} * n + j] = std::conj(v[int64_t{j} * n + i]);
      multiply(mid.data(), vt.data(), n, rhs.data());
      // vt X = rhs, column-major for LAPACK
      to_col_major(vt.data(), n, n, lu.data(), n);
      int info = 0;
      lapack::getrf(n, n, lu.data(), n, pivots.data(), &info);
      if (info > 0) throw InvalidArgument("EigGrad: the eigenvector matrix is not invertible.");
      std::vector<C> x(static_cast<std::size_t>(size));
      to_col_major(rhs.data(), n, n, x.data(), n);
      lapack::getrs('N', n, n, lu.data(), n, pivots.data(), x.data(), n, &info);
      from_col_major(x.data(), n, n, n, c.out<C>(0) + b * size);
    }
  });
}

void eig_grad_infer(schema::InferContext& c) {
  for (int i = 0; i < 4; ++i)
    if (!is_complex(c.dtype(i)) || c.dtype(i) != c.dtype(0))
      c.fail("EigGrad: e, v and their gradients must share one complex dtype, got {} for input {}",
             dtype_name(c.dtype(i)), i);
  c.add_output(c.dtype(0), c.shape(1));
}

std::vector<schema::OpSample> eig_grad_samples() {
  auto [e, v] = eig(constant({{4.f, 1.f, -0.5f}, {0.5f, 2.f, 0.25f}, {-0.5f, 0.75f, -1.f}}));
  auto [e2, v2] = eig(constant({{0.f, -2.f}, {1.f, 0.5f}}));
  Tensor gv = complex(constant({{0.5f, -1.f, 0.25f}, {1.f, 0.f, 2.f}, {-0.5f, 1.5f, 1.f}}),
                      constant({{1.f, 0.5f, -2.f}, {0.f, 0.25f, 1.f}, {0.75f, -1.f, 0.f}}));
  Tensor ge = complex(constant({1.f, -0.5f, 2.f}), constant({0.25f, 1.f, 0.f}));
  Tensor ge2 = complex(constant({1.f, 2.f}), constant({-1.f, 0.5f}));
  return {{{e, v, ge, gv}}, {{e2, v2, ge2, zeros_like(v2)}}};
}

constexpr detail::OpDef kEigGrad{.name = "EigGrad", .infer = eig_grad_infer, .kernel = eig_grad_kernel,
                                 .flags = schema::kNotDifferentiable, .samples = eig_grad_samples};

// TF's: the complex gradient, cast to a real input's dtype (its real part).
void eig_grad(schema::GradContext& c) {
  if (!c.grads[0].defined() && (c.grads.size() < 2 || !c.grads[1].defined())) return;
  Tensor e = c.outputs[0], v = c.outputs[1];
  Tensor grad_v;
  if (c.attrs.get_bool("compute_v")) {
    grad_v = c.grad_or_zeros(1);
  } else {
    std::tie(e, v) = eig(c.inputs[0], true);
    grad_v = zeros_like(v);
  }
  const Tensor in[] = {e, v, c.grad_or_zeros(0), grad_v};
  Tensor grad_a = runtime::dispatch1(kEigGrad, in, schema::Attrs{}, SourceLocation::current());
  DType d = c.inputs[0].dtype();
  c.set(0, is_complex(d) ? grad_a : cast(grad_a, d));
}

std::vector<schema::OpSample> eig_samples() {
  // distinct magnitudes: the order, and so the gradient, is smooth around them
  Tensor real_spectrum = constant({{4.f, 1.f, -0.5f}, {0.5f, 2.f, 0.25f}, {-0.5f, 0.75f, -1.f}});
  Tensor rotation = constant({{{0.f, -2.f}, {1.f, 0.5f}}, {{3.f, 1.f}, {0.f, -1.f}}});  // a conjugate pair; real
  schema::Attrs vectors{{"compute_v", true}}, values{{"compute_v", false}};
  return {{{real_spectrum}, vectors},
          {{rotation}, vectors},
          {{real_spectrum}, values},
          {{cast(rotation, DType::Complex64)}, vectors},
          {{constant({{2.f, 0.f}, {0.f, -1.f}})},
           values,
           false,
           {cast(constant({-1.f, 2.f}), DType::Complex64),
            cast(constant(std::vector<float>{}, Shape{0}), DType::Complex64)}}};
}

constexpr detail::OpDef kEig{.name = "Eig", .infer = eig_infer, .kernel = eig_kernel, .samples = eig_samples,
                             .gradient = eig_grad};

}  // namespace

void register_eig_ops(schema::OpRegistry& r) {
  r.add(kEig);
  r.add(kEigGrad);
}

}  // namespace linalg
}  // namespace ops

std::pair<Tensor, Tensor> eig(const Tensor& x, bool compute_v, SourceLocation loc) {
  const Tensor in[] = {x};
  runtime::TensorList out = runtime::dispatch(ops::linalg::kEig, in, schema::Attrs{{"compute_v", compute_v}}, loc);
  return {std::move(out[0]), std::move(out[1])};
}

}  // namespace kiln
