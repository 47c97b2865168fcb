#include "ops/op_def.h"

namespace kiln::detail {
void register_reduce_ops(OpRegistry&) {}
}  // namespace kiln::detail
