// The vectorized float32 transcendentals (src/ops/vector_math.h) against the
// std:: functions computed in double precision, over a dense sweep of float32
// inputs: every 4093rd bit pattern (all magnitudes, both signs, denormals,
// infinities and NaNs; about 1.05M values) plus dense uniform grids over the
// ranges where each formula switches branch or loses digits.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <kiln/kiln.h>

#include "ops/elementwise.h"

namespace {

using namespace kiln::core;
using namespace kiln::ops;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// The spacing of float32 values at |v| (denormal spacing below FLT_MIN).
double float_ulp_at(double v) {
  const double a = std::fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(a, &e);  // a = m 2^e with m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

// Error of `got` in float32 ulps of the exact value `ref` (a double).
// Infinities count as 2^128, one step past FLT_MAX; NaN must match NaN.
double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0 : kInf;
  if (std::isnan(got)) return kInf;
  auto finite = [](double v) { return std::isinf(v) ? std::copysign(0x1p128, v) : v; };
  // An exact value at or past FLT_MAX + half an ulp rounds to infinity.
  double r = finite(ref);
  if (std::fabs(r) >= 0x1p128 - 0x1p103) r = std::copysign(0x1p128, r);
  const double g = finite(static_cast<double>(got));
  if (std::fabs(r) == 0x1p128) return std::fabs(g - r) / 0x1p104;
  return std::fabs(g - r) / float_ulp_at(r);
}

std::vector<float> sweep_inputs() {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xffffffffull; bits += 4093)
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  auto grid = [&](double lo, double hi, int n) {
    for (int i = 0; i <= n; ++i) xs.push_back(static_cast<float>(lo + (hi - lo) * i / n));
  };
  grid(-2, 2, 200000);       // tanh's branch switch at 0.625, log1p near 0 and -1
  grid(0.5, 2, 100000);      // log near 1
  grid(-110, 95, 100000);    // exp up to overflow and down through the denormals
  grid(-1, -0.99, 20000);    // log1p close to its pole
  for (float v : {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN, 1.0f, -1.0f, 0x1p-149f, -0x1p-149f,
                  0x1p-126f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                  88.72283f, 88.72284f, -87.33654f, -103.97208f, -103.97209f, 0.625f, -0.625f,
                  std::nextafter(0.625f, 0.0f), 9.01f, -9.01f})
    xs.push_back(v);
  return xs;
}

// Runs F's contiguous float32 loop (the eager and fused entry) over the
// sweep and returns the largest ulp error against ref(double).
template <class F>
double max_ulp_error(double (*ref)(double), float* worst_x) {
  const std::vector<float> xs = sweep_inputs();
  std::vector<float> ys(xs.size());
  unary_range<F, float>(xs.data(), ys.data(), static_cast<int64_t>(xs.size()));
  double worst = 0;
  *worst_x = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double e = ulp_error(ys[i], ref(static_cast<double>(xs[i])));
    if (e > worst || std::isnan(e)) {
      worst = e;
      *worst_x = xs[i];
    }
  }
  return worst;
}

double ref_exp(double x) { return std::exp(x); }
double ref_log(double x) { return std::log(x); }
double ref_log1p(double x) { return std::log1p(x); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Bounds: the largest error seen on this sweep, rounded up (exp 1.02, log
// 0.80, log1p 0.77, tanh 1.16, sigmoid 2.09 ulps when written).
#define KILN_ULP_TEST(Name, Fn, ref, bound)                                              \
  TEST(VectorMath, Name##WithinUlps) {                                                    \
    float worst_x;                                                                        \
    const double worst = max_ulp_error<Fn>(ref, &worst_x);                                \
    EXPECT_LE(worst, bound) << "worst input " << worst_x << " (bits 0x" << std::hex       \
                            << std::bit_cast<uint32_t>(worst_x) << ")";                   \
  }
KILN_ULP_TEST(Exp, ExpFn, ref_exp, 1.5)
KILN_ULP_TEST(Log, LogFn, ref_log, 1.0)
KILN_ULP_TEST(Log1p, Log1pFn, ref_log1p, 1.0)
KILN_ULP_TEST(Tanh, TanhFn, ref_tanh, 1.5)
KILN_ULP_TEST(Sigmoid, SigmoidFn, ref_sigmoid, 2.5)
#undef KILN_ULP_TEST

template <class F>
float f32(float x) {
  return F::template apply<float>(x);
}

bool same_bits(float a, float b) { return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b); }

TEST(VectorMath, SpecialValues) {
  EXPECT_TRUE(std::isnan(f32<ExpFn>(kNaN)));
  EXPECT_EQ(f32<ExpFn>(kInf), kInf);
  EXPECT_TRUE(same_bits(f32<ExpFn>(-kInf), 0.0f));
  EXPECT_EQ(f32<ExpFn>(89.0f), kInf);
  EXPECT_EQ(f32<ExpFn>(1e30f), kInf);
  EXPECT_TRUE(same_bits(f32<ExpFn>(-104.0f), 0.0f));
  EXPECT_EQ(f32<ExpFn>(-103.0f), std::exp(-103.0f));  // a denormal, rounded once
  EXPECT_EQ(f32<ExpFn>(0.0f), 1.0f);
  EXPECT_EQ(f32<ExpFn>(-0.0f), 1.0f);

  EXPECT_EQ(f32<LogFn>(0.0f), -kInf);
  EXPECT_EQ(f32<LogFn>(-0.0f), -kInf);
  EXPECT_TRUE(std::isnan(f32<LogFn>(-1.0f)));
  EXPECT_TRUE(std::isnan(f32<LogFn>(-kInf)));
  EXPECT_TRUE(std::isnan(f32<LogFn>(kNaN)));
  EXPECT_EQ(f32<LogFn>(kInf), kInf);
  EXPECT_TRUE(same_bits(f32<LogFn>(1.0f), 0.0f));
  EXPECT_EQ(f32<LogFn>(0x1p-149f), std::log(0x1p-149f));

  EXPECT_TRUE(same_bits(f32<Log1pFn>(0.0f), 0.0f));
  EXPECT_TRUE(same_bits(f32<Log1pFn>(-0.0f), -0.0f));
  EXPECT_EQ(f32<Log1pFn>(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(f32<Log1pFn>(-2.0f)));
  EXPECT_TRUE(std::isnan(f32<Log1pFn>(kNaN)));
  EXPECT_EQ(f32<Log1pFn>(kInf), kInf);
  EXPECT_EQ(f32<Log1pFn>(1e-30f), 1e-30f);

  EXPECT_TRUE(same_bits(f32<TanhFn>(0.0f), 0.0f));
  EXPECT_TRUE(same_bits(f32<TanhFn>(-0.0f), -0.0f));
  EXPECT_EQ(f32<TanhFn>(kInf), 1.0f);
  EXPECT_EQ(f32<TanhFn>(-kInf), -1.0f);
  EXPECT_EQ(f32<TanhFn>(20.0f), 1.0f);
  EXPECT_EQ(f32<TanhFn>(-20.0f), -1.0f);
  EXPECT_TRUE(std::isnan(f32<TanhFn>(kNaN)));
  EXPECT_EQ(f32<TanhFn>(0x1p-149f), 0x1p-149f);

  EXPECT_EQ(f32<SigmoidFn>(kInf), 1.0f);
  EXPECT_TRUE(same_bits(f32<SigmoidFn>(-kInf), 0.0f));
  EXPECT_EQ(f32<SigmoidFn>(0.0f), 0.5f);
  EXPECT_TRUE(std::isnan(f32<SigmoidFn>(kNaN)));
}

// The contiguous loop (8 lanes plus a masked tail) and the one-value functor
// give the same bits for every element, whatever the length and offset, so
// eager (split by parallel_for) and fused (tiled) results cannot differ.
template <class F>
void expect_loop_matches_scalar() {
  std::vector<float> xs;
  for (int i = 0; i < 1000; ++i) xs.push_back(static_cast<float>(i - 500) * 0.0371f);
  for (int64_t start : {0, 1, 3, 7}) {
    for (int64_t n : {0, 1, 5, 8, 13, 16, 31, 64, 199}) {
      std::vector<float> ys(static_cast<size_t>(n), kNaN);
      unary_range<F, float>(xs.data() + start, ys.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_TRUE(same_bits(ys[i], f32<F>(xs[start + i]))) << "start " << start << " n " << n << " i " << i;
    }
  }
  // In place.
  std::vector<float> inplace(xs.begin(), xs.begin() + 101);
  unary_range<F, float>(inplace.data(), inplace.data(), 101);
  for (int i = 0; i < 101; ++i) ASSERT_TRUE(same_bits(inplace[i], f32<F>(xs[i]))) << i;
}

TEST(VectorMath, LoopMatchesScalarBitwise) {
  expect_loop_matches_scalar<ExpFn>();
  expect_loop_matches_scalar<LogFn>();
  expect_loop_matches_scalar<Log1pFn>();
  expect_loop_matches_scalar<TanhFn>();
  expect_loop_matches_scalar<SigmoidFn>();
}

// tanh's loops run blocks of small values (|x| < 0.625) on the odd
// polynomial alone, guessing from the block before: blocks of 32 on 8
// lanes, of 64 on 16. Every guess, right or wrong, gives the formula's bits.
// Runs of small blocks with one larger value (or NaN, or exactly 0.625) at
// each position of a block, mixed blocks in a row (after which the loop
// stops guessing), every length and offset, and in place.
using TanhLoop = void (*)(const float*, float*, int64_t);
void expect_small_blocks_give_the_formulas_bits(TanhLoop loop, int64_t block, int64_t guess_lanes) {
  std::vector<float> x;
  for (int64_t i = 0; i < 128 * block; ++i)
    x.push_back(std::ldexp(static_cast<float>((i * 7919) % 1000) - 499.5f, -10));  // |x| < 0.49
  const std::vector<int64_t> larger = {block * 3, block * 5 + 7, block * 9 + block - 1, block * 12 + 12};
  for (int64_t at : larger) x[at] = 0.75f;
  x[block * 20 + 3] = kNaN;
  x[block * 22 + block - 2] = -0.625f;
  x[block * 24] = std::nextafter(0.625f, 0.0f);  // still small
  for (int64_t i = block * 40; i < block * 43; ++i) x[i] = 3.0f * std::sin(static_cast<float>(i));  // mixed in a row
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = f32<TanhFn>(x[i]);
  for (int64_t start : {int64_t{0}, int64_t{1}, block - 1}) {
    for (int64_t n : {block - 1, block, block + 1, 2 * block, 3 * block - 1, int64_t{1000}, int64_t{4000}}) {
      std::vector<float> got(static_cast<size_t>(n));
      loop(x.data() + start, got.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_TRUE(same_bits(got[i], want[start + i])) << "start " << start << " n " << n << " i " << i;
    }
  }
  std::vector<float> inplace(x);
  loop(inplace.data(), inplace.data(), static_cast<int64_t>(inplace.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same_bits(inplace[i], want[i])) << i;
  // The first block's guess comes from its first vector: small there,
  // larger further on (it must then be computed whole).
  for (int64_t at : larger) {
    const int64_t start = at - guess_lanes - 3;
    std::vector<float> got(static_cast<size_t>(2 * block));
    loop(x.data() + start, got.data(), 2 * block);
    for (int64_t i = 0; i < 2 * block; ++i)
      ASSERT_TRUE(same_bits(got[i], want[start + i])) << "start " << start << " i " << i;
  }
}

TEST(VectorMath, TanhSmallBlocksGiveTheFormulasBits) {
  expect_small_blocks_give_the_formulas_bits(kiln::ops::vmath::tanh_f32_8lanes, 32, 8);
}

TEST(VectorMath, TanhSixteenLanesSmallBlocksGiveTheFormulasBits) {
  if (!kiln::ops::vmath::has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512 (or KILN_DISABLE_AVX512 is set)";
  expect_small_blocks_give_the_formulas_bits(kiln::ops::vmath::tanh_f32, 64, 16);
}

// tanh's AVX-512 loop gives the 8-lane loop's bits: a strided sweep of every
// sign, exponent and mantissa region (NaNs, infinities, denormals, zeros
// included), and every tail length of the masked last block.
TEST(VectorMath, TanhSixteenLanesMatchEightLanes) {
  if (!kiln::ops::vmath::has_avx512()) GTEST_SKIP() << "this CPU has no AVX-512 (or KILN_DISABLE_AVX512 is set)";
  std::vector<float> x;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFu; bits += 251) x.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  for (float v : {0.0f, -0.0f, kInf, -kInf, kNaN, 0.625f, -0.625f, 9.25f, 1e-45f}) x.push_back(v);
  std::vector<float> wide(x.size()), narrow(x.size());
  kiln::ops::vmath::tanh_f32(x.data(), wide.data(), static_cast<int64_t>(x.size()));
  kiln::ops::vmath::tanh_f32_8lanes(x.data(), narrow.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_TRUE(same_bits(wide[i], narrow[i])) << "input bits 0x" << std::hex << std::bit_cast<uint32_t>(x[i]);
  for (int64_t n = 1; n <= 33; ++n) {
    std::vector<float> out(40, 7.0f);
    kiln::ops::vmath::tanh_f32(x.data() + 1000, out.data(), n);
    for (int64_t i = 0; i < 40; ++i)
      ASSERT_TRUE(same_bits(out[i], i < n ? narrow[1000 + i] : 7.0f)) << "n = " << n << ", element " << i;
  }
}

// The public ops run the same formula (a large tensor goes through
// parallel_for in pieces), and float64 still uses std::.
TEST(VectorMath, OpsUseTheVectorFormula) {
  const int64_t n = 100003;
  kiln::Tensor x = kiln::random::uniform(kiln::Shape{n}, -30.0, 30.0, kiln::DType::Float32, 11);
  const std::vector<float> xv = x.to_vector<float>();
  const std::vector<float> y = kiln::tanh(x).to_vector<float>();
  const std::vector<float> e = kiln::exp(x).to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_TRUE(same_bits(y[i], f32<TanhFn>(xv[i]))) << i;
    ASSERT_TRUE(same_bits(e[i], f32<ExpFn>(xv[i]))) << i;
  }
  kiln::Tensor xd = kiln::constant({0.3, -2.5, 40.0});
  const std::vector<double> yd = kiln::tanh(xd).to_vector<double>();
  EXPECT_EQ(yd[0], std::tanh(0.3));
  EXPECT_EQ(yd[1], std::tanh(-2.5));
  EXPECT_EQ(yd[2], std::tanh(40.0));
}

}  // namespace
