// The dtypes beyond the core seven: float16/bfloat16 conversions (against the
// F16C instruction where the build has it), Cast between every pair with TF's
// CPU semantics, printing, storage ops, per-op rounding of half arithmetic
// (eager and traced alike), the float32/int64 bridge, safetensors names.
#include "test_util.h"

#include <bit>
#include <complex>
#include <limits>

#include <immintrin.h>

#include "io/safetensors.h"
#include "runtime/dispatch.h"
#include "schema/op_def.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;

namespace {

uint16_t half_bits(float f) { return float16_t(f).bits; }
uint16_t bf16_bits(float f) { return bfloat16_t(f).bits; }
float from_half(uint16_t b) { return float16_t::from_bits(b); }

template <class T> std::vector<uint16_t> bits_of(const Tensor& t) {
  std::vector<uint16_t> out;
  for (T v : t.to_vector<T>()) out.push_back(v.bits);
  return out;
}

}  // namespace

TEST(DTypeExtended, NamesSizesAndPredicates) {
  EXPECT_EQ(dtype_name(float16), "float16");
  EXPECT_EQ(dtype_name(bfloat16), "bfloat16");
  EXPECT_EQ(dtype_name(complex128), "complex128");
  EXPECT_EQ(dtype_size(float16), 2u);
  EXPECT_EQ(dtype_size(uint32), 4u);
  EXPECT_EQ(dtype_size(complex64), 8u);
  EXPECT_EQ(dtype_size(complex128), 16u);
  EXPECT_TRUE(is_floating(bfloat16));
  EXPECT_TRUE(is_integer(int8) && is_integer(uint64) && is_unsigned(uint16));
  EXPECT_FALSE(is_unsigned(int16));
  EXPECT_TRUE(is_complex(complex64) && !is_numeric(complex64));
  EXPECT_EQ(real_dtype(complex128), float64);
  // The first eight keep their numbers (the Python package passes them around).
  EXPECT_EQ(static_cast<int>(DType::Resource), 7);
}

TEST(DTypeExtended, Float16RoundsToNearestEven) {
  EXPECT_EQ(half_bits(1.0f), 0x3c00);
  EXPECT_EQ(half_bits(1.0f + 0x1p-11f), 0x3c00);         // tie: to the even 1.0
  EXPECT_EQ(half_bits(1.0f + 3 * 0x1p-11f), 0x3c02);     // tie: to the even 1 + 2^-9
  EXPECT_EQ(half_bits(65504.0f), 0x7bff);                // max
  EXPECT_EQ(half_bits(65519.99f), 0x7bff);
  EXPECT_EQ(half_bits(65520.0f), 0x7c00);                // overflows to inf
  EXPECT_EQ(half_bits(-1e10f), 0xfc00);
  EXPECT_EQ(half_bits(0x1p-24f), 0x0001);                // smallest subnormal
  EXPECT_EQ(half_bits(0x1p-25f), 0x0000);                // tie: to the even 0
  EXPECT_EQ(half_bits(3 * 0x1p-25f), 0x0002);            // tie: to the even 2 * 2^-24
  EXPECT_EQ(half_bits(-0.0f), 0x8000);
  EXPECT_EQ(half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(half_bits(-std::numeric_limits<float>::quiet_NaN()), 0xfe00);
  EXPECT_TRUE(std::isnan(from_half(0x7c01)));
  EXPECT_EQ(from_half(0x0001), 0x1p-24f);
  EXPECT_EQ(from_half(0x03ff), 1023 * 0x1p-24f);  // largest subnormal
  // Every float16 reads back exactly.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = from_half(static_cast<uint16_t>(b));
    if (!std::isnan(f)) EXPECT_EQ(half_bits(f), b) << b;
  }
}

// The F16C instructions, compiled for them alone (the tests' build targets
// baseline x86-64) and called only where the CPU has them.
__attribute__((target("f16c"))) uint16_t f16c_half(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
__attribute__((target("f16c"))) float f16c_float(uint16_t h) { return _cvtsh_ss(h); }

TEST(DTypeExtended, Float16MatchesTheF16CInstruction) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "no F16C on this CPU";
  // A sweep over float bit patterns (every 4099th), rounding included.
  for (uint64_t b = 0; b < 0x100000000ull; b += 4099) {
    float f = std::bit_cast<float>(static_cast<uint32_t>(b));
    if (std::isnan(f)) continue;
    uint16_t hw = f16c_half(f);
    ASSERT_EQ(half_bits(f), hw) << std::hexfloat << f;
    ASSERT_EQ(std::bit_cast<uint32_t>(from_half(hw)), std::bit_cast<uint32_t>(f16c_float(hw)));
  }
}

TEST(DTypeExtended, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(1.0f + 0x1p-8f), 0x3f80);        // tie: to the even 1.0
  EXPECT_EQ(bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);    // tie: up to the even
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to inf, as Eigen
  EXPECT_EQ(bf16_bits(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(bf16_bits(-std::numeric_limits<float>::quiet_NaN()), 0xffc0);
  EXPECT_EQ(static_cast<float>(bfloat16_t::from_bits(0x4049)), 3.140625f);
}

TEST(DTypeExtended, CastFollowsTheCpuKernel) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = constant({nan, inf, -inf, -1.5, 1e20, 3e9, 7e4, -129.7, 300.7, 1.8e19, 5e9});
  // Values a static_cast compiled by GCC for x86-64 gives (TF's Cast kernel).
  expect_tensor<int8_t>(cast(x, int8), {11}, {0, 0, 0, -1, 0, 0, 112, 127, 44, 0, 0});
  expect_tensor<int16_t>(cast(x, int16), {11}, {0, 0, 0, -1, 0, 0, 4464, -129, 300, 0, 0});
  expect_tensor<uint16_t>(cast(x, uint16), {11}, {0, 0, 0, 65535, 0, 0, 4464, 65407, 300, 0, 0});
  expect_tensor<uint32_t>(cast(x, uint32), {11},
                          {0, 0, 0, 4294967295u, 0, 3000000000u, 70000, 4294967167u, 300, 0, 705032704u});
  expect_tensor<uint64_t>(cast(x, uint64), {11},
                          {9223372036854775808ull, 0, 9223372036854775808ull, 18446744073709551615ull, 0,
                           3000000000ull, 70000, 18446744073709551487ull, 300, 18000000000000000000ull,
                           5000000000ull});
  // Integers wrap; float16 saturates to inf; complex keeps the real part.
  expect_tensor<int8_t>(cast(constant({200, -129, 256}), int8), {3}, {-56, 127, 0});
  EXPECT_EQ(bits_of<float16_t>(cast(constant({70000.f, -0.f, 1e-8f}), float16)),
            (std::vector<uint16_t>{0x7c00, 0x8000, 0x0000}));
  Tensor z = cast(constant({-2.5f, 0.f}), complex64);
  expect_tensor<std::complex<float>>(z, {2}, {{-2.5f, 0.f}, {0.f, 0.f}});
  expect_tensor<int32_t>(cast(z, int32), {2}, {-2, 0});
  expect_tensor<bool>(cast(z, boolean), {2}, {true, false});
  expect_tensor<double>(cast(cast(constant({1.1, -3.3}), bfloat16), float64), {2}, {1.1015625, -3.296875});
}

TEST(DTypeExtended, PrintsAsTensorFlowDoes) {
  EXPECT_EQ(to_string(cast(constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}}), float16)),
            "kiln.Tensor(\n[[1. 2.]\n [3. 4.]\n [5. 6.]], shape=(3, 2), dtype=float16)");
  // float16's shortest digits (2.2 as float16 is 2.19921875).
  EXPECT_EQ(to_string(cast(constant({2.2f, 65504.f}), float16)),
            "kiln.Tensor([2.20e+00 6.55e+04], shape=(2,), dtype=float16)");
  EXPECT_EQ(to_string(cast(constant(0.1f), float16)), "kiln.Tensor(0.1, shape=(), dtype=float16)");
  EXPECT_EQ(to_string(cast(constant({1.f, 2.5f}), bfloat16)), "kiln.Tensor([1 2.5], shape=(2,), dtype=bfloat16)");
  EXPECT_EQ(to_string(constant({uint64_t(18446744073709551615ull)})),
            "kiln.Tensor([18446744073709551615], shape=(1,), dtype=uint64)");
  Tensor z = constant(std::vector<std::complex<double>>{{1, 2}, {-3.5, -0.5}});
  EXPECT_EQ(to_string(z), "kiln.Tensor([ 1. +2.j  -3.5-0.5j], shape=(2,), dtype=complex128)");
  EXPECT_EQ(to_string(constant(std::vector<std::complex<float>>{{1, 2}}, Shape{})),
            "kiln.Tensor((1+2j), shape=(), dtype=complex64)");
}

TEST(DTypeExtended, StorageOpsMoveAnyDType) {
  Tensor x = cast(constant({{1, 2, 3}, {4, 5, 6}}), int16);
  expect_tensor<int16_t>(transpose(x), {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_tensor<int16_t>(concat({x, x}, 0), {4, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  expect_tensor<int16_t>(gather(x, constant({1, 0}), 1), {2, 2}, {2, 1, 5, 4});
  expect_tensor<int16_t>(reshape(x, Shape{6}), {6}, {1, 2, 3, 4, 5, 6});
  Tensor z = cast(constant({{1.0, 2.0}, {3.0, 4.0}}), complex128);
  expect_tensor<std::complex<double>>(transpose(z), {2, 2}, {{1, 0}, {3, 0}, {2, 0}, {4, 0}});
  expect_tensor<std::complex<double>>(stack({z, z}, 0)[1][0], {2}, {{1, 0}, {2, 0}});
  EXPECT_EQ(bits_of<bfloat16_t>(fill(Shape{2}, 1.5, bfloat16)), (std::vector<uint16_t>{0x3fc0, 0x3fc0}));
  EXPECT_EQ(bits_of<float16_t>(zeros(Shape{1}, float16)), (std::vector<uint16_t>{0}));
  EXPECT_EQ(bits_of<float16_t>(ones(Shape{1}, float16)), (std::vector<uint16_t>{0x3c00}));
}

TEST(DTypeExtended, HalfArithmeticRoundsEachOp) {
  Tensor big = cast(constant({2048.f, 60000.f, 1.f}), float16);
  // 2048 + 1 is 2048 in float16 (its spacing there is 2); 60000 * 2 overflows.
  EXPECT_EQ(bits_of<float16_t>(big + cast(constant({1.f, 60000.f, 0x1p-24f}), float16)),
            (std::vector<uint16_t>{half_bits(2048.f), 0x7c00, 0x3c00}));
  auto f = kiln::function([](const Tensor& a) { return (a * a + a) / a - a; });
  Tensor x = cast(constant({0.1f, 3.3f, 250.f, -7.f}), float16);
  Tensor eager = (x * x + x) / x - x;
  EXPECT_EQ(bits_of<float16_t>(f(x)), bits_of<float16_t>(eager));
  // bfloat16: 256 + 1 rounds back to 256 (8 bits of mantissa).
  Tensor b = cast(constant({256.f}), bfloat16);
  EXPECT_EQ(bits_of<bfloat16_t>(b + cast(constant({1.f}), bfloat16)), bits_of<bfloat16_t>(b));
}

TEST(DTypeExtended, NarrowIntegersWrapAndDivideAsTF) {
  Tensor a = cast(constant({127, -128, -7, 7}), int8);
  Tensor one = cast(constant({1, 1, 2, -2}), int8);
  expect_tensor<int8_t>(a + one, {4}, {-128, -127, -5, 5});
  expect_tensor<int8_t>(floordiv(a, one), {4}, {127, -128, -4, -4});
  expect_tensor<int8_t>(mod(a, one), {4}, {0, 0, 1, -1});
  expect_error<InvalidArgument>([&] { (void)(a + cast(a, int16)); }, {"int8", "int16"});
  Tensor u = cast(constant({int64_t(4294967295)}), uint32);
  expect_tensor<uint32_t>(u + cast(constant({2}), uint32), {1}, {1});
}

TEST(DTypeExtended, ReductionsAndMatmulBridgeThroughFloat32) {
  Tensor x = cast(constant({{1.f, 2.f}, {3.f, 4.f}}), float16);
  EXPECT_EQ(bits_of<float16_t>(sum(x)), (std::vector<uint16_t>{half_bits(10.f)}));
  EXPECT_EQ(bits_of<float16_t>(matmul(x, x)),
            (std::vector<uint16_t>{half_bits(7.f), half_bits(10.f), half_bits(15.f), half_bits(22.f)}));
  expect_tensor<int16_t>(max(cast(constant({3, -9, 30000}), int16)), {}, {30000});
  // Sums wrap as int16 arithmetic does.
  expect_tensor<int16_t>(sum(cast(constant({30000, 30000}), int16)), {}, {-5536});
}

TEST(DTypeExtended, SafetensorsNamesTheNewTypes) {
  std::vector<io::NamedTensor> in{{"h", cast(constant({1.5f, -2.f}), float16)},
                                  {"b", cast(constant({3.f}), bfloat16)},
                                  {"u", constant({uint64_t(1) << 63})},
                                  {"i", cast(constant({-5}), int8)}};
  std::string bytes = io::safetensors_encode(in);
  EXPECT_NE(bytes.find("\"F16\""), std::string::npos);
  EXPECT_NE(bytes.find("\"BF16\""), std::string::npos);
  EXPECT_NE(bytes.find("\"U64\""), std::string::npos);
  auto out = io::safetensors_decode(bytes, "test");
  ASSERT_EQ(out.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const io::NamedTensor* match = nullptr;
    for (const auto& t : out)
      if (t.name == in[i].name) match = &t;
    ASSERT_TRUE(match);
    EXPECT_EQ(match->value.dtype(), in[i].value.dtype());
    EXPECT_EQ(to_string(match->value), to_string(in[i].value));
  }
  expect_error<Unimplemented>([] { io::safetensors_encode({{"z", cast(constant({1.f}), complex64)}}); },
                              {"complex64"});
}

namespace {

bool same_values(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && to_string(a) == to_string(b) &&
         to_string(cast(a, float64)) == to_string(cast(b, float64));
}

// run_eager, or nothing when it raises (a zero divisor, an unsupported dtype).
std::optional<Tensor> try_eager(const detail::OpDef& op, const std::vector<Tensor>& args, const schema::Attrs& attrs) {
  try {
    std::vector<Tensor> in = args;
    return runtime::run_eager(op, in, attrs)[0];
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

// Every elementwise op's float32 samples, in float16 and bfloat16: the result
// is the float32 op on the (widened) inputs rounded once, bit for bit; every
// int32 sample in int8 and uint16: the int32 op's result wrapped to the type.
TEST(DTypeExtended, EveryElementwiseOpServesTheNewDTypes) {
  int half_checked = 0, int_checked = 0;
  for (const detail::OpDef* op : schema::OpRegistry::global().all()) {
    if (!op->is(schema::kElementwise) || op->is(schema::kGraphOnly)) continue;
    // A shift's count clamps to its dtype's width (TF's kernels), so the int32
    // result wrapped is not the narrow one (test_bitwise.py checks each width).
    const bool width_dependent = op->name == "LeftShift" || op->name == "RightShift";
    for (const schema::OpSample& sample : op->samples()) {
      if (sample.inputs.empty() || width_dependent) continue;
      DType from = sample.inputs.back().dtype();
      if (from != float32 && from != int32) continue;
      for (DType narrow : from == float32 ? std::vector<DType>{float16, bfloat16} : std::vector<DType>{int8, uint16}) {
        if (!op->elementwise[static_cast<int>(narrow)]) continue;  // the op does not take it
        std::vector<Tensor> narrow_in, wide_in;
        for (const Tensor& t : sample.inputs) {
          Tensor n = t.dtype() == from ? cast(t, narrow) : t;
          narrow_in.push_back(n);
          wide_in.push_back(t.dtype() == from ? cast(n, from) : t);
        }
        std::optional<Tensor> got = try_eager(*op, narrow_in, sample.attrs);
        std::optional<Tensor> want = try_eager(*op, wide_in, sample.attrs);
        ASSERT_EQ(got.has_value(), want.has_value()) << op->name << " on " << dtype_name(narrow);
        if (!got) continue;
        Tensor expected = want->dtype() == from ? cast(*want, narrow) : *want;
        EXPECT_TRUE(same_values(*got, expected))
            << op->name << " on " << dtype_name(narrow) << ": " << to_string(*got) << " vs " << to_string(expected);
        (from == float32 ? half_checked : int_checked)++;
      }
    }
  }
  EXPECT_GT(half_checked, 60);
  EXPECT_GT(int_checked, 20);
}
