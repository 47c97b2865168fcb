#pragma once
// complex64 / complex128 parts (TF's tf.complex, tf.math.real, imag, conj,
// angle, and abs of a complex tensor).
#include "kiln/tensor.h"

namespace kiln {

// real + i * imag: float32 parts give complex64, float64 complex128; the
// parts broadcast.
Tensor complex(Tensor real, Tensor imag, SourceLocation loc = SourceLocation::current());
// The real and imaginary parts (float32 of complex64, float64 of complex128).
// A real tensor is its own real part, and has zeros for imaginary part.
Tensor real(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor imag(Tensor x, SourceLocation loc = SourceLocation::current());
// The complex conjugate; a real tensor is its own.
Tensor conj(Tensor x, SourceLocation loc = SourceLocation::current());
// |x| (hypot of the parts) and arg(x) (atan2(imag, real)) of a complex tensor.
Tensor complex_abs(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor angle(Tensor x, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
