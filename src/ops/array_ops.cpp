#include "ops/op_def.h"

namespace kiln::detail {
void register_array_ops(OpRegistry&) {}
}  // namespace kiln::detail
