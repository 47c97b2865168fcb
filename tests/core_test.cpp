// Tensors, creation ops, host access, weak scalars, the registry.
#include "test_util.h"

#include <kiln/random.h>

#include "core/allocator.h"
#include "schema/op_def.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::expect_tensor_near;

TEST(Core, LiteralsMapToDTypesExactly) {
  EXPECT_EQ(constant(1).dtype(), int32);
  EXPECT_EQ(constant(1.1f).dtype(), float32);
  EXPECT_EQ(constant(2.0).dtype(), float64);
  EXPECT_EQ(constant(int64_t(5)).dtype(), int64);
  EXPECT_EQ(constant(uint8_t(5)).dtype(), uint8);
  EXPECT_EQ(constant(true).dtype(), boolean);
  EXPECT_EQ(constant("a").dtype(), string);
  EXPECT_EQ(constant(std::string("abc")).item<std::string>(), "abc");
  EXPECT_EQ(constant(4).item<int32_t>(), 4);
  EXPECT_FLOAT_EQ(constant(1.1f).item<float>(), 1.1f);
  EXPECT_EQ(constant(4).shape(), Shape{});
}

TEST(Core, NestedListsGiveShapes) {
  expect_tensor<int32_t>(constant({{1, 2}, {3, 4}}), {2, 2}, {1, 2, 3, 4});
  expect_tensor<float>(constant({1.f, 2.f, 3.f}), {3}, {1, 2, 3});
  expect_tensor<int32_t>(constant({{{1}, {2}}, {{3}, {4}}}), {2, 2, 1}, {1, 2, 3, 4});
  expect_tensor<bool>(constant({true, false}), {2}, {true, false});
  expect_tensor<std::string>(constant({"a", "bc"}), {2}, {"a", "bc"});
}

TEST(Core, FlatVectorAndShape) {
  expect_tensor<float>(constant(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3}), {2, 3},
                       {1, 2, 3, 4, 5, 6});
  expect_tensor<int64_t>(constant(std::vector<int64_t>{7, 8}), {2}, {7, 8});
}

TEST(Core, ConstantWithDTypeCasts) {
  expect_tensor<float>(constant({1, 2, 3}, float32), {3}, {1, 2, 3});
  expect_tensor<int32_t>(constant({1.7f, -1.7f}, int32), {2}, {1, -1});
  expect_tensor<double>(constant(3, float64), {}, {3.0});
}

TEST(Core, ConstantErrors) {
  expect_error<InvalidArgument>([] { constant({{1, 2}, {3}}); }, {"constant", "ragged"});
  expect_error<InvalidArgument>([] { constant(std::vector<float>{1, 2, 3}, Shape{2, 2}); },
                                {"constant", "3 values", "(2, 2)"});
  expect_error<InvalidArgument>([] { constant(1.5, int32); }, {"constant", "1.5", "int32"});
  expect_error<InvalidArgument>([] { constant(300, uint8); }, {"300", "uint8"});
}

TEST(Core, FillZerosOnesRange) {
  expect_tensor<float>(zeros({2, 2}), {2, 2}, {0, 0, 0, 0});
  expect_tensor<int32_t>(ones({3}, int32), {3}, {1, 1, 1});
  expect_tensor<int32_t>(fill({2}, 7), {2}, {7, 7});
  expect_tensor<float>(fill({2}, 0.5f), {2}, {0.5f, 0.5f});
  expect_tensor<double>(zeros_like(constant({1.0, 2.0})), {2}, {0, 0});
  expect_tensor<int64_t>(ones_like(constant({1.f}), int64), {1}, {1});
  expect_tensor<int32_t>(range(5), {5}, {0, 1, 2, 3, 4});
  expect_tensor<int32_t>(range(1, 10, 3), {3}, {1, 4, 7});
  expect_tensor<int32_t>(range(5, 0, -2), {3}, {5, 3, 1});
  expect_tensor<int32_t>(range(3, 3), {0}, {});
  expect_tensor<float>(range(0.f, 1.f, 0.25f), {4}, {0, 0.25f, 0.5f, 0.75f});
  expect_tensor<double>(range(0, 1.0, 0.5), {2}, {0, 0.5});
  expect_error<InvalidArgument>([] { range(0, 5, 0); }, {"Range", "delta", "zero"});
  expect_error<InvalidArgument>([] { fill({2}, 1.5, int32); }, {"fill", "1.5", "int32"});
  expect_error<InvalidArgument>([] { zeros({-1, 2}); }, {"Fill", "(None, 2)", "fully defined"});
}

TEST(Core, CastConverts) {
  expect_tensor<int32_t>(cast(constant({1.9f, -1.9f, 0.f}), int32), {3}, {1, -1, 0});
  expect_tensor<bool>(cast(constant({0, 2}), boolean), {2}, {false, true});
  expect_tensor<float>(cast(constant({true, false}), float32), {2}, {1.f, 0.f});
  expect_tensor<double>(cast(constant(uint8_t(200)), float64), {}, {200.0});
  expect_error<InvalidArgument>([] { cast(constant("a"), int32); }, {"Cast", "string", "int32"});
}

// Float to integer casts of NaN and out-of-range values: TF's x86 results
// (cvttss2si: the minimum integer), no undefined behaviour; uint8 keeps the
// low 8 bits of the int32 conversion. Eager, traced and fused alike.
TEST(Core, CastOfNaNAndOutOfRangeFloats) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = constant({nan, inf, -inf, 3e9, -3e9, 2147483647.9, -2147483648.9, 300.7, -1.5, -0.0});
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  const std::vector<int32_t> i32 = {kMin, kMin, kMin, kMin, kMin, 2147483647, kMin, 300, -1, 0};
  expect_tensor<int32_t>(cast(x, int32), {10}, i32);
  const int64_t kMin64 = std::numeric_limits<int64_t>::min();
  expect_tensor<int64_t>(cast(x, int64), {10},
                         {kMin64, kMin64, kMin64, 3000000000, -3000000000, 2147483647, -2147483648, 300, -1, 0});
  expect_tensor<int64_t>(cast(constant({9.3e18, -9.3e18, 9.2e18}), int64), {3},
                         {kMin64, kMin64, 9200000000000000000});
  expect_tensor<uint8_t>(cast(x, uint8), {10}, {0, 0, 0, 0, 0, 255, 0, 44, 255, 0});
  expect_tensor<int32_t>(cast(cast(x, float32), int32), {10},
                         {kMin, kMin, kMin, kMin, kMin, kMin, kMin, 300, -1, 0});
  expect_tensor<bool>(cast(constant({nan, -0.0}), boolean), {2}, {true, false});
  auto f = kiln::function([](const Tensor& t) { return cast(t * 1.0, int32) + 1; });
  std::vector<int32_t> plus_one = i32;
  for (int32_t& e : plus_one) e = static_cast<int32_t>(static_cast<uint32_t>(e) + 1u);
  expect_tensor<int32_t>(f(x), {10}, plus_one);
}

TEST(Core, HostAccessChecksTypes) {
  Tensor t = constant({1.f, 2.f});
  EXPECT_EQ(t.size(), 2);
  EXPECT_EQ(t.rank(), 1);
  expect_error<InvalidArgument>([&] { t.item<float>(); }, {"item", "(2,)", "2 elements"});
  expect_error<InvalidArgument>([&] { constant(1).item<float>(); },
                                {"item", "int32", "float32"});
  expect_error<InvalidArgument>([&] { t.to_vector<double>(); }, {"to_vector", "float32", "float64"});
  expect_error<InvalidArgument>([] { Tensor().item<float>(); }, {"null"});
}

TEST(Core, TruthValueOfScalars) {
  EXPECT_TRUE(static_cast<bool>(constant(true)));
  EXPECT_FALSE(static_cast<bool>(constant(0.0f)));
  expect_error<InvalidArgument>([] { (void)static_cast<bool>(constant({1, 2})); },
                                {"ambiguous", "(2,)"});
}

TEST(Core, ShapeText) {
  EXPECT_EQ(Shape{}.to_string(), "()");
  EXPECT_EQ(Shape{3}.to_string(), "(3,)");
  EXPECT_EQ((Shape{None, 28}).to_string(), "(None, 28)");
  EXPECT_EQ(Shape::unknown_rank().to_string(), "<unknown>");
  EXPECT_EQ((Shape{2, 3}).num_elements(), 6);
  EXPECT_EQ((Shape{None, 3}).num_elements(), -1);
  EXPECT_TRUE((Shape{None, 3}).is_compatible_with(Shape{7, 3}));
  EXPECT_FALSE((Shape{None, 3}).is_compatible_with(Shape{7, 4}));
  expect_error<InvalidArgument>([] { Shape{1, 2, 3, 4, 5, 6, 7, 8, 9}; }, {"rank 9"});
}

TEST(Core, RandomIsFreshUnseededAndFixedStateless) {
  Tensor a = random::normal({1000});
  Tensor b = random::normal({1000});
  EXPECT_NE(a.to_vector<float>(), b.to_vector<float>());
  EXPECT_EQ(random::stateless_normal({5}, 42).to_vector<float>(), random::stateless_normal({5}, 42).to_vector<float>());
  EXPECT_NE(random::stateless_normal({5}, 42).to_vector<float>(), random::stateless_normal({5}, 43).to_vector<float>());
  random::set_seed(3);
  auto first = random::uniform({4}).to_vector<float>();
  random::set_seed(3);
  EXPECT_EQ(random::uniform({4}).to_vector<float>(), first);
  // Moments of a large draw.
  std::vector<double> v = random::normal({200000}, 2.0, 3.0, float64, 1).to_vector<double>();
  double mean = 0, var = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  for (double x : v) var += (x - mean) * (x - mean);
  var /= v.size();
  EXPECT_NEAR(mean, 2.0, 0.03);
  EXPECT_NEAR(var, 9.0, 0.1);
  for (float u : random::uniform({10000}, -1, 1, float32, 5).to_vector<float>()) {
    EXPECT_GE(u, -1.f);
    EXPECT_LT(u, 1.f);
  }
  expect_error<InvalidArgument>([] { random::normal({2}, 0, 1, int32); }, {"RandomNormal", "int32"});
  expect_error<InvalidArgument>([] { random::uniform({2}, 1, 0); }, {"minval", "maxval"});
  // *_like: the shape (and by default the dtype) of a tensor; seeded draws
  // continue the attr-shaped ones' sequence.
  Tensor like = zeros({3, 4}, float64);
  random::set_seed(11);
  Tensor u = random::uniform_like(like, 0, 1, std::nullopt, 9);
  EXPECT_EQ(u.shape(), (Shape{3, 4}));
  EXPECT_EQ(u.dtype(), float64);
  random::set_seed(11);
  EXPECT_EQ(u.to_vector<double>(), random::uniform({3, 4}, 0, 1, float64, 9).to_vector<double>());
  EXPECT_EQ(random::normal_like(like, 0, 1, float32).dtype(), float32);
  // Inside a function traced with an unknown dim the shape comes at run time.
  auto f = function([](const Tensor& x) { return random::uniform_like(x); },
                    {.input_signature = std::vector{TensorSpec({None})}});
  EXPECT_EQ(f(zeros({5})).shape(), Shape{5});
  EXPECT_EQ(f(zeros({2})).shape(), Shape{2});
}

// TF2's op seeds: with an op seed (and the global seed), the sequence of
// calls is reproducible and each call draws new values; eagerly the calls
// with one op seed share a sequence, in a graph each op has its own, which
// advances on every run. set_seed restarts them all.
TEST(Core, OpSeedsMakeTheSequenceReproducible) {
  auto draws = [] {
    std::vector<std::vector<float>> r;
    for (int i = 0; i < 3; ++i) r.push_back(random::normal({4}, 0, 1, float32, 5).to_vector<float>());
    r.push_back(random::uniform({4}, 0, 1, float32, 5).to_vector<float>());
    return r;
  };
  random::set_seed(1);
  auto first = draws();
  EXPECT_NE(first[0], first[1]);
  EXPECT_NE(first[1], first[2]);
  random::set_seed(1);
  EXPECT_EQ(draws(), first);
  random::set_seed(2);  // another global seed, another sequence
  EXPECT_NE(draws()[0], first[0]);
  // Unseeded draws in between do not disturb an op-seeded sequence.
  random::set_seed(1);
  auto a = random::normal({4}, 0, 1, float32, 5).to_vector<float>();
  (void)random::normal({100});
  EXPECT_EQ(a, first[0]);
  EXPECT_EQ(random::normal({4}, 0, 1, float32, 5).to_vector<float>(), first[1]);
  // Without set_seed, a fixed default global seed: reproducible across runs.

  // In a graph: each op its own sequence; a new draw on every call; two ops
  // with the same op seed draw the same values (TF's "(A1, A1), (A2, A2)").
  auto f = function([](const Tensor& x) {
    return std::tuple{x + random::uniform({3}, 0, 1, float32, 7), x + random::uniform({3}, 0, 1, float32, 7)};
  });
  random::set_seed(4);
  auto [a1, b1] = f(zeros({3}));
  auto [a2, b2] = f(zeros({3}));
  EXPECT_EQ(a1.to_vector<float>(), b1.to_vector<float>());
  EXPECT_NE(a1.to_vector<float>(), a2.to_vector<float>());
  EXPECT_EQ(a2.to_vector<float>(), b2.to_vector<float>());
  random::set_seed(4);
  auto [a3, b3] = f(zeros({3}));
  EXPECT_EQ(a3.to_vector<float>(), a1.to_vector<float>());
  // The graph's first run draws what the eager sequence's first call does.
  random::set_seed(4);
  EXPECT_EQ(random::uniform({3}, 0, 1, float32, 7).to_vector<float>(), a1.to_vector<float>());
  // In a loop body: every iteration draws anew.
  auto g = function([](const Tensor& z) {
    return for_range(0, 2, 1, std::tuple{z, z}, [](const Tensor& i, const Tensor& first, const Tensor&) {
      Tensor draw = random::uniform({3}, 0, 1, float32, 9);
      return std::tuple{where(i == 0, draw, first), draw};
    });
  });
  auto [d0, d1] = g(zeros({3}));
  EXPECT_NE(d0.to_vector<float>(), d1.to_vector<float>());
}

TEST(Core, RegistryHoldsEveryOpOnce) {
  const auto& all = schema::OpRegistry::global().all();
  EXPECT_NE(schema::OpRegistry::global().find("Const"), nullptr);
  EXPECT_NE(schema::OpRegistry::global().find("RandomNormal"), nullptr);
  expect_error<NotFound>([] { schema::OpRegistry::global().get("NoSuchOp"); }, {"NoSuchOp"});
  for (const detail::OpDef* op : all) {
    EXPECT_NE(op->infer, nullptr) << op->name;
    EXPECT_NE(op->kernel, nullptr) << op->name;
    EXPECT_NE(op->samples, nullptr) << op->name << " has no samples";
  }
}

TEST(Core, AllocatorReusesFreedBuffers) {
  { Tensor t = zeros({1000}); }
  int64_t before = core::allocator_stats().cache_hits;
  { Tensor t = zeros({1000}); }
  EXPECT_GT(core::allocator_stats().cache_hits, before);
}
