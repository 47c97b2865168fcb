// The registration entry of the elementwise math ops (unary_ops.cpp,
// binary_ops.cpp, compare_ops.cpp, bitwise_ops.cpp) and the C++ operators on
// tensors (the bitwise ones in bitwise_ops.cpp).
#include "kiln/math.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

void register_complex_ops(schema::OpRegistry& r);  // complex_ops.cpp
void register_bitwise_ops(schema::OpRegistry& r);  // bitwise_ops.cpp

void register_math_ops(schema::OpRegistry& r) {
  register_complex_ops(r);
  register_unary_ops(r);
  register_binary_ops(r);
  register_compare_ops(r);
  register_bitwise_ops(r);
}

namespace {
// A scalar operand of a unary operator (-2 with kiln's operators in scope)
// becomes a tensor of its natural dtype.
Tensor unary_operand(const Operand& x, const char* name) {
  return x.is_tensor() ? x.take()
                       : scalar_to_tensor(x.scalar(), x.scalar().natural_dtype(), name, x.location());
}
}  // namespace

}  // namespace ops

// Operators record the expression's line, which the left Operand carries.
Tensor operator+(const Operand& x, const Operand& y) { return add(x, y, x.location()); }
Tensor operator-(const Operand& x, const Operand& y) { return subtract(x, y, x.location()); }
Tensor operator*(const Operand& x, const Operand& y) { return multiply(x, y, x.location()); }
Tensor operator/(const Operand& x, const Operand& y) { return divide(x, y, x.location()); }
Tensor operator%(const Operand& x, const Operand& y) { return mod(x, y, x.location()); }
Tensor operator-(const Operand& x) { return negative(ops::unary_operand(x, "negative"), x.location()); }
Tensor operator==(const Operand& x, const Operand& y) { return equal(x, y, x.location()); }
Tensor operator!=(const Operand& x, const Operand& y) { return not_equal(x, y, x.location()); }
Tensor operator<(const Operand& x, const Operand& y) { return less(x, y, x.location()); }
Tensor operator<=(const Operand& x, const Operand& y) { return less_equal(x, y, x.location()); }
Tensor operator>(const Operand& x, const Operand& y) { return greater(x, y, x.location()); }
Tensor operator>=(const Operand& x, const Operand& y) { return greater_equal(x, y, x.location()); }
// &, |, ^, ~, <<, >>: bitwise_ops.cpp.

}  // namespace kiln
