#pragma once
// Every op sample of the registry as a graph (the sample's inputs as
// parameters), for the export tests.
#include <functional>

#include "graph/graph.h"
#include "schema/op_def.h"

namespace kiln::testing {

// Calls `fn(op, sample index, graph)` for every sample that traces (some
// samples are eager-only errors; those are skipped).
void for_each_op_sample(const std::function<void(const detail::OpDef&, int, const graph::Graph&)>& fn);
// The same, with the sample's inputs.
void for_each_op_sample(
    const std::function<void(const detail::OpDef&, int, const graph::Graph&, const schema::OpSample&)>& fn);

}  // namespace kiln::testing
