// Gradients through kiln::TensorArray (docs/design-notes.md, "Autodiff"): GradientTape through
// writes, scatters, unstacks, reads, gathers, stacks and concats, eagerly and
// inside kiln::function (the same values), overwritten elements, growing
// arrays, and the row ops the gradients are made of.
#include "test_util.h"

#include "grad_check.h"
#include "core/tensor_impl.h"
#include "kiln/gradient.h"
#include "kiln/tensor_array.h"

using namespace kiln;
using kiln::testing::check_op_gradient;
using kiln::testing::check_op_gradient_traces;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

namespace {

// Runs `body(tape, xs)` -> gradients eagerly and inside a kiln::function and
// checks both give `want` (one expected vector per gradient, shapes like xs).
template <class Body>
void expect_grads_eager_and_traced(const std::vector<Tensor>& xs, Body body,
                                   const std::vector<std::vector<float>>& want) {
  auto run = [&](const std::vector<Tensor>& in) {
    GradientTape tape;
    for (const Tensor& x : in) tape.watch(x);
    return body(tape, in);
  };
  std::vector<Tensor> eager = run(xs);
  auto traced_fn = function([&](const std::vector<Tensor>& in) { return run(in); });
  std::vector<Tensor> traced = traced_fn(xs);
  ASSERT_EQ(eager.size(), want.size());
  ASSERT_EQ(traced.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(fmt::format("gradient {}", i));
    ASSERT_TRUE(eager[i].defined());
    expect_tensor_near<float>(eager[i], xs[i].shape(), want[i], 1e-6f);
    expect_tensor_near<float>(traced[i], xs[i].shape(), want[i], 1e-6f);
  }
}

}  // namespace

TEST(TensorArrayGrad, WriteThenStack) {
  // loss = sum(w * stack([x0, 2 x1, x0 * x1]))
  Tensor x0 = constant({1.f, 2.f}), x1 = constant({3.f, -1.f});
  Tensor w = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  expect_grads_eager_and_traced(
      {x0, x1},
      [&](GradientTape& tape, const std::vector<Tensor>& x) {
        TensorArray a = TensorArray(DType::Float32, 3).write(0, x[0]).write(1, x[1] * 2.f).write(2, x[0] * x[1]);
        return tape.gradient(sum(a.stack() * w), {x[0], x[1]});
      },
      // d/dx0 = w0 + w2 * x1; d/dx1 = 2 w1 + w2 * x0
      {{1 + 5 * 3.f, 2 + 6 * -1.f}, {2 * 3 + 5 * 1.f, 2 * 4 + 6 * 2.f}});
}

TEST(TensorArrayGrad, UnstackThenRead) {
  // Element 0 read twice (its gradients add), element 1 never, element 2 scaled.
  Tensor x = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  expect_grads_eager_and_traced(
      {x},
      [&](GradientTape& tape, const std::vector<Tensor>& in) {
        TensorArray a = TensorArray(DType::Float32, 3).unstack(in[0]);
        Tensor y = sum(a.read(0) + a.read(constant(int64_t(0))) * a.read(0) + a.read(2) * 3.f);
        return tape.gradient(y, {in[0]});
      },
      // d/d row0 = 1 + 2 row0
      {{3, 5, 0, 0, 3, 3}});
}

TEST(TensorArrayGrad, TheIssuesReadsAndWrites) {
  // Issue 5: "gradients through TensorArray reads/writes" — a value read
  // back, transformed and written to the next element, then everything read.
  Tensor x = constant(2.f);
  expect_grads_eager_and_traced(
      {x},
      [&](GradientTape& tape, const std::vector<Tensor>& in) {
        TensorArray a = TensorArray(DType::Float32, 3).write(0, in[0]);
        a = a.write(1, a.read(0) * a.read(0));  // x^2
        a = a.write(2, a.read(1) * a.read(0));  // x^3
        Tensor y = a.read(0) + a.read(1) + a.read(2);
        return tape.gradient(y, {in[0]});
      },
      {{1 + 2 * 2.f + 3 * 4.f}});
}

TEST(TensorArrayGrad, OverwrittenValuesGetZeroGradient) {
  Tensor a = constant({1.f, 1.f}), b = constant({2.f, 3.f});
  expect_grads_eager_and_traced(
      {a, b},
      [&](GradientTape& tape, const std::vector<Tensor>& x) {
        TensorArray t = TensorArray(DType::Float32, 2).write(0, x[0]).write(1, x[0]).write(0, x[1] * x[1]);
        return tape.gradient(sum(t.stack()), {x[0], x[1]});
      },
      // a survives only in element 1; b^2 replaced a in element 0.
      {{1, 1}, {4, 6}});
}

TEST(TensorArrayGrad, ScatterWithARepeatedIndexThenGather) {
  // Scatter writes rows in order, so values row 0 is overwritten by row 2;
  // gather reads element 1 twice, so its gradients add.
  Tensor v = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}});
  expect_grads_eager_and_traced(
      {v},
      [&](GradientTape& tape, const std::vector<Tensor>& x) {
        TensorArray t = TensorArray(DType::Float32, 3).scatter(constant({1, 0, 1}), x[0]);
        Tensor g = t.gather(constant({{1, 0}, {1, 1}}));  // [2, 2, 2]
        Tensor w = constant({{{1.f, 2.f}, {3.f, 4.f}}, {{5.f, 6.f}, {7.f, 8.f}}});
        return tape.gradient(sum(g * w), {x[0]});
      },
      {{0, 0, 3, 4, 1 + 5 + 7.f, 2 + 6 + 8.f}});
}

TEST(TensorArrayGrad, ConcatOfAGrowingArray) {
  // A dynamic array grows past its capacity; concat joins the elements.
  Tensor x = constant({{1.f, 2.f}, {3.f, 4.f}});
  expect_grads_eager_and_traced(
      {x},
      [&](GradientTape& tape, const std::vector<Tensor>& in) {
        TensorArray t(DType::Float32, 1, {.dynamic_size = true});
        t = t.write(0, in[0]).write(2, in[0] * 2.f).write(1, in[0] * in[0]);
        Tensor c = t.concat();  // [6, 2]
        Tensor w = reshape(range(12.f), Shape{6, 2});
        return tape.gradient(sum(c * w), {in[0]});
      },
      // w rows 0-1 for x, rows 2-3 times 2 x, rows 4-5 times 2.
      {{0 + 2 * 1 * 4 + 2 * 8.f, 1 + 2 * 2 * 5 + 2 * 9.f, 2 + 2 * 3 * 6 + 2 * 10.f, 3 + 2 * 4 * 7 + 2 * 11.f}});
}

TEST(TensorArrayGrad, InPlaceWritesKeepTheRecordedGradient) {
  // Moved-from writes may run in place; those the tape holds must not.
  Tensor x = constant(3.f);
  GradientTape tape;
  tape.watch(x);
  TensorArray t(DType::Float32, 3, {.element_shape = Shape{}});
  t = std::move(t).write(0, constant(1.f));
  t = std::move(t).write(1, x * x);
  t = std::move(t).write(2, x);
  Tensor y = sum(t.stack() * constant({1.f, 10.f, 100.f}));
  expect_tensor<float>(y, Shape{}, {1 + 90 + 300.f});
  expect_tensor<float>(tape.gradient(y, x), Shape{}, {10 * 6 + 100.f});
}

TEST(TensorArrayGrad, IntegerArraysAndIndicesHaveNoGradient) {
  Tensor x = constant({1.f, 2.f});
  GradientTape tape(GradientTapeOptions{.persistent = true});
  tape.watch(x);
  TensorArray t = TensorArray(DType::Float32, 2).write(0, x).write(1, x);
  Tensor y = sum(t.stack());
  std::vector<Tensor> g = tape.gradient(y, {x, t.size()});
  expect_tensor<float>(g[0], Shape{2}, {2, 2});
  EXPECT_FALSE(g[1].defined());
}

// ---- the row ops the gradients are made of ------------------------------------

TEST(TensorArrayGrad, RowOpsMatchFiniteDifferences) {
  Tensor base = kiln::testing::random_tensor(Shape{2, 3}, 1);
  Tensor like = kiln::testing::random_tensor(Shape{4, 3}, 2);
  Tensor values = kiln::testing::random_tensor(Shape{3, 3}, 3);
  Tensor indices = constant({3, 0, 3});
  check_op_gradient("TensorArrayWriteRows", {base, like, indices, values});
  check_op_gradient("TensorArrayWriteRows", {zeros({0}, DType::Float64), like, values});
  check_op_gradient("TensorArrayWriteGrad", {like, base, indices, values});
  check_op_gradient("TensorArrayWriteGrad", {like, zeros({0}, DType::Float64), constant(int64_t(1)),
                                             kiln::testing::random_tensor(Shape{3}, 4)});
  check_op_gradient_traces("TensorArrayWriteRows", {base, like, indices, values});
  check_op_gradient_traces("TensorArrayWriteGrad", {like, base, values});
}

TEST(TensorArrayGrad, TheForwardOpsMatchFiniteDifferences) {
  Tensor buffer = kiln::testing::random_tensor(Shape{4, 2}, 5);
  Tensor mask = constant({1, 1, 1, 0}, DType::UInt8);
  Tensor size = constant(3);
  schema::Attrs write{{"dynamic", true}, {"element_shape", Shape::unknown_rank()}};
  check_op_gradient("TensorArrayWrite", {buffer, mask, size, constant(6), kiln::testing::random_tensor(Shape{2}, 6)},
                    write);
  check_op_gradient("TensorArrayScatter",
                    {buffer, mask, size, constant({2, 0, 2}), kiln::testing::random_tensor(Shape{3, 2}, 7)}, write);
  check_op_gradient("TensorArrayUnstack", {buffer, mask, size, kiln::testing::random_tensor(Shape{2, 2}, 8)}, write);
  check_op_gradient("TensorArrayGather", {buffer, mask, size, constant({2, 0, 2})}, schema::Attrs{{"clear", false}});
  check_op_gradient("TensorArrayConcat", {buffer, mask, size});
  check_op_gradient_traces("TensorArrayScatter",
                           {buffer, mask, size, constant({2, 0, 2}), kiln::testing::random_tensor(Shape{3, 2}, 7)},
                           write);
  check_op_gradient_traces("TensorArrayStack", {buffer, mask, size});
}

TEST(TensorArrayGrad, WriteGradOverItsOwnUpstreamGradient) {
  // In a backward loop the upstream buffer gradient is held by no one else:
  // d_base is written over it, after the value rows are read from it.
  std::vector<Tensor> in{constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), zeros({3, 2}), constant({1, 2, 1}),
                         zeros({3, 2})};
  const void* storage = core::raw_data(in[0]);
  runtime::TensorList out =
      runtime::run_eager(schema::OpRegistry::global().get("TensorArrayWriteGrad"), std::move(in), {});
  EXPECT_EQ(core::raw_data(out[0]), storage);
  expect_tensor<float>(out[0], Shape{3, 2}, {1, 2, 0, 0, 0, 0});
  expect_tensor<float>(out[1], Shape{3, 2}, {0, 0, 5, 6, 3, 4});
}

TEST(TensorArrayGrad, RowOpErrorsNameTheProblem) {
  Tensor like = zeros({2, 2});
  expect_error<InvalidArgument>(
      [&] { runtime::run_eager(schema::OpRegistry::global().get("TensorArrayWriteRows"),
                               std::vector<Tensor>{zeros({0}), like, constant({2}), zeros({1, 2})}, {}); },
      {"TensorArrayWriteRows", "row 2 is out of range for 2 rows"});
  expect_error<InvalidArgument>(
      [&] { runtime::run_eager(schema::OpRegistry::global().get("TensorArrayWriteGrad"),
                               std::vector<Tensor>{like, zeros({0}), zeros({3})}, {}); },
      {"TensorArrayWriteGrad", "values of shape (3,) do not split into rows of 2 elements"});
  expect_error<InvalidArgument>(
      [&] { runtime::run_eager(schema::OpRegistry::global().get("TensorArrayWriteGrad"),
                               std::vector<Tensor>{like, zeros({0}, DType::Float64), zeros({2})}, {}); },
      {"TensorArrayWriteGrad", "input 1 has dtype float64 but input 0 has dtype float32"});
}

// ---- through a traced while loop --------------------------------------------------

namespace {

// The seed's dynamic_rnn ([batch, time, features] in, every step's state
// out), with the cell as a parameter. The array declares its element shape:
// the While gradient stacks each iteration's loop variables, so their shapes
// must not change from one iteration to the next (an array without one
// enters the loop unshaped, [0], and leaves it [time, batch, features]).
template <class Cell> Tensor dynamic_rnn(const Tensor& input_data, const Tensor& initial_state, Cell cell) {
  Tensor x = transpose(input_data, {1, 0, 2});
  int64_t max_seq_len = x.shape()[0];
  TensorArray states(DType::Float32, max_seq_len, {.element_shape = initial_state.shape()});
  auto [state, all] = kiln::for_range(
      0, max_seq_len, 1, std::tuple<Tensor, TensorArray>{initial_state, states},
      [&](const Tensor& i, const Tensor& s, const TensorArray& written) {
        Tensor next = cell(gather(x, i), s);
        return std::tuple<Tensor, TensorArray>{next, written.write(i, next)};
      });
  return transpose(all.stack(), {1, 0, 2});
}

// d(sum(w * dynamic_rnn(x, s0)))/d(x, s0), eagerly (a C++ loop) and traced (a
// While op and its gradient); both must agree.
template <class Cell>
std::vector<std::vector<Tensor>> rnn_gradients(const Tensor& x, const Tensor& s0, const Tensor& w, Cell cell) {
  auto grads = [&](const Tensor& in, const Tensor& init) {
    GradientTape tape;
    tape.watch(in);
    tape.watch(init);
    return tape.gradient(sum(dynamic_rnn(in, init, cell) * w), {in, init});
  };
  auto traced = function([&](const Tensor& in, const Tensor& init) { return grads(in, init); });
  std::vector<Tensor> t = traced(x, s0);
  EXPECT_EQ(traced.tracing_count(), 1);
  return {grads(x, s0), t};
}

}  // namespace

TEST(TensorArrayGrad, DynamicRnnSeedThroughATracedWhileLoop) {
  // The seed's cell, inp + state: state_t = s0 + x_0 + ... + x_t, so
  // d/dx_s = sum over t >= s of w_t and d/ds0 = sum over t of w_t.
  const int64_t batch = 2, time = 3, features = 2;
  Tensor x = reshape(range(12.f), Shape{batch, time, features}) * 0.1f;
  Tensor s0 = constant({{1.f, -1.f}, {0.5f, 2.f}});
  Tensor w = reshape(range(12.f), Shape{batch, time, features}) - 5.f;
  std::vector<float> wv = w.to_vector<float>(), want_x(12), want_s0(4);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < features; ++f)
      for (int64_t s = 0; s < time; ++s) {
        float tail = 0;
        for (int64_t t = s; t < time; ++t) tail += wv[static_cast<std::size_t>((b * time + t) * features + f)];
        want_x[static_cast<std::size_t>((b * time + s) * features + f)] = tail;
        if (s == 0) want_s0[static_cast<std::size_t>(b * features + f)] = tail;
      }
  auto both = rnn_gradients(x, s0, w, [](const Tensor& inp, const Tensor& state) { return inp + state; });
  for (const std::vector<Tensor>& g : both) {
    expect_tensor_near<float>(g[0], Shape{batch, time, features}, want_x, 1e-5f);
    expect_tensor_near<float>(g[1], Shape{batch, features}, want_s0, 1e-5f);
  }

  // A nonlinear cell: the traced gradient equals the eager one.
  auto tanh_both = rnn_gradients(x, s0, w, [](const Tensor& inp, const Tensor& state) { return tanh(inp + state * 0.5f); });
  for (int k = 0; k < 2; ++k)
    expect_tensor_near<float>(tanh_both[1][k], tanh_both[0][k].shape(), tanh_both[0][k].to_vector<float>(), 1e-5f);
}
