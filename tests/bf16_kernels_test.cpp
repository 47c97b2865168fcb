// bfloat16 MatMul, Conv2D and Conv2D's backprops on oneDNN's bf16 kernels
// (where the CPU has AVX512_BF16 or AMX) against the float32 path: the same
// bf16 inputs widened to float32, the float32 op, the result rounded to
// bfloat16 once. Both multiply exactly (a bf16 product fits float32's
// mantissa) and accumulate in float32, so they differ only by the order of
// the sums: at most one bf16 step (2^-8 relative) where a sum lands near a
// rounding boundary. On CPUs without bf16 instructions both sides take the
// float32 path and agree exactly.
#include "test_util.h"

#include <cmath>
#include <vector>

#include "kiln/nn_ops.h"
#include "ops/onednn.h"

using namespace kiln;

namespace {

// Values of a few bf16 steps, deterministic (no two tests share them).
Tensor bf16_values(const Shape& shape, uint32_t seed) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  uint32_t state = seed;
  for (float& x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(static_cast<int32_t>(state >> 9) % 2001 - 1000) / 500.0f;
  }
  return cast(constant(v, shape), bfloat16);
}

// The float32 path's answer for the same bf16 inputs: widen, compute, round once.
template <class Op>
Tensor through_float32(Op op, const std::vector<Tensor>& bf16_inputs) {
  std::vector<Tensor> wide;
  for (const Tensor& t : bf16_inputs) wide.push_back(cast(t, float32));
  return cast(op(wide), bfloat16);
}

// Each element within one bf16 step of the reference (relative to the largest
// magnitude of the result, as a sum of mixed signs may cancel to near zero).
void expect_within_one_bf16_step(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), bfloat16);
  ASSERT_EQ(got.shape(), want.shape());
  std::vector<float> g = cast(got, float32).to_vector<float>(), w = cast(want, float32).to_vector<float>();
  float scale = 0;
  for (float x : w) scale = std::max(scale, std::fabs(x));
  int differing = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    EXPECT_NEAR(g[i], w[i], std::ldexp(std::max(std::fabs(w[i]), scale / 64), -8)) << "element " << i;
    differing += g[i] != w[i];
  }
  // Rounding flips are rare; a kernel reading the wrong memory differs nearly everywhere.
  EXPECT_LE(differing, static_cast<int>(g.size() / 8 + 1));
}

}  // namespace

TEST(Bf16Kernels, MatMulMatchesTheFloat32Path) {
  struct Case {
    Shape a, b;
    bool ta, tb;
  };
  for (const Case& c : {Case{{64, 96}, {96, 48}, false, false}, Case{{33, 17}, {29, 17}, false, true},
                        Case{{40, 8}, {40, 24}, true, false}, Case{{3, 16, 32}, {32, 8}, false, false},
                        Case{{2, 5, 12}, {2, 12, 7}, false, false}, Case{{2, 128, 784}, {784, 64}, false, false}}) {
    SCOPED_TRACE(c.a.to_string() + " x " + c.b.to_string());
    const Tensor a = bf16_values(c.a, 1), b = bf16_values(c.b, 2);
    const Tensor got = matmul(a, b, c.ta, c.tb);
    const Tensor want =
        through_float32([&](const std::vector<Tensor>& w) { return matmul(w[0], w[1], c.ta, c.tb); }, {a, b});
    expect_within_one_bf16_step(got, want);
  }
}

TEST(Bf16Kernels, Conv2DAndItsBackpropsMatchTheFloat32Path) {
  struct Case {
    Shape x, f;
    int64_t stride;
    const char* padding;
  };
  for (const Case& c : {Case{{2, 28, 28, 1}, {3, 3, 1, 32}, 1, "VALID"},
                        Case{{2, 13, 13, 32}, {3, 3, 32, 64}, 1, "VALID"},
                        Case{{1, 9, 7, 8}, {3, 2, 8, 16}, 2, "SAME"}}) {
    SCOPED_TRACE(c.x.to_string() + " * " + c.f.to_string());
    const Tensor x = bf16_values(c.x, 3), f = bf16_values(c.f, 4);
    auto forward = [&](const std::vector<Tensor>& w) { return nn::conv2d(w[0], w[1], c.stride, c.padding); };
    const Tensor y = forward({x, f});
    expect_within_one_bf16_step(y, through_float32(forward, {x, f}));
    // The backprops, through the gradient of sum(y * dy).
    const Tensor dy = bf16_values(y.shape(), 5);
    auto grads = [&](const std::vector<Tensor>& w) {
      GradientTape tape;
      Tensor wx = w[0], wf = w[1];
      tape.watch(wx);
      tape.watch(wf);
      Tensor out = forward({wx, wf});
      return tape.gradient(sum(multiply(out, w[2])), {wx, wf});
    };
    const std::vector<Tensor> got = grads({x, f, dy});
    std::vector<Tensor> wide{cast(x, float32), cast(f, float32), cast(dy, float32)};
    const std::vector<Tensor> want = grads(wide);
    expect_within_one_bf16_step(got[0], cast(want[0], bfloat16));
    expect_within_one_bf16_step(got[1], cast(want[1], bfloat16));
  }
}

TEST(Bf16Kernels, AvailabilityFollowsTheCpu) {
  // What mixed_bfloat16's warning reports; the kernels above ran natively only when true.
  const bool available = ops::onednn::bf16_kernels();
  EXPECT_EQ(available, ops::onednn::bf16_kernels());  // decided once
  if (!available) GTEST_SKIP() << "no AVX512_BF16/AMX here: bfloat16 took the float32 path";
}
