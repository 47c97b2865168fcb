// SumToShapeOf, the reduction of a broadcast gradient: a bias gradient
// (every row into one output row) is split by columns between the threads
// and keeps the serial loop's bits.
#include "test_util.h"

#include "core/tensor_impl.h"
#include "ops/grad_util.h"

using namespace kiln;

namespace {

// Each output element as the serial loop adds it: rows in order, from 0.
template <class T>
std::vector<T> serial_column_sums(const Tensor& g, int64_t cols) {
  const T* p = core::data_of<T>(g);
  std::vector<T> out(static_cast<std::size_t>(cols), T(0));
  for (int64_t r = 0; r < g.size() / cols; ++r)
    for (int64_t c = 0; c < cols; ++c) out[static_cast<std::size_t>(c)] += p[r * cols + c];
  return out;
}

}  // namespace

TEST(SumToShapeOf, BiasGradientsHaveTheSerialSumsBits) {
  // The MNIST step's bias gradients (conv1, conv2, dense1), one below the
  // parallel grain, one too narrow to split, and float64.
  const std::vector<std::pair<Shape, DType>> cases = {
      {Shape{50, 28, 28, 32}, DType::Float32}, {Shape{50, 14, 14, 64}, DType::Float32},
      {Shape{50, 1024}, DType::Float32},       {Shape{30, 32}, DType::Float32},
      {Shape{5000, 17}, DType::Float32},       {Shape{3000, 48}, DType::Float64}};
  for (const auto& [shape, dtype] : cases) {
    SCOPED_TRACE(shape.to_string());
    const int64_t cols = shape[shape.rank() - 1];
    Tensor g = random::normal(shape, 0, 1, dtype, 3);
    Tensor sum = ops::sum_to_shape_of(g, zeros(Shape{cols}, dtype));
    ASSERT_EQ(sum.shape(), Shape{cols});
    if (dtype == DType::Float32)
      EXPECT_TRUE(core::same_bits(sum, constant(serial_column_sums<float>(g, cols))));
    else
      EXPECT_TRUE(core::same_bits(sum, constant(serial_column_sums<double>(g, cols))));
  }
}
