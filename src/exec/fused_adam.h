#pragma once
// FusedApplyAdam(var_0, m_0, v_0, <gradient 0>, ..., var_n-1, m_n-1, v_n-1,
// <gradient n-1>, alpha): the ApplyAdam updates of a training step in one op,
// made by the optimizer-update pass from ApplyAdam nodes that follow each
// other in program order with the same alpha and attrs (dtype, beta_1,
// beta_2, epsilon). One parallel pass runs over all the variables' elements,
// laid end to end, instead of one pass (and one fork and join of the threads)
// per variable; each element gets ApplyAdam's own code, so the bits are
// ApplyAdam's.
//
// Attr `grad_from_matmul` (one 0 or 1 per variable): a 1 means the
// variable's gradient is given as the two inputs a, b of the float32
// MatMul(a, b, transpose_a=true) that made it (a dense layer's weight
// gradient, x^T dy) instead of as one tensor. The kernel then makes the
// gradient a band of rows at a time, each band with the same oneDNN matmul
// restricted to its rows, and updates those rows while the band is in cache:
// the gradient is never written to memory whole, and the update reads it
// from cache (about a third of the memory traffic of a large layer's update).
//
// A float32 variable's gradient may be bfloat16 (mixed_bfloat16's: the pass
// takes it from the Cast that widened it): the kernel widens it (exactly) a
// band of rows at a time as the update reads it, so the float32 gradient is
// never written whole.
#include "graph/graph.h"

namespace kiln::exec {

const detail::OpDef& fused_apply_adam_op();

}  // namespace kiln::exec
