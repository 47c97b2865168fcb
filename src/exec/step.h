#pragma once
// One step of a Plan: a node to run, read from and written to numbered slots.
#include "core/small_vector.h"
#include "graph/graph.h"

namespace kiln::exec {

struct Step {
  const graph::Node* node;
  detail::SmallVector<int, 3> inputs;   // slots
  detail::SmallVector<int, 2> outputs;  // slots
  // For each input: whether this is the slot's last use, so the frame can
  // hand the tensor over (letting an in-place kernel reuse its buffer).
  detail::SmallVector<bool, 3> last_use;
  // For each output: its allocation in the memory plan, or -1 (the kernel
  // or the caching allocator provides it).
  detail::SmallVector<int, 2> arena_allocation;
  // For each output: whether a later step or the caller reads it (an unread
  // output is dropped at once, so its memory is free again).
  detail::SmallVector<bool, 2> output_read;
  // Whether some output_read is false (kept apart: the executor checks it
  // on every step).
  bool drops_outputs = false;
  // Whether every input and output type is fully known when the plan is
  // built (no relaxed dims, no host callback upstream): then the step skips
  // type inference and uses the node's output types.
  bool static_types = false;
  bool uses_arena = false;  // some output has an arena allocation
  // A background op (OpDef::start): its number among the plan's background
  // steps, else -1.
  int background = -1;
  // Background steps to finish before this one runs (it reads their outputs).
  detail::SmallVector<int, 1> finish_first;
};

}  // namespace kiln::exec
