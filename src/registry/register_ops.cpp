// The one place that knows every op: OpRegistry::global() calls
// register_all_ops once. This folder is the top of src/ (docs/architecture.md),
// so it may include every folder that defines ops; the schema below knows none.
#include "distributed/collectives.h"
#include "exec/fused_elementwise.h"
#include "graph_ops/call_op.h"
#include "graph_ops/control_flow_ops.h"
#include "ops/register_ops.h"

namespace kiln::registry {

void register_all_ops(schema::OpRegistry& r) {
  // src/ops: every op on tensors.
  ops::register_creation_ops(r);
  ops::register_math_ops(r);
  ops::register_reduce_ops(r);
  ops::register_scan_ops(r);
  ops::register_sort_ops(r);
  ops::register_scatter_nd_ops(r);
  ops::register_segment_ops(r);
  ops::register_array_ops(r);
  ops::register_nn_ops(r);
  ops::register_print_ops(r);
  ops::register_random_ops(r);
  ops::register_variable_ops(r);
  ops::register_training_ops(r);
  ops::register_host_function_ops(r);
  ops::register_grad_ops(r);
  ops::register_linalg_ops(r);
  ops::register_image_ops(r);
  ops::register_audio_ops(r);
  ops::register_file_ops(r);
  // src/distributed: the collectives (a world of one until init()).
  distributed::register_distributed_ops(r);
  // src/graph_ops: ops whose attrs hold graphs.
  graph_ops::register_control_flow_ops(r);  // If, While and their Stateful twins
  graph_ops::register_call_ops(r);          // Call, StatefulCall
  // src/exec: the fused kernels the passes put in graphs.
  exec::register_fused_ops(r);
}

}  // namespace kiln::registry
