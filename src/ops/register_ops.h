#pragma once
// The registration functions of the ops defined in src/ops, one per file or
// family; src/registry/register_ops.cpp calls them (docs/design-notes.md, "Foundation").
#include "schema/op_def.h"

namespace kiln::ops {
void register_creation_ops(schema::OpRegistry& registry);
void register_math_ops(schema::OpRegistry& registry);
void register_reduce_ops(schema::OpRegistry& registry);
void register_scan_ops(schema::OpRegistry& registry);
void register_sort_ops(schema::OpRegistry& registry);
void register_scatter_nd_ops(schema::OpRegistry& registry);
void register_segment_ops(schema::OpRegistry& registry);
void register_array_ops(schema::OpRegistry& registry);
void register_nn_ops(schema::OpRegistry& registry);
void register_print_ops(schema::OpRegistry& registry);
void register_random_ops(schema::OpRegistry& registry);
void register_variable_ops(schema::OpRegistry& registry);
void register_training_ops(schema::OpRegistry& registry);
void register_host_function_ops(schema::OpRegistry& registry);
void register_grad_ops(schema::OpRegistry& registry);
void register_linalg_ops(schema::OpRegistry& registry);  // linalg_lu_ops.cpp: LAPACK factorizations and solves
void register_image_ops(schema::OpRegistry& registry);  // image_ops.cpp: resize
void register_audio_ops(schema::OpRegistry& registry);  // audio_ops.cpp: WAV decoding and encoding
void register_file_ops(schema::OpRegistry& registry);  // file_ops.cpp: ReadFile
}  // namespace kiln::ops
