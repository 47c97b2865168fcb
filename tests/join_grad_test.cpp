// Gradients of Concat and Tile with sizes known only when the graph runs
// (docs/design-notes.md, "Autodiff"): traced with an unknown batch dim they give the eager values
// and finite differences, through the SplitLike and TileGrad ops.
#include "test_util.h"

#include "grad_check.h"
#include "op_test_util.h"
#include "kiln/gradient.h"
#include "ops/grad_util.h"

using namespace kiln;
using kiln::testing::check_op_gradient;
using kiln::testing::check_op_gradient_traces;
using kiln::testing::expect_error;
using kiln::testing::infer1;
using kiln::testing::random_tensor;

namespace {

// A loss over a concat along the batch axis and a tile of x (batch unknown
// when traced): copies are weighted by position so a misplaced part shows.
Tensor loss_of(const Tensor& x) {
  Tensor one = ones_like(x);
  Tensor c = concat({x, sin(x), x * x}, 0);  // [3b, 3]
  Tensor wc = concat({one, 2.0 * one, 3.0 * one}, 0) * constant({1.0, 10.0, 100.0});
  Tensor t = tile(x, {2, 3});  // [2b, 9]
  Tensor wt = tile(concat({one, 2.0 * one}, 0), {1, 3}) * range(1.0, 10.0, 1.0);
  return sum(square(c) * wc) + sum(t * t * t * wt);
}

Tensor gradient_of(const Tensor& x) {
  GradientTape tape;
  tape.watch(x);
  return tape.gradient(loss_of(x), x);
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

}  // namespace

TEST(JoinGrad, ConcatAndTileInAFunctionWithAnUnknownBatchDim) {
  auto traced = function([](const Tensor& x) { return gradient_of(x); },
                         {.input_signature = std::vector{TensorSpec({None, 3}, DType::Float64)}});
  auto loss = function([](const Tensor& x) { return loss_of(x); },
                       {.input_signature = std::vector{TensorSpec({None, 3}, DType::Float64)}});
  for (int64_t batch : {2, 1, 4}) {
    SCOPED_TRACE(fmt::format("batch {}", batch));
    Tensor x = random_tensor(Shape{batch, 3}, static_cast<uint32_t>(batch));
    Tensor eager = gradient_of(x), got = traced(x);
    ASSERT_EQ(got.shape(), x.shape());
    std::vector<double> e = values(eager), g = values(got), base = values(x);
    for (std::size_t k = 0; k < e.size(); ++k) EXPECT_NEAR(g[k], e[k], 1e-6 * std::max(1.0, std::abs(e[k])));
    // Central finite differences of the traced loss.
    const double h = 1e-6;
    for (std::size_t k = 0; k < base.size(); ++k) {
      std::vector<double> v = base;
      v[k] += h;
      double plus = loss(constant(v, x.shape(), DType::Float64)).item<double>();
      v[k] -= 2 * h;
      double minus = loss(constant(v, x.shape(), DType::Float64)).item<double>();
      double numeric = (plus - minus) / (2 * h);
      EXPECT_NEAR(g[k], numeric, 1e-5 * std::max(1.0, std::abs(numeric))) << "element " << k;
    }
  }
  EXPECT_EQ(traced.tracing_count(), 1);
}

TEST(JoinGrad, GradientsTraceWithEveryDimUnknown) {
  // Random upstream gradients; every dim of inputs and dy unknown at trace time.
  check_op_gradient_traces("Concat", {random_tensor(Shape{1, 2}, 1), random_tensor(Shape{2, 2}, 2)},
                           {{"axis", int64_t(0)}}, 1e-12);
  check_op_gradient_traces("Concat",
                           {random_tensor(Shape{2, 1}, 3), random_tensor(Shape{2, 3}, 4), random_tensor(Shape{2, 0}, 5)},
                           {{"axis", int64_t(-1)}}, 1e-12);
  check_op_gradient_traces("Tile", {random_tensor(Shape{2, 3}, 6)}, {{"multiples", std::vector<int64_t>{3, 2}}}, 1e-12);
  check_op_gradient_traces("Tile", {random_tensor(Shape{2, 1, 2}, 7)},
                           {{"multiples", std::vector<int64_t>{1, 4, 0}}}, 1e-12);
  check_op_gradient_traces("Tile", {random_tensor(Shape{}, 8)}, {{"multiples", std::vector<int64_t>{}}}, 1e-12);
  check_op_gradient_traces("SplitLike",
                           {random_tensor(Shape{2, 5}, 9), random_tensor(Shape{2, 2}, 10), random_tensor(Shape{2, 3}, 11)},
                           {{"axis", int64_t(1)}}, 1e-12);
  check_op_gradient_traces("TileGrad", {random_tensor(Shape{4, 3}, 12), random_tensor(Shape{2, 1}, 13)},
                           {{"multiples", std::vector<int64_t>{2, 3}}}, 1e-12);
}

TEST(JoinGrad, TileGradMatchesFiniteDifferencesOnThreeDims) {
  check_op_gradient("TileGrad", {random_tensor(Shape{4, 3, 4}, 1), random_tensor(Shape{2, 3, 2}, 2)},
                    {{"multiples", std::vector<int64_t>{2, 1, 2}}});
  check_op_gradient("SplitLike",
                    {random_tensor(Shape{2, 3, 2}, 3), random_tensor(Shape{2, 1, 2}, 4), random_tensor(Shape{2, 2, 2}, 5)},
                    {{"axis", int64_t(1)}});
}

TEST(JoinGrad, SplitLikeInference) {
  const DType f = DType::Float32;
  const detail::OpDef& op = schema::OpRegistry::global().get("SplitLike");
  std::vector<schema::TensorType> in{{f, {None, 5}}, {f, {None, 2}}, {f, Shape::unknown_rank()}};
  schema::Attrs a{{"axis", int64_t(1)}};
  schema::InferContext ic(op, std::span<const schema::TensorType>(in), a);
  op.infer(ic);
  ASSERT_EQ(ic.outputs().size(), 2u);
  EXPECT_EQ(ic.outputs()[0].shape, (Shape{None, 2}));
  EXPECT_EQ(ic.outputs()[1].shape, (Shape{None, None}));
  expect_error<InvalidArgument>(
      [] { (void)ops::split_like(zeros({2, 5}), std::vector{zeros({2, 2}), zeros({2, 2})}, 1); },
      {"SplitLike", "add up to 4", "(2, 5)"});
  expect_error<InvalidArgument>(
      [] { (void)ops::split_like(zeros({2, 5}), std::vector{zeros({2, 4})}, 0); },
      {"SplitLike", "dims other than axis 0 must match"});
}

TEST(JoinGrad, TileGradInference) {
  const DType f = DType::Float32;
  schema::Attrs m{{"multiples", std::vector<int64_t>{2, 3}}};
  EXPECT_EQ(infer1("TileGrad", {{f, {4, None}}, {f, {None, None}}}, m).shape, (Shape{2, None}));
  EXPECT_EQ(infer1("TileGrad", {{f, {4, 6}}, {f, Shape::unknown_rank()}}, m).shape, (Shape{2, 2}));
  expect_error<InvalidArgument>([&] { infer1("TileGrad", {{f, {5, 6}}, {f, {2, 2}}}, m); },
                                {"TileGrad", "does not match", "[2, 3]"});
  expect_error<InvalidArgument>([&] { infer1("TileGrad", {{f, {5, 6}}, {f, {None, 2}}}, m); },
                                {"TileGrad", "not a multiple of 2"});
  expect_error<InvalidArgument>([&] { infer1("TileGrad", {{DType::Int32, {4, 6}}, {DType::Int32, {2, 2}}}, m); },
                                {"TileGrad", "float32 or float64"});
}
