// Without ONNX in the build, kiln::onnx says why and how to get it; with it,
// tests/onnx/ runs instead.
#include "test_util.h"

#include "kiln/onnx.h"

using namespace kiln;
using kiln::testing::expect_error;

TEST(OnnxUnavailable, ExportSaysWhy) {
#ifndef KILN_WITHOUT_ONNX
  GTEST_SKIP() << "built with ONNX: tests/onnx/ covers kiln::onnx";
#else
  auto f = kiln::function([](const Tensor& x) { return x + 1.f; });
  f(constant({1.f}));
  expect_error<Unimplemented>([&] { onnx::export_(f, "/tmp/never.onnx"); },
                              {"built without ONNX support", "libonnx-dev"});
#endif
}
