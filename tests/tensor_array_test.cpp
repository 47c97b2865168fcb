// kiln::TensorArray (docs/design-notes.md, "Control flow and TensorArray"): value semantics eagerly, as a loop
// variable in traced loops, in-place writes, and its errors.
#include "test_util.h"

#include <set>

#include "core/tensor_impl.h"
#include "kiln/tensor_array.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

namespace {

// The storage the array's buffer lives in (to see whether a write copied).
const void* buffer_storage(const TensorArray& a) {
  detail::ResultFlattener f;
  detail::Traits<TensorArray>::flatten_result(a, f);
  return core::raw_data(f.leaves[0]);
}

// The seed's dynamic_rnn: [batch, time, features] in, every step's state out.
Tensor rnn_step(const Tensor& inp, const Tensor& state) { return inp + state; }

Tensor dynamic_rnn(const Tensor& input_data, const Tensor& initial_state) {
  Tensor x = transpose(input_data, {1, 0, 2});
  int64_t max_seq_len = x.shape()[0];
  TensorArray states(DType::Float32, max_seq_len);
  auto [state, all] = kiln::for_range(
      0, max_seq_len, 1, std::tuple<Tensor, TensorArray>{initial_state, states},
      [&](const Tensor& i, const Tensor& s, const TensorArray& written) {
        Tensor next = rnn_step(gather(x, i), s);
        return std::tuple<Tensor, TensorArray>{next, written.write(i, next)};
      });
  return transpose(all.stack(), {1, 0, 2});
}

}  // namespace

TEST(TensorArray, WriteReadStackWithValueSemantics) {
  TensorArray a(DType::Float32, 3);
  expect_tensor<int32_t>(a.size(), {}, {3});
  TensorArray b = a.write(0, constant({1.f, 2.f})).write(2, constant({5.f, 6.f}));
  TensorArray c = b.write(1, constant({3.f, 4.f}));
  expect_tensor<float>(c.stack(), {3, 2}, {1, 2, 3, 4, 5, 6});
  expect_tensor<float>(c.read(2), {2}, {5, 6});
  expect_tensor<float>(c.read(constant(int64_t(0))), {2}, {1, 2});
  // b did not change when c was written: its element 1 is unwritten, so zeros.
  expect_tensor<float>(b.read(1), {2}, {0, 0});
  // Overwriting is allowed; c keeps its value.
  TensorArray d = c.write(1, constant({9.f, 9.f}));
  expect_tensor<float>(d.read(1), {2}, {9, 9});
  expect_tensor<float>(c.read(1), {2}, {3, 4});
  EXPECT_EQ(c.dtype(), DType::Float32);
}

TEST(TensorArray, GatherScatterUnstackConcat) {
  TensorArray a = TensorArray(DType::Int32, 4).unstack(constant({{1, 2}, {3, 4}, {5, 6}, {7, 8}}));
  expect_tensor<int32_t>(a.gather(constant({3, 0})), {2, 2}, {7, 8, 1, 2});
  expect_tensor<int32_t>(a.concat(), {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  TensorArray b = a.scatter(constant({1, 2}), constant({{0, 0}, {-1, -1}}));
  expect_tensor<int32_t>(b.stack(), {4, 2}, {1, 2, 0, 0, -1, -1, 7, 8});
  expect_tensor<int32_t>(a.read(1), {2}, {3, 4});
  // unstack of fewer rows than the size leaves the rest unwritten.
  TensorArray c = TensorArray(DType::Int32, 3).unstack(constant({{1}, {2}}));
  expect_tensor<int32_t>(c.read(1), {1}, {2});
  // Its unwritten element stacks as zeros (TF2): the element shape is known.
  expect_tensor<int32_t>(c.stack(), {3, 1}, {1, 2, 0});
}

// TF2: stack() fills unwritten elements with zeros when the element shape is
// known (declared or from a write), eagerly and in a traced loop; with no
// element shape at all, or for an element cleared by a read, it fails.
TEST(TensorArray, StackFillsUnwrittenElementsWithZeros) {
  TensorArray a(DType::Float32, 4, {.element_shape = Shape{2}});
  expect_tensor<float>(a.stack(), {4, 2}, {0, 0, 0, 0, 0, 0, 0, 0});
  TensorArray b = a.write(2, constant({1.f, 2.f}));
  expect_tensor<float>(b.stack(), {4, 2}, {0, 0, 0, 0, 1, 2, 0, 0});
  expect_tensor<float>(b.concat(), {8}, {0, 0, 0, 0, 1, 2, 0, 0});
  // A dynamic array grown past unwritten rows.
  TensorArray g = TensorArray(DType::Float64, 0, {.dynamic_size = true}).write(3, constant(5.0));
  expect_tensor<double>(g.stack(), {4}, {0, 0, 0, 5});
  // Traced: a loop writing every other element.
  auto f = kiln::function([](const Tensor& n) {
    TensorArray ta(DType::Float32, n, {.element_shape = Shape{}});
    ta = for_range(0, n, 2, ta, [](const Tensor& i, const TensorArray& t) {
      return t.write(i, cast(i, DType::Float32) + 1.f);
    });
    return ta.stack();
  });
  expect_tensor<float>(f(constant(5)), {5}, {1, 0, 3, 0, 5});
  // No element shape and nothing written: an error that says what to do.
  expect_error<InvalidArgument>([] { (void)TensorArray(DType::Float32, 2).stack(); },
                                {"TensorArrayStack", "element 0", "element_shape"});
  TensorArray c(DType::Float32, 2, {.clear_after_read = true});
  c = c.write(0, constant(1.f)).write(1, constant(2.f));
  (void)c.read(1);
  expect_error<InvalidArgument>([&] { (void)c.stack(); }, {"TensorArrayStack", "element 1", "cleared"});
}

TEST(TensorArray, DynamicSizeGrows) {
  TensorArray a(DType::Float32, 0, {.dynamic_size = true});
  for (int i = 0; i < 10; ++i) a = std::move(a).write(i, constant(static_cast<float>(i * i)));
  expect_tensor<int32_t>(a.size(), {}, {10});
  expect_tensor<float>(a.stack(), {10}, {0, 1, 4, 9, 16, 25, 36, 49, 64, 81});
  // A write far past the end: size is the highest index + 1.
  TensorArray b = a.write(20, constant(1.f));
  expect_tensor<int32_t>(b.size(), {}, {21});
  expect_tensor<float>(b.read(15), {}, {0});  // unwritten: zeros
  expect_error<InvalidArgument>([&] { b.read(21); }, {"index 21 is out of range", "size 21"});
  expect_error<InvalidArgument>([&] { a.write(-1, constant(1.f)); }, {"TensorArrayWrite", "index -1 is out of range"});
}

TEST(TensorArray, ElementShapeGivenOrFromFirstWrite) {
  TensorArray a(DType::Float32, 2, {.element_shape = Shape{2}});
  // An empty array of a known element shape stacks to (0, 2).
  expect_tensor<float>(TensorArray(DType::Float32, 0, {.element_shape = Shape{2}}).stack(), {0, 2}, {});
  expect_error<InvalidArgument>([&] { a.write(0, constant({1.f, 2.f, 3.f})); },
                                {"TensorArrayWrite", "holds elements of shape (2,)", "a value of shape (3,)"});
  TensorArray b = TensorArray(DType::Float32, 2).write(0, constant({{1.f}, {2.f}}));
  expect_error<InvalidArgument>([&] { b.write(1, constant({1.f, 2.f})); },
                                {"holds elements of shape (2, 1)", "a value of shape (2,)"});
  // A None dim is taken from the first write.
  TensorArray c = TensorArray(DType::Float32, 2, {.element_shape = Shape{None, 1}}).write(1, constant({{4.f}}));
  expect_error<InvalidArgument>([&] { c.write(0, constant({{1.f, 2.f}})); },
                                {"holds elements of shape (None, 1)", "a value of shape (1, 2)"});
  expect_tensor<float>(c.read(1), {1, 1}, {4});
}

TEST(TensorArray, EagerErrors) {
  TensorArray a = TensorArray(DType::Float32, 2).write(0, constant(1.f));
  expect_error<InvalidArgument>([&] { a.write(2, constant(1.f)); },
                                {"TensorArrayWrite: index 2 is out of range for a TensorArray of size 2",
                                 "dynamic_size is off"});
  expect_error<InvalidArgument>([&] { a.read(-1); }, {"TensorArrayRead: index -1 is out of range", "size 2"});
  // An unwritten element reads as zeros once the element shape is known (TF2).
  expect_tensor<float>(a.read(1), {}, {0});
  expect_tensor<float>(a.gather(constant({1, 0})), {2}, {0, 1});
  expect_error<InvalidArgument>([&] { TensorArray(DType::Float32, 2).read(1); },
                                {"TensorArrayRead: element 1 of the TensorArray (size 2) has not been written",
                                 "declare the TensorArray's element_shape"});
  expect_tensor<float>(TensorArray(DType::Float32, 2, {.element_shape = Shape{2}}).read(1), {2}, {0, 0});
  expect_error<InvalidArgument>([&] { a.write(1, constant(1)); },
                                {"TensorArrayWrite", "holds float32 elements, got a int32 value"});
  expect_error<InvalidArgument>([&] { a.gather(constant({0, 5})); }, {"TensorArrayGather", "index 5 is out of range"});
  expect_error<InvalidArgument>([&] { a.scatter(constant({0, 1}), constant({1.f})); },
                                {"TensorArrayScatter", "2 indices but values of shape (1,)"});
  expect_error<InvalidArgument>([&] { a.unstack(constant({1.f, 2.f, 3.f})); },
                                {"TensorArrayUnstack: index 2 is out of range", "size 2"});
  expect_error<InvalidArgument>([&] { a.concat(); }, {"TensorArrayConcat", "rank >= 1", "scalars"});
  expect_error<InvalidArgument>([] { TensorArray(DType::Float32, -1); }, {"TensorArrayNew", "size must not be negative, got -1"});
}

TEST(TensorArray, ClearAfterRead) {
  TensorArray a = TensorArray(DType::Int32, 2, {.clear_after_read = true}).unstack(constant({7, 8}));
  TensorArray copy = a;
  expect_tensor<int32_t>(a.read(0), {}, {7});
  expect_error<InvalidArgument>([&] { a.read(0); }, {"element 0", "cleared by an earlier read", "clear_after_read"});
  expect_tensor<int32_t>(copy.read(0), {}, {7});  // the copy kept it
  expect_tensor<int32_t>(a.write(0, constant(1)).read(0), {}, {1});
}

TEST(TensorArray, MovedWriteIsInPlace) {
  TensorArray a(DType::Float32, 100, {.element_shape = Shape{16}});
  a = std::move(a).write(0, zeros({16}));
  const void* storage = buffer_storage(a);
  for (int i = 1; i < 100; ++i) a = std::move(a).write(i, fill({16}, static_cast<float>(i)));
  EXPECT_EQ(buffer_storage(a), storage);
  expect_tensor<float>(a.read(99), {16}, std::vector<float>(16, 99.f));
  // A copied array is copied on write: the copy keeps its values.
  TensorArray kept = a;
  TensorArray changed = a.write(5, zeros({16}));
  EXPECT_NE(buffer_storage(changed), buffer_storage(kept));
  expect_tensor<float>(kept.read(5), {16}, std::vector<float>(16, 5.f));
}

// A read of a row that starts on a 64-byte boundary views the buffer (a
// while_loop gradient's backward loop reads every stacked row); the array is
// then copied on write, so the row read keeps its values.
TEST(TensorArray, AReadViewsItsRowAndLaterWritesLeaveIt) {
  TensorArray a(DType::Float32, 3, {.element_shape = Shape{16}});  // rows of 64 bytes
  for (int i = 0; i < 3; ++i) a = std::move(a).write(i, fill({16}, static_cast<float>(i + 1)));
  Tensor row = a.read(1);
  EXPECT_EQ(core::raw_data(row), static_cast<const char*>(buffer_storage(a)) + 64);
  a = std::move(a).write(1, zeros({16}));
  expect_tensor<float>(row, {16}, std::vector<float>(16, 2.f));
  expect_tensor<float>(a.read(1), {16}, std::vector<float>(16, 0.f));
  // Rows off the boundary are copied.
  TensorArray odd(DType::Float32, 2, {.element_shape = Shape{3}});
  odd = odd.write(0, fill({3}, 1.f)).write(1, fill({3}, 2.f));
  EXPECT_NE(core::raw_data(odd.read(1)), static_cast<const char*>(buffer_storage(odd)) + 12);
  expect_tensor<float>(odd.read(1), {3}, std::vector<float>(3, 2.f));
}

TEST(TensorArray, TracedLoopWritesInPlace) {
  std::vector<const void*> seen;
  auto f = kiln::function([&](const Tensor& n) {
    TensorArray a(DType::Float32, n, {.element_shape = Shape{8}});
    return kiln::for_range(0, n, 1, a, [&](const Tensor& i, const TensorArray& arr) {
             TensorArray next = arr.write(i, fill({8}, 1.f) * cast(i, DType::Float32));
             detail::ResultFlattener leaves;
             detail::Traits<TensorArray>::flatten_result(next, leaves);
             host_function([&](const std::vector<Tensor>& in) {
               seen.push_back(core::raw_data(in[0]));
               return std::vector<Tensor>{};
             }, {leaves.leaves[0]}, {});
             return next;
           }).stack();
  });
  Tensor out = f(constant(50));
  ASSERT_EQ(seen.size(), 50u);
  // The first write copies the array the loop started with; then the body
  // holds the only handle and every write lands in the same storage.
  EXPECT_EQ(std::set<const void*>(seen.begin() + 1, seen.end()).size(), 1u);
  EXPECT_EQ(out.shape(), (Shape{50, 8}));
  EXPECT_EQ(out.to_vector<float>()[49 * 8], 49.f);
}

TEST(TensorArray, DynamicRnnSeedEagerAndTracedAgree) {
  const int batch = 2, seq = 3, features = 4;
  std::vector<float> in(batch * seq * features);
  for (std::size_t k = 0; k < in.size(); ++k) in[k] = static_cast<float>((k * 7) % 11) / 10.f;
  Tensor input = constant(in, Shape{batch, seq, features});
  Tensor init = fill({batch, features}, 0.5f);
  // state[b, t] = init + sum of input[b, 0..t].
  std::vector<float> expected(in.size());
  for (int b = 0; b < batch; ++b)
    for (int f = 0; f < features; ++f) {
      float acc = 0.5f;
      for (int t = 0; t < seq; ++t) {
        acc += in[(b * seq + t) * features + f];
        expected[(b * seq + t) * features + f] = acc;
      }
    }
  expect_tensor<float>(dynamic_rnn(input, init), {batch, seq, features}, expected);

  int traces = 0;
  auto traced = kiln::function([&](const Tensor& x, const Tensor& s) {
    ++traces;
    return dynamic_rnn(x, s);
  });
  Tensor out = traced(input, init);
  expect_tensor<float>(out, {batch, seq, features}, expected);
  expect_tensor<float>(traced(input, init), {batch, seq, features}, expected);
  EXPECT_EQ(traces, 1);
  std::string graph = traced.get_concrete_function(input, init).graph().to_string();
  EXPECT_NE(graph.find("While("), std::string::npos) << graph;
  EXPECT_NE(graph.find("TensorArrayWrite("), std::string::npos) << graph;
}

TEST(TensorArray, GraphErrorsMatchEager) {
  auto reader = kiln::function([](const Tensor& i) {
    TensorArray a = TensorArray(DType::Float32, 3).write(0, constant(1.f));
    return a.read(i);
  });
  expect_tensor<float>(reader(constant(0)), {}, {1});
  expect_tensor<float>(reader(constant(1)), {}, {0});  // unwritten: zeros, as eagerly
  auto unshaped = kiln::function([](const Tensor& i) { return TensorArray(DType::Float32, 3).read(i); });
  expect_error<InvalidArgument>([&] { unshaped(constant(1)); },
                                {"TensorArrayRead: element 1 of the TensorArray (size 3) has not been written",
                                 "tensor_array_test.cpp"});
  expect_error<InvalidArgument>([&] { reader(constant(3)); },
                                {"TensorArrayRead: index 3 is out of range for a TensorArray of size 3"});

  auto writer = kiln::function([](const Tensor& n) {
    return kiln::for_range(0, n, 1, TensorArray(DType::Int32, 4),
                           [](const Tensor& i, const TensorArray& a) { return a.write(i, i * 2); })
        .stack();
  });
  expect_tensor<int32_t>(writer(constant(4)), {4}, {0, 2, 4, 6});
  expect_error<InvalidArgument>([&] { writer(constant(5)); },
                                {"TensorArrayWrite: index 4 is out of range for a TensorArray of size 4",
                                 "dynamic_size is off"});
  // The unwritten element stacks as zeros (TF2).
  expect_tensor<int32_t>(writer(constant(3)), {4}, {0, 2, 4, 0});
  EXPECT_EQ(writer.tracing_count(), 1);

  // Shape and dtype mismatches are found while tracing.
  auto bad_shape = kiln::function([](const Tensor& x) {
    return TensorArray(DType::Float32, 2, {.element_shape = Shape{3}}).write(0, x).stack();
  });
  expect_error<InvalidArgument>([&] { bad_shape(constant({1.f, 2.f})); },
                                {"TensorArrayWrite", "holds elements of shape (3,)", "a value of shape (2,)"});
  auto bad_dtype = kiln::function([](const Tensor& x) { return TensorArray(DType::Float32, 2).write(0, x).stack(); });
  expect_error<InvalidArgument>([&] { bad_dtype(constant({1, 2})); }, {"holds float32 elements, got a int32 value"});
}

TEST(TensorArray, DynamicArrayInTracedWhileLoop) {
  // Collect the Collatz sequence of n into a dynamic array.
  auto collatz = [](const Tensor& n) {
    TensorArray seq(DType::Int32, 0, {.dynamic_size = true});
    auto [last, out] = kiln::while_loop(
        [](const Tensor& x, const TensorArray&) { return x != 1; },
        [](const Tensor& x, const TensorArray& s) {
          TensorArray next = s.write(s.size(), x);
          return std::tuple<Tensor, TensorArray>{where(x % 2 == 0, floordiv(x, 2), 3 * x + 1), next};
        },
        std::tuple<Tensor, TensorArray>{n, seq});
    return out.write(out.size(), last).stack();
  };
  auto traced = kiln::function(collatz);
  for (int n : {1, 6, 27}) {
    Tensor eager = collatz(constant(n));
    Tensor graph = traced(constant(n));
    EXPECT_EQ(eager.shape(), graph.shape());
    EXPECT_EQ(eager.to_vector<int32_t>(), graph.to_vector<int32_t>());
  }
  expect_tensor<int32_t>(traced(constant(6)), {9}, {6, 3, 10, 5, 16, 8, 4, 2, 1});
  EXPECT_EQ(traced.tracing_count(), 1);
}

TEST(TensorArray, ArgumentOfAFunction) {
  auto total = kiln::function([](const TensorArray& a) { return kiln::sum(a.stack()); });
  TensorArray a = TensorArray(DType::Float32, 2).unstack(constant({{1.f, 2.f}, {3.f, 4.f}}));
  expect_tensor<float>(total(a), {}, {10});
  expect_tensor<float>(total(a.write(0, constant({0.f, 0.f}))), {}, {7});
  EXPECT_EQ(total.tracing_count(), 1);
}

TEST(TensorArray, ReturnedFromCondBranches) {
  auto pick = [](const Tensor& flag) {
    TensorArray a(DType::Float32, 2, {.dynamic_size = true});
    TensorArray b = kiln::cond(
        flag, [&] { return a.write(0, constant({1.f, 2.f})).write(1, constant({3.f, 4.f})); },
        [&] { return a.write(2, constant({5.f, 6.f})).write(0, constant({0.f, 0.f})).write(1, constant({0.f, 0.f})); });
    return b.stack();
  };
  auto traced = kiln::function(pick);
  for (bool flag : {true, false}) {
    Tensor eager = pick(constant(flag));
    Tensor graph = traced(constant(flag));
    EXPECT_EQ(eager.shape(), graph.shape());
    EXPECT_EQ(eager.to_vector<float>(), graph.to_vector<float>());
  }
  expect_tensor<float>(traced(constant(false)), {3, 2}, {0, 0, 0, 0, 5, 6});
  EXPECT_EQ(traced.tracing_count(), 1);
}
