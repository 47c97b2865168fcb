// Keras' Orthogonal initializer (Saxe et al., 2014), the recurrent kernels' default.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kiln/error.h"
#include "kiln/init_scope.h"
#include "kiln/math.h"
#include "kiln/nn/recurrent.h"
#include "kiln/random.h"

namespace kiln::nn {

namespace {

// The Q of the thin QR decomposition of the column-major [rows, cols] matrix
// `a` (rows >= cols) with R's diagonal positive, in place: modified
// Gram-Schmidt in double, each column orthogonalized twice ("twice is
// enough", Giraud et al. 2005) so Q stays orthonormal to rounding. The sign
// rule makes it Keras' `q * sign(diag(r))` of a Householder QR.
void orthonormalize_columns(std::vector<double>& a, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) {
    double* v = &a[j * rows];
    for (int pass = 0; pass < 2; ++pass) {
      for (int64_t k = 0; k < j; ++k) {
        const double* q = &a[k * rows];
        double dot = 0;
        for (int64_t i = 0; i < rows; ++i) dot += q[i] * v[i];
        for (int64_t i = 0; i < rows; ++i) v[i] -= dot * q[i];
      }
    }
    double norm = 0;
    for (int64_t i = 0; i < rows; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    if (norm == 0) throw Internal("orthogonal: the normal draw has dependent columns");
    for (int64_t i = 0; i < rows; ++i) v[i] /= norm;
  }
}

}  // namespace

Tensor orthogonal(const Shape& shape, std::optional<uint64_t> seed, double gain, DType dtype) {
  if (!shape.is_fully_defined() || shape.rank() < 2)
    throw InvalidArgument(fmt::format(
        "orthogonal: the shape must be fully defined and of rank 2 or more, got {}", shape.to_string()));
  if (!is_floating(dtype))
    throw InvalidArgument(fmt::format("orthogonal: the dtype must be float32 or float64, got {}", dtype_name(dtype)));
  InitScope eager;  // the values are computed on the host, now
  const int64_t cols = shape[shape.rank() - 1];
  const int64_t rows = shape.num_elements() / std::max<int64_t>(cols, 1);
  if (rows * cols == 0) return zeros(shape, dtype);
  const int64_t tall = std::max(rows, cols), thin = std::min(rows, cols);
  // Keras draws the [tall, thin] matrix row-major and orthonormalizes its columns.
  Tensor draw = seed ? random::stateless_normal(Shape{tall, thin}, *seed, 0.0, 1.0, DType::Float64)
                     : random::normal(Shape{tall, thin}, 0.0, 1.0, DType::Float64);
  const double* values = draw.data<double>();
  std::vector<double> a(tall * thin);  // column-major
  for (int64_t i = 0; i < tall; ++i)
    for (int64_t j = 0; j < thin; ++j) a[j * tall + i] = values[i * thin + j];
  orthonormalize_columns(a, tall, thin);
  // Row-major [rows, cols]: Q itself when rows >= cols, else Q transposed.
  std::vector<double> out(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      out[i * cols + j] = gain * (rows >= cols ? a[j * tall + i] : a[i * tall + j]);
  return constant(out, shape, dtype);
}

}  // namespace kiln::nn
