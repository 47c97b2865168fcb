// The registry-wide gradient tests (docs/design-notes.md, "Autodiff"): every op has a gradient or
// is marked not differentiable, and every gradient agrees with central finite
// differences on each of the op's samples (float64 / complex128 where the op takes it),
// eagerly and when the gradient is traced into a graph (tests/grad_check.h).
// The tape itself is tested in autodiff_test.cpp and through layers in
// nn_layer_grad_test.cpp.
#include "test_util.h"
#include "grad_check.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "schema/op_def.h"
#include "runtime/dispatch.h"  // run_eager

using namespace kiln;
using namespace kiln::testing;
using detail::OpDef;
using schema::OpSample;

namespace {

bool floating(const Tensor& t) { return is_floating(t.dtype()) || is_complex(t.dtype()); }
DType wider(DType d) { return is_complex(d) ? DType::Complex128 : DType::Float64; }

// The sample in float64 when the op takes it (finite differences need the
// precision); else as it is.
OpSample as_float64(const OpDef& op, const OpSample& s, bool* converted) {
  OpSample d{{}, s.attrs};
  for (const Tensor& t : s.inputs) d.inputs.push_back(floating(t) ? cast(t, wider(t.dtype())) : t);
  try {
    std::vector<Tensor> probe = d.inputs;  // run_eager may write over inputs only it holds
    runtime::run_eager(op, probe, d.attrs);
    *converted = true;
    return d;
  } catch (const Error&) {
    *converted = false;
    return s;
  }
}

}  // namespace

TEST(GradientRegistry, EveryOpHasAGradientOrIsMarkedNotDifferentiable) {
  for (const OpDef* op : schema::OpRegistry::global().all()) {
    bool has = op->gradient != nullptr, marked = op->is(schema::kNotDifferentiable);
    EXPECT_TRUE(has != marked) << op->name << (has ? " has a gradient and is marked not differentiable"
                                                   : " has no gradient and is not marked not differentiable");
  }
}

TEST(GradientRegistry, EveryGradientMatchesFiniteDifferencesEagerAndTraced) {
  int checked = 0;
  std::set<std::string> refused_complex;
  for (const OpDef* op : schema::OpRegistry::global().all()) {
    if (!op->gradient || !op->samples || op->is(schema::kStateful) || op->is(schema::kGraphOnly)) continue;
    // An eigenvector's phase is a convention, not a smooth function of the
    // matrix: linalg_eig_test.cpp checks Eig's gradient on phase-free losses.
    if (op->name == "Eig") continue;
    std::vector<OpSample> samples = op->samples();
    for (std::size_t i = 0; i < samples.size(); ++i) {
      if (samples[i].special_values) continue;  // ±0, inf, nan: no finite differences
      bool any_float = false;
      for (const Tensor& t : samples[i].inputs) any_float = any_float || floating(t);
      if (!any_float) continue;
      bool f64 = false;
      OpSample s = as_float64(*op, samples[i], &f64);
      SCOPED_TRACE(fmt::format("{} sample {} ({})", op->name, i, f64 ? "float64" : "as given"));
      // Against finite differences, then the same gradient traced into a
      // graph (static dims) equal to eager. The linalg ops refuse complex
      // gradients (Unimplemented): those are listed below, not skipped silently.
      bool complex_sample = false;
      for (const Tensor& t : s.inputs) complex_sample = complex_sample || is_complex(t.dtype());
      if (complex_sample) {
        try {
          check_op_gradient(op->name, s.inputs, s.attrs, f64 ? 1e-6 : 2e-2, f64 ? 1e-6 : 1e-3);
        } catch (const Unimplemented&) {
          refused_complex.insert(std::string(op->name));
          continue;
        }
      } else {
        check_op_gradient(op->name, s.inputs, s.attrs, f64 ? 1e-6 : 2e-2, f64 ? 1e-6 : 1e-3);
      }
      check_op_gradient_traces(op->name, s.inputs, s.attrs, 1e-9, /*unknown_dims=*/false);
      ++checked;
    }
  }
  EXPECT_GT(checked, 40);
  std::string refused;
  for (const std::string& name : refused_complex) refused += name + " ";
  EXPECT_EQ(refused, "Cholesky LogMatrixDeterminant Lu MatrixDeterminant MatrixInverse MatrixSolve "
                     "MatrixTriangularSolve Qr SelfAdjointEigV2 Svd ");
}
