#pragma once
// tf.bitwise: elementwise bit operations on integer tensors (int8, int16,
// int32, int64, uint8, uint16, uint32, uint64), broadcasting as NumPy does; a
// C++ number takes the other operand's dtype. Not differentiable. The
// operators `&`, `|`, `^`, `~`, `<<`, `>>` on integer tensors call these.
#include "kiln/tensor.h"

namespace kiln::bitwise {

Tensor bitwise_and(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor bitwise_or(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor bitwise_xor(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
// ~x: every bit flipped.
Tensor invert(Tensor x, SourceLocation loc = SourceLocation::current());
// x shifted by y bits, as TF's kernels: a count below 0 shifts by 0, one of
// the width or more by the width minus 1 (so 1 << 40 in int32 is INT_MIN, and
// -8 >> 99 is -1). Left shifts wrap; right shifts of signed values keep the sign.
Tensor left_shift(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor right_shift(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());

}  // namespace kiln::bitwise

namespace kiln {

// `&`, `|`, `^`, `~` as TF's Tensor has them: logic on bool tensors, bits on
// the others (integer tensors; a float operand is refused by the bit op),
// chosen by the tensor operand's dtype (x's when both are tensors). `&` and
// `|` are declared in kiln/math.h. and_/or_/xor_/invert_ are the same with a
// source location (TF's math_ops.and_, ...). `<<` and `>>` shift integer
// tensors (TF's Python Tensor has no such operators, only the functions).
Tensor and_(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor or_(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor xor_(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor invert_(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor operator^(const Operand& x, const Operand& y);
Tensor operator~(const Tensor& x);
Tensor operator<<(const Operand& x, const Operand& y);
Tensor operator>>(const Operand& x, const Operand& y);

}  // namespace kiln
