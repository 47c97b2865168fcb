// Activations that TF builds from other ops (tf.nn.gelu, silu, leaky_relu):
// composites here too, so their gradients come from the ops they are made of.
#include "kiln/math.h"
#include "kiln/nn_ops.h"

namespace kiln::nn {

Tensor gelu(const Tensor& x, bool approximate, SourceLocation loc) {
  Operand half(0.5, loc), one(1.0, loc);
  if (!approximate)  // 0.5 x (1 + erf(x / sqrt(2)))
    return multiply(multiply(half, x, loc), add(one, erf(multiply(x, 0.7071067811865476, loc), loc), loc), loc);
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
  Tensor cube = multiply(multiply(x, x, loc), x, loc);
  Tensor inner = multiply(add(x, multiply(cube, 0.044715, loc), loc), 0.7978845608028654, loc);
  return multiply(multiply(half, x, loc), add(one, tanh(inner, loc), loc), loc);
}

Tensor silu(const Tensor& x, SourceLocation loc) { return multiply(x, sigmoid(x, loc), loc); }

Tensor leaky_relu(const Tensor& x, double alpha, SourceLocation loc) {
  return where(greater(x, 0, loc), x, multiply(x, alpha, loc), loc);
}

}  // namespace kiln::nn
