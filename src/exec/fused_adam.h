#pragma once
// FusedApplyAdam(var_0, m_0, v_0, grad_0, ..., var_n-1, m_n-1, v_n-1, grad_n-1,
// alpha): the ApplyAdam updates of a training step in one op, made by the
// optimizer-update pass from ApplyAdam nodes that follow each other in program
// order with the same alpha and attrs (dtype, beta_1, beta_2, epsilon). One
// parallel pass runs over all the variables' elements, laid end to end,
// instead of one pass (and one fork and join of the threads) per variable;
// each element gets ApplyAdam's own code, so the bits are ApplyAdam's.
#include "graph/graph.h"

namespace kiln::passes {

const detail::OpDef& fused_apply_adam_op();

}  // namespace kiln::passes
