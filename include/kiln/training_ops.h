#pragma once
// Fused optimizer updates, as TensorFlow's ResourceApply* ops: one op reads a
// variable, its slots and the gradient once and writes them back, instead of
// a chain of elementwise ops that each pass over the whole variable.
#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln {

// One Adam step (Keras' formula, with the bias correction folded into alpha):
//   m   <- m * beta_1 + grad * (1 - beta_1)
//   v   <- v * beta_2 + grad^2 * (1 - beta_2)
//   var <- var - alpha * m / (sqrt(v) + epsilon)
// var, m and v are three different float32 or float64 variables of one dtype
// and shape; grad has that dtype and shape, alpha is a scalar of that dtype.
// The betas and epsilon become the dtype as C++ numbers do in `tensor * 0.9`,
// so the result has the same bits as that composite formula. A value read
// from any of the variables before the update keeps its value.
void apply_adam(const Variable& var, const Variable& m, const Variable& v, const Tensor& grad, const Tensor& alpha,
                double beta_1, double beta_2, double epsilon, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
