#pragma once
// Internal entry points of src/distributed for the rest of the library.
#include <span>
#include <string>
#include <vector>

#include "kiln/distributed.h"
#include "schema/op_def.h"

namespace kiln::distributed {

// One bucket of average_gradients: the tensors (one dtype) reduced as one
// message. `fingerprint` and `layout` describe the whole bucket plan, which
// the ranks compare the first time they run it.
std::vector<Tensor> grouped_allreduce(std::span<const Tensor> tensors, distributed::Reduction op, int bucket,
                                      int num_buckets, uint64_t fingerprint, const std::string& layout,
                                      SourceLocation loc = SourceLocation::current());

// Adds Allreduce, GroupedAllreduce, Broadcast, Reduce, Allgather.
void register_distributed_ops(schema::OpRegistry& registry);

}  // namespace kiln::distributed
