// The composites of src/ops/norms.cpp from C++ (Python checks them against
// NumPy in python/tests/test_norms.py): values, the null-tensor and
// non-finite rules, and their use inside a traced function.
#include "test_util.h"

#include <cmath>
#include <limits>

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

TEST(Norms, LogsumexpMomentsAndL2Normalize) {
  Tensor x = constant({{1.0, 3.0}, {2.0, 2.0}});
  expect_tensor<double>(reduce_logsumexp(x, 1), {2}, {3.0 + std::log1p(std::exp(-2.0)), 2.0 + std::log(2.0)});
  EXPECT_NEAR(reduce_logsumexp(constant({1000.f, 1000.f})).item<float>(), 1000.f + std::log(2.f), 1e-4);
  auto [mean, variance] = moments(x, 0);
  expect_tensor<double>(mean, {2}, {1.5, 2.5});
  expect_tensor<double>(variance, {2}, {0.25, 0.25});
  for (const Tensor& unit : {l2_normalize(constant({3.0, 4.0})), clip_by_norm(constant({3.0, 4.0}), 1.0)}) {
    std::vector<double> v = unit.to_vector<double>();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_NEAR(v[0], 0.6, 1e-15);
    EXPECT_NEAR(v[1], 0.8, 1e-15);
  }
}

TEST(Norms, ClipByGlobalNormSkipsNullsAndPropagatesNonFinite) {
  auto [clipped, norm] = clip_by_global_norm({constant({3.f}), Tensor(), constant({4.f})}, 1.0);
  expect_tensor<float>(norm, {}, {5.f});
  EXPECT_FALSE(clipped[1].defined());
  EXPECT_NEAR(clipped[0].to_vector<float>()[0], 0.6f, 1e-7);
  auto [bad, inf_norm] = clip_by_global_norm({constant({std::numeric_limits<float>::infinity()})}, 1.0);
  EXPECT_TRUE(std::isnan(bad[0].item<float>()));
  expect_error<InvalidArgument>([] { global_norm({Tensor()}); }, {"every tensor is null"});
  auto traced = kiln::function([](const Tensor& a, const Tensor& b) {
    return clip_by_global_norm({a, b}, 2.5).first;
  });
  std::vector<Tensor> out = traced(constant({3.f}), constant({4.f}));
  expect_tensor<float>(out[1], {1}, {2.f});
}
