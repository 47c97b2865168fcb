// Deterministic, non-repeating test values: scale * sin(freq * i + phase),
// so that layer weights and inputs differ element to element without a
// random generator (reference implementations read the same numbers).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace kiln::testing {

inline std::vector<double> wave(int64_t n, double freq, double phase, double scale = 1.0) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(freq * static_cast<double>(i) + phase);
  return v;
}

}  // namespace kiln::testing
