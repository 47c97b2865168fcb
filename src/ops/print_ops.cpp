#include "ops/op_def.h"

namespace kiln::detail {
void register_print_ops(OpRegistry&) {}
}  // namespace kiln::detail
