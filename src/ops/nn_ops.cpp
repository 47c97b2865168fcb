#include "ops/op_def.h"

namespace kiln::detail {
void register_nn_ops(OpRegistry&) {}
}  // namespace kiln::detail
