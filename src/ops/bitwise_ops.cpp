// tf.bitwise: BitwiseAnd, BitwiseOr, BitwiseXor, Invert, LeftShift and
// RightShift on the eight integer dtypes, broadcasting as NumPy does; and the
// `&`, `|`, `^`, `~`, `<<`, `>>` operators, which are logical on bool tensors
// and bitwise on integer tensors (TF's Tensor.__and__ and friends).
//
// Shifts follow TF's kernels (cwise_ops.h): a shift count below 0 counts as 0
// and one above the width minus 1 as the width minus 1, so no shift is
// undefined behaviour; left shifts shift the unsigned bits (signed values
// wrap), right shifts of signed values are arithmetic (the sign fills in).
#include <climits>
#include <cstdint>
#include <type_traits>

#include "kiln/bitwise.h"
#include "kiln/math.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

struct BitwiseAndFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a & b); }
};
struct BitwiseOrFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a | b); }
};
struct BitwiseXorFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};
struct InvertFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a) { return static_cast<T>(~a); }
};

// The shift count clamped to [0, width - 1], as TF's kernels.
template <class T> constexpr T clamped_shift(T y) {
  constexpr T kMax = static_cast<T>(sizeof(T) * CHAR_BIT - 1);
  if constexpr (std::is_signed_v<T>) {
    if (y < 0) return 0;
  }
  return y > kMax ? kMax : y;
}
struct LeftShiftFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) << static_cast<U>(clamped_shift(b))));
  }
};
struct RightShiftFn {
  static constexpr uint32_t kDTypes = kIntMask;
  static constexpr bool kToBool = false;
  template <class T> static T apply(T a, T b) { return static_cast<T>(a >> clamped_shift(b)); }
};

// ---- References: the same rules on int64/uint64 held in doubles -------------
int bits_of(DType d) { return static_cast<int>(dtype_size(d)) * CHAR_BIT; }
// `v`'s low bits as a value of `d` (sign-extended for signed dtypes).
double as_dtype(uint64_t v, DType d) {
  const int bits = bits_of(d);
  if (bits < 64) v &= (uint64_t{1} << bits) - 1;
  if (is_unsigned(d)) return static_cast<double>(v);
  if (bits < 64 && (v >> (bits - 1)) & 1) v |= ~uint64_t{0} << bits;
  return static_cast<double>(static_cast<int64_t>(v));
}
// A sample's value as its two's-complement bits.
uint64_t bits_of_value(double v) {
  return v < 0 ? static_cast<uint64_t>(static_cast<int64_t>(v)) : static_cast<uint64_t>(v);
}
uint64_t reference_shift(const schema::ReferenceArgs& a) {
  const double most = bits_of(a.dtype) - 1;
  return static_cast<uint64_t>(a.y < 0 ? 0 : a.y > most ? most : a.y);
}
double and_reference(const schema::ReferenceArgs& a) {
  return as_dtype(bits_of_value(a.x) & bits_of_value(a.y), a.dtype);
}
double or_reference(const schema::ReferenceArgs& a) {
  return as_dtype(bits_of_value(a.x) | bits_of_value(a.y), a.dtype);
}
double xor_reference(const schema::ReferenceArgs& a) {
  return as_dtype(bits_of_value(a.x) ^ bits_of_value(a.y), a.dtype);
}
double invert_reference(const schema::ReferenceArgs& a) { return as_dtype(~bits_of_value(a.x), a.dtype); }
double left_shift_reference(const schema::ReferenceArgs& a) {
  return as_dtype(bits_of_value(a.x) << reference_shift(a), a.dtype);
}
double right_shift_reference(const schema::ReferenceArgs& a) {
  const uint64_t s = reference_shift(a);
  if (is_unsigned(a.dtype)) return static_cast<double>(bits_of_value(a.x) >> s);
  return static_cast<double>(static_cast<int64_t>(a.x) >> s);  // arithmetic: the sign fills in
}

// ---- Samples: every integer dtype, broadcasting, the edges of each width ------
std::vector<schema::OpSample> logic_samples() {
  return {{{constant({12, -7, 0, 255}, DType::Int32), constant({10, 3, -1, 15}, DType::Int32)}, {}},
          {{constant({{-128}, {127}}, DType::Int8), constant({-1, 1, 85}, DType::Int8)}, {}},
          {{constant({200, 15, 0}, DType::UInt8), constant(170, DType::UInt8)}, {}},
          {{constant({-32768, 4660, 32767}, DType::Int16), constant({255, -256, 21845}, DType::Int16)}, {}},
          {{constant({65535, 4660, 0}, DType::UInt16), constant({255, 65280, 1}, DType::UInt16)}, {}},
          {{constant({4294967295u, 1000000000u, 7u}), constant({65535u, 3u, 1000000000u})}, {}},
          {{constant({int64_t(-1) << 40, int64_t(1) << 50, int64_t(-3)}, DType::Int64),
            constant({int64_t(-1), int64_t(255), int64_t(1) << 52}, DType::Int64)}, {}},
          // (uint64 values and results a double holds exactly: the reference computes through doubles)
          {{constant({uint64_t(1) << 63, uint64_t(1) << 52, uint64_t(12345) << 40}),
            constant({uint64_t(0xff) << 48})}, {}}};
}
std::vector<schema::OpSample> invert_samples() {
  return {{{constant({0, -1, 12, 2147483647}, DType::Int32)}, {}},
          {{constant({-128, 0, 127}, DType::Int8)}, {}},
          {{constant({0, 1, 255}, DType::UInt8)}, {}},
          {{constant({-32768, 5, 32767}, DType::Int16)}, {}},
          {{constant({0, 65535, 300}, DType::UInt16)}, {}},
          {{constant({0u, 4294967295u, 1000000000u})}, {}},
          {{constant({int64_t(0), int64_t(-1) << 40, int64_t(1) << 52}, DType::Int64)}, {}},
          {{constant({~uint64_t(0) << 11, uint64_t(0x7ff), ~uint64_t(0) << 20})}, {}}};
}
// Shift counts below 0, at 0, inside, at the width minus 1, at the width and
// beyond, for each width; and a broadcast count.
std::vector<schema::OpSample> shift_samples() {
  return {{{constant({1, -5, 3, -14, 7, -1, 9}, DType::Int8), constant({-1, 0, 5, 7, 8, 100, -128}, DType::Int8)},
           {}},
          {{constant({1, 255, 3, 200, 7, 129}, DType::UInt8), constant({0, 1, 7, 8, 200, 4}, DType::UInt8)}, {}},
          {{constant({{1, -5}, {300, -300}}, DType::Int16), constant({{{-3}}, {{15}}, {{16}}}, DType::Int16)},
           {}},
          {{constant({1, 65535, 7}, DType::UInt16), constant({15, 16, 3}, DType::UInt16)}, {}},
          {{constant({1, -5, 3, -14, 7}, DType::Int32), constant({-1, 0, 31, 32, 1000}, DType::Int32)}, {}},
          {{constant({1u, 4294967295u, 9u}), constant({31u, 32u, 4u})}, {}},
          {{constant({int64_t(1), int64_t(-5), int64_t(3), int64_t(-14)}, DType::Int64),
            constant({int64_t(-7), int64_t(63), int64_t(64), int64_t(40)}, DType::Int64)}, {}},
          {{constant({uint64_t(1), uint64_t(1) << 63, uint64_t(12345)}), constant({uint64_t(63), uint64_t(64), uint64_t(5)})},
           {}}};
}

constexpr detail::OpDef kBitwiseAnd = with_reference(binary_op<BitwiseAndFn>("BitwiseAnd", logic_samples, nullptr),
                                                     and_reference);
constexpr detail::OpDef kBitwiseOr = with_reference(binary_op<BitwiseOrFn>("BitwiseOr", logic_samples, nullptr),
                                                    or_reference);
constexpr detail::OpDef kBitwiseXor = with_reference(binary_op<BitwiseXorFn>("BitwiseXor", logic_samples, nullptr),
                                                     xor_reference);
constexpr detail::OpDef kInvert = with_reference(unary_op<InvertFn>("Invert", invert_samples, nullptr),
                                                 invert_reference);
constexpr detail::OpDef kLeftShift = with_reference(binary_op<LeftShiftFn>("LeftShift", shift_samples, nullptr),
                                                    left_shift_reference);
constexpr detail::OpDef kRightShift = with_reference(binary_op<RightShiftFn>("RightShift", shift_samples, nullptr),
                                                     right_shift_reference);

// Whether an operator is logical: by the dtype of the tensor among its
// operands (x's when both are). Bools are; anything else goes to the bitwise
// op, which refuses non-integers, as TF's Tensor operators route them.
bool logical_operands(const Operand& x, const Operand& y) {
  const Operand& t = x.is_tensor() ? x : y;
  return !t.is_tensor() || t.tensor().dtype() == DType::Bool;
}

}  // namespace

void register_bitwise_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kBitwiseAnd, &kBitwiseOr, &kBitwiseXor, &kInvert, &kLeftShift, &kRightShift})
    r.add(*op);
}

}  // namespace ops

namespace bitwise {

Tensor bitwise_and(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::dispatch_binary(ops::kBitwiseAnd, x, y, "bitwise_and", loc);
}
Tensor bitwise_or(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::dispatch_binary(ops::kBitwiseOr, x, y, "bitwise_or", loc);
}
Tensor bitwise_xor(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::dispatch_binary(ops::kBitwiseXor, x, y, "bitwise_xor", loc);
}
Tensor invert(Tensor x, SourceLocation loc) {
  const Tensor in[] = {std::move(x)};
  return runtime::dispatch1(ops::kInvert, in, schema::Attrs{}, loc);
}
Tensor left_shift(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::dispatch_binary(ops::kLeftShift, x, y, "left_shift", loc);
}
Tensor right_shift(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::dispatch_binary(ops::kRightShift, x, y, "right_shift", loc);
}

}  // namespace bitwise

Tensor and_(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::logical_operands(x, y) ? logical_and(x, y, loc) : bitwise::bitwise_and(x, y, loc);
}
Tensor or_(const Operand& x, const Operand& y, SourceLocation loc) {
  return ops::logical_operands(x, y) ? logical_or(x, y, loc) : bitwise::bitwise_or(x, y, loc);
}
// Logical xor as TF's logical_xor composes it: (x or y) and not (x and y).
Tensor xor_(const Operand& x, const Operand& y, SourceLocation loc) {
  if (!ops::logical_operands(x, y)) return bitwise::bitwise_xor(x, y, loc);
  ops::BinaryInputs in = ops::binary_inputs(x, y, "logical_xor");
  const Tensor &a = in.inputs[0], &b = in.inputs[1];
  return logical_and(logical_or(a, b, loc), logical_not(logical_and(a, b, loc), loc), loc);
}
Tensor invert_(Tensor x, SourceLocation loc) {
  return x.dtype() == DType::Bool ? logical_not(std::move(x), loc) : bitwise::invert(std::move(x), loc);
}

Tensor operator&(const Operand& x, const Operand& y) { return and_(x, y, x.location()); }
Tensor operator|(const Operand& x, const Operand& y) { return or_(x, y, x.location()); }
Tensor operator^(const Operand& x, const Operand& y) { return xor_(x, y, x.location()); }
Tensor operator~(const Tensor& x) { return invert_(x, SourceLocation{}); }
Tensor operator<<(const Operand& x, const Operand& y) { return bitwise::left_shift(x, y, x.location()); }
Tensor operator>>(const Operand& x, const Operand& y) { return bitwise::right_shift(x, y, x.location()); }

}  // namespace kiln
