// Eig's gradient (TF's _EigGrad, computed by the EigGrad kernel) against central differences of
// real losses that do not depend on the eigenvectors' phases: sum Re(conj(ge) e) + sum w |v|^2,
// for real and complex matrices (the complex gradient is dL/dRe(A) + i dL/dIm(A), TF's
// convention), with and without vectors; and the complex linalg gradients refused by name.
// The tape records no complex values yet, so these call the gradient functions directly.
#include "test_util.h"
#include "grad_check.h"

#include <complex>

#include "kiln/complex_math.h"
#include "kiln/linalg.h"
#include "runtime/dispatch.h"
#include "schema/op_def.h"

using namespace kiln;
using namespace kiln::testing;
using Complex = std::complex<double>;

namespace {

constexpr int kN = 3;

const std::vector<Complex> kGradE = {{1.0, 0.25}, {-0.5, 1.0}, {2.0, -0.75}};
const std::vector<double> kWeights = {0.5, -1.0, 0.25, 1.0, 0.0, 2.0, -0.5, 1.5, 1.0};

// The loss at A = re + i im (im empty for a real matrix).
double loss(const std::vector<double>& re, const std::vector<double>& im, bool with_vectors) {
  Tensor a = constant(re, Shape{kN, kN});
  if (!im.empty()) a = complex(a, constant(im, Shape{kN, kN}));
  auto [e, v] = eig(a, with_vectors);
  std::vector<Complex> ev = e.to_vector<Complex>();
  double total = 0;
  for (int i = 0; i < kN; ++i) total += std::real(std::conj(kGradE[i]) * ev[i]);
  if (with_vectors) {
    std::vector<Complex> vv = v.to_vector<Complex>();
    for (int k = 0; k < kN * kN; ++k) total += kWeights[k] * std::norm(vv[k]);
  }
  return total;
}

// The gradient function's result for A, as (dL/dRe, dL/dIm).
std::pair<std::vector<double>, std::vector<double>> analytic(const Tensor& a, bool with_vectors) {
  const detail::OpDef& op = schema::OpRegistry::global().get("Eig");
  schema::Attrs attrs{{"compute_v", with_vectors}};
  std::vector<Tensor> args = {a};
  runtime::TensorList outs = runtime::run_eager(op, args, attrs);
  Tensor ge = constant(kGradE, Shape{kN});
  std::vector<Tensor> dys = {ge, Tensor()};
  if (with_vectors) {
    std::vector<Complex> v = outs[1].to_vector<Complex>(), gv(v.size());
    for (std::size_t k = 0; k < v.size(); ++k) gv[k] = 2.0 * kWeights[k] * v[k];
    dys[1] = constant(gv, Shape{kN, kN});
  }
  std::vector<Tensor> inputs = {a};
  std::vector<Tensor> grads = grad_check_detail::run_gradient(op, inputs, outs, attrs, dys);
  EXPECT_EQ(grads[0].dtype(), a.dtype());
  if (!is_complex(a.dtype())) return {grads[0].to_vector<double>(), {}};
  return {real(grads[0]).to_vector<double>(), imag(grads[0]).to_vector<double>()};
}

void expect_matches_differences(const std::vector<double>& re, const std::vector<double>& im, bool with_vectors) {
  Tensor a = constant(re, Shape{kN, kN});
  if (!im.empty()) a = complex(a, constant(im, Shape{kN, kN}));
  auto [grad_re, grad_im] = analytic(a, with_vectors);
  const double h = 1e-6;
  for (int part = 0; part < (im.empty() ? 1 : 2); ++part) {
    for (int k = 0; k < kN * kN; ++k) {
      std::vector<double> up_re = re, up_im = im, down_re = re, down_im = im;
      (part == 0 ? up_re : up_im)[k] += h;
      (part == 0 ? down_re : down_im)[k] -= h;
      double numeric = (loss(up_re, up_im, with_vectors) - loss(down_re, down_im, with_vectors)) / (2 * h);
      double got = (part == 0 ? grad_re : grad_im)[k];
      EXPECT_NEAR(got, numeric, 1e-5 * std::max(1.0, std::abs(numeric)))
          << (part == 0 ? "re" : "im") << " entry " << k << (with_vectors ? " with vectors" : " values only");
    }
  }
}

// Eigenvalues of distinct magnitudes, so the order is smooth around A: a real matrix's
// conjugate pair would tie (and swap under a perturbation), the complex one has none.
const std::vector<double> kRealSpectrum = {4.0, 1.0, -0.5, 0.5, 2.0, 0.25, -0.5, 0.75, -1.0};
const std::vector<double> kPairAndReal = {0.5, -2.0, 0.3, 1.0, 0.5, -0.2, 0.1, 0.4, 3.0};
const std::vector<double> kImag = {0.3, -0.1, 0.5, 0.2, 0.6, -0.4, 0.1, 0.0, -0.7};

}  // namespace

TEST(LinalgEig, ValuesGradientMatchesDifferencesForRealMatrices) {
  expect_matches_differences(kRealSpectrum, {}, false);
}

TEST(LinalgEig, VectorsGradientMatchesDifferencesForRealMatrices) {
  expect_matches_differences(kRealSpectrum, {}, true);
}

TEST(LinalgEig, GradientMatchesDifferencesForComplexMatrices) {
  expect_matches_differences(kPairAndReal, kImag, false);
  expect_matches_differences(kPairAndReal, kImag, true);
}

TEST(LinalgEig, ComplexGradientsOfOtherOpsAreRefusedByName) {
  Tensor a = complex(constant({{2.0, 0.5}, {0.25, 3.0}}), constant({{0.5, -1.0}, {1.0, 0.0}}));
  for (const char* name : {"MatrixInverse", "MatrixDeterminant", "Qr", "Svd", "SelfAdjointEigV2", "Cholesky"}) {
    const detail::OpDef& op = schema::OpRegistry::global().get(name);
    schema::Attrs attrs = op.samples()[0].attrs;
    std::vector<Tensor> args = {a};
    runtime::TensorList outs = runtime::run_eager(op, args, attrs);
    std::vector<Tensor> dys;
    for (const Tensor& y : outs) dys.push_back(zeros_like(y));
    std::vector<Tensor> inputs = {a};
    try {
      grad_check_detail::run_gradient(op, inputs, outs, attrs, dys);
      ADD_FAILURE() << name << " gave a complex gradient";
    } catch (const Unimplemented& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("complex128"), std::string::npos) << e.what();
    }
  }
}
