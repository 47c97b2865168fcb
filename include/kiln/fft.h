#pragma once
// Discrete Fourier transforms over the innermost 1, 2 or 3 axes (TF's
// tf.signal.fft, ifft, fft2d, ..., rfft, irfft, rfft2d, irfft2d). Leading
// axes are a batch. The forward transforms are unscaled, the inverses scale
// by 1 / (the product of the transformed lengths).
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// complex64 / complex128 in, the same out.
Tensor fft(const Tensor& x, SourceLocation loc = SourceLocation::current());
Tensor ifft(const Tensor& x, SourceLocation loc = SourceLocation::current());
Tensor fft2d(const Tensor& x, SourceLocation loc = SourceLocation::current());
Tensor ifft2d(const Tensor& x, SourceLocation loc = SourceLocation::current());
Tensor fft3d(const Tensor& x, SourceLocation loc = SourceLocation::current());
Tensor ifft3d(const Tensor& x, SourceLocation loc = SourceLocation::current());

// Real input (float32 -> complex64, float64 -> complex128): the non-negative
// frequencies of the last axis, fft_length[-1] / 2 + 1 of them. Each
// transformed axis of the input is cropped or zero-padded to fft_length;
// empty fft_length: the input's own (static) lengths.
Tensor rfft(const Tensor& x, std::vector<int64_t> fft_length = {}, SourceLocation loc = SourceLocation::current());
Tensor rfft2d(const Tensor& x, std::vector<int64_t> fft_length = {}, SourceLocation loc = SourceLocation::current());
Tensor rfft3d(const Tensor& x, std::vector<int64_t> fft_length = {}, SourceLocation loc = SourceLocation::current());
// The inverses: a Hermitian half spectrum in, real signals of fft_length out
// (the input cropped or zero-padded to fft_length, fft_length[-1] / 2 + 1 on
// the last axis; the imaginary parts of the zero and Nyquist bins are
// ignored). Empty fft_length: the input's lengths, 2 * (n - 1) on the last.
Tensor irfft(const Tensor& x, std::vector<int64_t> fft_length = {}, SourceLocation loc = SourceLocation::current());
Tensor irfft2d(const Tensor& x, std::vector<int64_t> fft_length = {}, SourceLocation loc = SourceLocation::current());
Tensor irfft3d(const Tensor& x, std::vector<int64_t> fft_length = {}, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
