#pragma once
// The registration functions of the ops defined in src/ops, one per file or
// family; src/registry/register_ops.cpp calls them (DESIGN.md §3).
#include "schema/op_def.h"

namespace kiln::detail {
void register_creation_ops(OpRegistry& registry);
void register_math_ops(OpRegistry& registry);
void register_reduce_ops(OpRegistry& registry);
void register_scan_ops(OpRegistry& registry);
void register_sort_ops(OpRegistry& registry);
void register_scatter_nd_ops(OpRegistry& registry);
void register_segment_ops(OpRegistry& registry);
void register_array_ops(OpRegistry& registry);
void register_nn_ops(OpRegistry& registry);
void register_print_ops(OpRegistry& registry);
void register_random_ops(OpRegistry& registry);
void register_variable_ops(OpRegistry& registry);
void register_training_ops(OpRegistry& registry);
void register_host_function_ops(OpRegistry& registry);
void register_grad_ops(OpRegistry& registry);
}  // namespace kiln::detail
