// The differential program tester (tests/program_tester.h): for each random
// program, eager == traced bit for bit (target and gradients, float32 and
// float64), the gradients defined exactly for the watched sources the target
// depends on, and the float64 gradients equal to central differences.
//
// KILN_PROGRAMS=N runs N programs (default 1000), from seed KILN_PROGRAM_SEED
// (default 1): `KILN_PROGRAMS=20000 KILN_PROGRAM_SEED=$RANDOM
// build/kiln_tests --gtest_filter='ProgramTester.*'` is the long mode, and a
// failure's printed seed replays with KILN_PROGRAMS=1 KILN_PROGRAM_SEED=<seed>.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "program_tester.h"
#include "test_util.h"

using namespace kiln;
using namespace kiln::testing::programs;

namespace {

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  Tensor x = a.dtype() == DType::Float64 ? a : cast(a, DType::Float64);
  Tensor y = b.dtype() == DType::Float64 ? b : cast(b, DType::Float64);
  std::vector<double> u = x.to_vector<double>(), v = y.to_vector<double>();
  return std::memcmp(u.data(), v.data(), u.size() * sizeof(double)) == 0;
}

std::string values_of(const Tensor& t) {
  if (!t.defined()) return "None";
  return fmt::format("[{}]", fmt::join(cast(t, DType::Float64).to_vector<double>(), ", "));
}

struct Checker {
  const Program& p;
  std::vector<std::string> failures;
  int compared = 0, skipped_kinks = 0;

  void fail(std::string what) { failures.push_back(std::move(what)); }

  // The same bits, except through cond, while_loop or a function call:
  // their gradients sum a value's contributions inside the branch, loop or
  // function first, an order the eager tape (one flat list) does not take
  // (a few ulps apart).
  bool same_gradient(const Tensor& a, const Tensor& b) const {
    if (same_bits(a, b)) return true;
    const bool nested = std::any_of(p.body.begin(), p.body.end(), [](const Instr& in) {
      return in.op == Op::kWhile || in.op == Op::kCond || in.op == Op::kCall;
    });
    if (!nested || a.shape() != b.shape()) return false;
    const double eps = a.dtype() == DType::Float32 ? 1e-5 : 1e-13;
    std::vector<double> u = cast(a, DType::Float64).to_vector<double>(), v = cast(b, DType::Float64).to_vector<double>();
    for (std::size_t k = 0; k < u.size(); ++k)
      if (std::abs(u[k] - v[k]) > eps * (1 + std::abs(u[k]))) return false;
    return true;
  }

  void eager_equals_traced(DType dtype) {
    Sources s = make_sources(p, dtype);
    Outcome e = run_eager(p, s), t = run_traced(p, s);
    const char* d = dtype_name(dtype).data();
    if (!same_bits(e.target, t.target))
      fail(fmt::format("{} target: eager {} traced {}", d, values_of(e.target), values_of(t.target)));
    const std::vector<bool> connected = connected_sources(p);
    for (std::size_t i = 0; i < p.sources.size(); ++i) {
      const SourceKind k = p.sources[i].kind;
      const bool expected = connected[i] && (k == SourceKind::kTrainable || k == SourceKind::kWatched);
      if (e.gradients[i].defined() != expected || t.gradients[i].defined() != expected)
        fail(fmt::format("{} gradient of v{}: expected {}, eager {} traced {}", d, i, expected ? "a value" : "None",
                         values_of(e.gradients[i]), values_of(t.gradients[i])));
      else if (expected && !same_gradient(e.gradients[i], t.gradients[i]))
        fail(fmt::format("{} gradient of v{}: eager {} traced {}", d, i, values_of(e.gradients[i]),
                         values_of(t.gradients[i])));
    }
    if (dtype == DType::Float64) against_central_differences(e);
  }

  // Each element's derivative from central differences at two step sizes;
  // an element on a kink or a jump (relu or abs at 0, a tie of maximum, a
  // cond's predicate flipping) is skipped.
  void against_central_differences(const Outcome& e) {
    std::vector<std::vector<double>> x;
    for (const SourceSpec& s : p.sources) x.push_back(s.values);
    int kinks = 0;
    const double f0 = evaluate(p, x, &kinks);
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!e.gradients[i].defined()) continue;
      const std::vector<double> g = e.gradients[i].to_vector<double>();
      for (std::size_t k = 0; k < x[i].size(); ++k) {
        const double x0 = x[i][k];
        auto at = [&](double h) {
          x[i][k] = x0 + h;
          double f = evaluate(p, x);
          x[i][k] = x0;
          return f;
        };
        const double h = 1e-4 * std::max(1.0, std::abs(x0));
        const double fp = at(h), fm = at(-h), fp2 = at(h / 4), fm2 = at(-h / 4);
        const double central = (fp - fm) / (2 * h), central2 = (fp2 - fm2) / (h / 2);
        const double scale = 1 + std::abs(central);
        // Where f is smooth the one-sided slopes differ by about f'' h, which
        // shrinks with h; at a kink or a jump the difference stays.
        const double gap = std::abs((fp - f0) - (f0 - fm)) / h, gap2 = std::abs((fp2 - f0) - (f0 - fm2)) / (h / 4);
        // Two step sizes that disagree: the slope changes faster than h
        // resolves (tanh(c x) with a large c), no estimate to trust.
        if ((gap > 1e-8 * scale && gap2 > gap / 2) || std::abs(central - central2) > 1e-2 * scale) {
          ++skipped_kinks;
          continue;
        }
        // Richardson's estimate of central2's error, plus rounding.
        const double err = std::abs(central - central2) / 3 + 1e-7 * scale;
        ++compared;
        if (std::abs(g[k] - central2) <= 10 * err + 1e-6 * scale) continue;
        if (kinks) {
          ++skipped_kinks;  // a tie the slopes on either side cannot see
          continue;
        }
        fail(fmt::format("float64 gradient of v{} element {}: tape {} central differences {}", i, k, g[k], central2));
      }
    }
  }
};

// A program whose values stay moderate (pow and square chains can blow up).
Program moderate_program(uint64_t seed) {
  for (uint64_t attempt = 0;; ++attempt) {
    Program p = generate(seed + attempt * 1'000'003);
    p.seed = seed + attempt * 1'000'003;
    std::vector<std::vector<double>> x;
    for (const SourceSpec& s : p.sources) x.push_back(s.values);
    const double f = evaluate(p, x);
    if (std::isfinite(f) && std::abs(f) < 1e4) return p;
  }
}

}  // namespace

TEST(ProgramTester, EagerTracedAndCentralDifferencesAgree) {
  const uint64_t count = env_number("KILN_PROGRAMS", 1000), first = env_number("KILN_PROGRAM_SEED", 1);
  int failed = 0, compared = 0, skipped = 0;
  for (uint64_t seed = first; seed < first + count; ++seed) {
    Program p = moderate_program(seed);
    Checker c{p, {}, 0, 0};
    try {
      c.eager_equals_traced(DType::Float64);
      c.eager_equals_traced(DType::Float32);
    } catch (const std::exception& e) {
      c.fail(fmt::format("threw: {}", e.what()));
    }
    compared += c.compared;
    skipped += c.skipped_kinks;
    if (c.failures.empty()) continue;
    if (++failed <= 5)
      ADD_FAILURE() << describe(p) << fmt::format("{}", fmt::join(c.failures, "\n")) << "\nreplay: KILN_PROGRAMS=1 "
                    << "KILN_PROGRAM_SEED=" << seed;
  }
  std::printf("%d of %llu programs failed; %d gradient elements compared with central differences, %d skipped (kinks, ties, too curved)\n",
              failed, static_cast<unsigned long long>(count), compared, skipped);
  EXPECT_EQ(failed, 0);
}
