#pragma once
// Shared by the kernel tests (gemv, MatMul's padded b, the fused passes'):
// random operands, bitwise comparison, a scoped OpenMP thread count and a
// scoped MatMul padding mode.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstring>
#include <random>
#include <vector>

#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"

namespace kiln::testing {

inline std::vector<float> uniform(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

inline void expect_same_bits(const std::vector<float>& want, const float* got) {
  for (std::size_t j = 0; j < want.size(); ++j)
    ASSERT_EQ(std::memcmp(&want[j], &got[j], sizeof(float)), 0) << "element " << j << ": " << want[j] << " vs " << got[j];
}

// Restores the OpenMP thread count a test changes.
struct ThreadCount {
  int saved = omp_get_max_threads();
  explicit ThreadCount(int n) { omp_set_num_threads(n); }
  ~ThreadCount() { omp_set_num_threads(saved); }
};

// Sets MatMul's padding of b for a test (ops/nn_internal.h) and restores its
// rule after it, on failure too.
struct MatmulPaddingMode {
  explicit MatmulPaddingMode(ops::MatmulBPadding mode) { ops::set_matmul_b_padding(mode); }
  ~MatmulPaddingMode() { ops::set_matmul_b_padding(ops::MatmulBPadding::kByRule); }
  MatmulPaddingMode(const MatmulPaddingMode&) = delete;
  MatmulPaddingMode& operator=(const MatmulPaddingMode&) = delete;
};

}  // namespace kiln::testing
