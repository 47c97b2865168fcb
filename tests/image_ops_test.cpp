// kiln::resize_image: the public C++ call, its errors, and the gradient op's
// checks of what a graph file could feed it. Values and gradients of every
// method are the registry's (ResizeImage's samples) and python/tests'.
#include "test_util.h"

#include "kiln/image_ops.h"
#include "schema/op_def.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

TEST(ImageOps, ResizeNearestKeepsIntegers) {
  Tensor x = constant(std::vector<int32_t>{1, 2, 3, 4, 5, 6}, Shape{1, 2, 3, 1});
  expect_tensor<int32_t>(resize_image(x, {4, 2}, "nearest"), {1, 4, 2, 1}, {1, 3, 1, 3, 4, 6, 4, 6});
}

TEST(ImageOps, ResizeBilinearHalfPixel) {
  // A 1x2 row to 1x4: sample points 0.25, 0.75 -> clamped 0 and 1/4 of the way.
  Tensor x = constant(std::vector<float>{0.f, 4.f}, Shape{1, 1, 2, 1});
  expect_tensor_near<float>(resize_image(x, {1, 4}), {1, 1, 4, 1}, {0.f, 1.f, 3.f, 4.f});
}

TEST(ImageOps, ResizeRefusesBadArguments) {
  Tensor x = constant(std::vector<float>(12, 1.f), Shape{1, 2, 3, 2});
  expect_error<InvalidArgument>([&] { resize_image(x, {2, 2}, "cubic"); }, {"ResizeImage", "method", "cubic"});
  expect_error<InvalidArgument>([&] { resize_image(x, {2}); }, {"size must hold two"});
  expect_error<InvalidArgument>([&] { resize_image(reshape(x, {2, 3, 2}), {2, 2}); }, {"4-dimensional"});
  expect_error<InvalidArgument>([&] { resize_image(cast(x, DType::Int32), {2, 2}, "bilinear"); },
                                {"float32 or float64"});
}

TEST(ImageOps, GradientOpChecksWhatItIsFed) {
  const detail::OpDef& grad = schema::OpRegistry::global().get("ResizeImageGrad");
  schema::Attrs attrs{{"size", std::vector<int64_t>{2, 2}}, {"method", std::string("bilinear")}, {"antialias", false}};
  Tensor dy = constant(std::vector<float>(8, 1.f), Shape{1, 2, 2, 2});
  Tensor image = constant(std::vector<float>(27, 1.f), Shape{1, 3, 3, 3});
  const Tensor in[] = {dy, image};
  expect_error<InvalidArgument>([&] {
    schema::InferContext c(grad, in, attrs);
    grad.infer(c);
  }, {"same batch and channels"});
}
