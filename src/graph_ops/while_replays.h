#pragma once
// The While ops that a while_loop's gradient adds to run the forward loop
// once more (stacking each iteration's loop variables, graph_gradients.cpp):
// which forward loop each one replays, so that the pass
// passes::merge_while_replays can take the forward results from the replay
// and drop the forward loop (one pass over the loop instead of two).
#include <cstddef>
#include <memory>
#include <optional>

#include "graph/graph.h"

namespace kiln::graph_ops {

struct WhileReplay {
  // The forward loop's condition and body.
  std::shared_ptr<const graph::Graph> cond, body;
  // The replay's first `inputs` inputs are the forward loop's inputs, and
  // its first `outputs` outputs equal the forward loop's outputs.
  std::size_t inputs = 0, outputs = 0;
  // Its loop variables from this one on are the leaves of stacks that each
  // iteration writes one more row of (a gradient of the replay, a second
  // derivative, takes their final values instead of stacking them).
  std::size_t stacks_from = 0;
};

// Notes that a While op with body `replay_body` replays a forward loop.
// Entries go when the graphs they name are gone.
void note_while_replay(const std::shared_ptr<const graph::Graph>& replay_body, const WhileReplay& replay);
// What a While op with this body replays, if it is a replay.
std::optional<WhileReplay> while_replay_of(const graph::Graph* replay_body);

}  // namespace kiln::graph_ops
