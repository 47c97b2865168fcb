#pragma once
// kiln::float16_t (IEEE binary16, TF's tf.float16) and kiln::bfloat16_t (the top
// half of a float32, TF's tf.bfloat16): storage types. Arithmetic converts to
// float (implicitly) and the result back (explicitly), so every op computes
// in float32 and rounds once, as TF's Eigen::half and Eigen::bfloat16 do.
//
// Conversions from float round to nearest even and keep NaN (made quiet, sign
// kept) and infinities; float16 overflows to inf from 65520 up and has
// subnormals down to 2^-24. They are plain bit manipulation: the build
// targets baseline x86-64, where F16C's vcvtps2ph is not guaranteed.
#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace kiln {

namespace detail {

constexpr uint16_t float_to_half_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN, inf
  if (ax >= 0x477ff000u) return sign | 0x7c00u;                                 // >= 65520: inf
  if (ax < 0x38800000u) {
    // Below 2^-14: a float16 subnormal (or zero). Adding 0.5 puts the value's
    // 2^-24 units in the low mantissa bits, rounded to nearest even.
    float shifted = std::bit_cast<float>(ax) + 0.5f;
    return sign | static_cast<uint16_t>(std::bit_cast<uint32_t>(shifted) - 0x3f000000u);
  }
  uint32_t odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + odd;  // exponent rebias (127 -> 15) and round-half-even bias
  return sign | static_cast<uint16_t>(ax >> 13);
}

constexpr float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t o = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exp = o & 0x0f800000u;
  o += (127u - 15u) << 23;
  if (exp == 0x0f800000u) {
    o += (128u - 16u) << 23;  // inf, NaN
  } else if (exp == 0) {
    o += 1u << 23;  // subnormal: renormalize through a float subtraction
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(o) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(o | sign);
}

constexpr uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (x & 0x80000000u) ? 0xffc0u : 0x7fc0u;  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);  // round half to even; large values carry into inf
  return static_cast<uint16_t>(x >> 16);
}

constexpr float bfloat16_bits_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }


}  // namespace detail

struct float16_t {
  uint16_t bits = 0;
  constexpr float16_t() = default;
  constexpr explicit float16_t(float f) : bits(detail::float_to_half_bits(f)) {}
  // double and integers go through float, as Eigen::half(T) does.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  constexpr explicit float16_t(T v) : float16_t(static_cast<float>(v)) {}
  constexpr operator float() const { return detail::half_bits_to_float(bits); }
  static constexpr float16_t from_bits(uint16_t b) {
    float16_t h;
    h.bits = b;
    return h;
  }
};

struct bfloat16_t {
  uint16_t bits = 0;
  constexpr bfloat16_t() = default;
  constexpr explicit bfloat16_t(float f) : bits(detail::float_to_bfloat16_bits(f)) {}
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  constexpr explicit bfloat16_t(T v) : bfloat16_t(static_cast<float>(v)) {}
  constexpr operator float() const { return detail::bfloat16_bits_to_float(bits); }
  static constexpr bfloat16_t from_bits(uint16_t b) {
    bfloat16_t h;
    h.bits = b;
    return h;
  }
};

// The 16-bit float types, whose ops compute in float32.
template <class T>
inline constexpr bool is_half_type = std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>;

}  // namespace kiln

// min/max/lowest/epsilon/infinity as TF's finfo gives them (reductions start
// from these).
template <> struct std::numeric_limits<kiln::float16_t> {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr kiln::float16_t min() { return kiln::float16_t::from_bits(0x0400); }
  static constexpr kiln::float16_t max() { return kiln::float16_t::from_bits(0x7bff); }
  static constexpr kiln::float16_t lowest() { return kiln::float16_t::from_bits(0xfbff); }
  static constexpr kiln::float16_t epsilon() { return kiln::float16_t::from_bits(0x1400); }
  static constexpr kiln::float16_t infinity() { return kiln::float16_t::from_bits(0x7c00); }
  static constexpr kiln::float16_t quiet_NaN() { return kiln::float16_t::from_bits(0x7e00); }
  static constexpr kiln::float16_t denorm_min() { return kiln::float16_t::from_bits(0x0001); }
};
template <> struct std::numeric_limits<kiln::bfloat16_t> {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr kiln::bfloat16_t min() { return kiln::bfloat16_t::from_bits(0x0080); }
  static constexpr kiln::bfloat16_t max() { return kiln::bfloat16_t::from_bits(0x7f7f); }
  static constexpr kiln::bfloat16_t lowest() { return kiln::bfloat16_t::from_bits(0xff7f); }
  static constexpr kiln::bfloat16_t epsilon() { return kiln::bfloat16_t::from_bits(0x3c00); }
  static constexpr kiln::bfloat16_t infinity() { return kiln::bfloat16_t::from_bits(0x7f80); }
  static constexpr kiln::bfloat16_t quiet_NaN() { return kiln::bfloat16_t::from_bits(0x7fc0); }
  static constexpr kiln::bfloat16_t denorm_min() { return kiln::bfloat16_t::from_bits(0x0001); }
};
