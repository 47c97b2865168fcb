#pragma once
// Small helpers shared by the complex ops (complex_ops.cpp) and the FFT ops
// (fft_ops.cpp).
#include <complex>

#include "kiln/dtype.h"

namespace kiln::ops {

// complex64 for float32 parts, complex128 for float64 ones.
inline DType complex_of(DType real) { return real == DType::Float64 ? DType::Complex128 : DType::Complex64; }

// Calls f.template operator()<R>() with R the real type of a complex64
// (float) or complex128 (double) dtype.
template <class F> void visit_complex(DType d, F&& f) {
  if (d == DType::Complex64) f.template operator()<float>();
  else f.template operator()<double>();
}

}  // namespace kiln::ops
