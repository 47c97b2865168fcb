#pragma once
// Memory planning (docs/design-notes.md, "Graph passes"): when a plan's shapes are static, the
// values it computes live in one arena per call, at offsets fixed when the
// plan is built, so a call makes one allocation however many ops it runs.
//
// Values that share storage (a view and the value it views, an in-place
// result and the input it overwrote) form a group with one lifetime: from
// the first step that defines one of them to the last step that reads one.
// Allocations whose groups' lifetimes do not overlap may share bytes.
// Groups that can escape the call (a result, an input of a stateful op,
// which may keep it) are left to the caching allocator.
//
// The plan is a promise the static analysis cannot fully check (a kernel
// could keep a tensor), so the executor also checks it: when a group's
// lifetime ends, its allocations' headers must be unreferenced; if one is
// still held, the rest of that call allocates normally (see Plan::execute).
#include <cstdint>
#include <span>
#include <vector>

#include "exec/step.h"

namespace kiln::exec {

struct MemoryPlan {
  struct Allocation {
    DType dtype;
    int64_t count;   // elements
    int64_t offset;  // bytes from the arena's data start
    int64_t bytes;
    // The lifetime of the value's group, in steps (both ends included).
    int first_step, last_step;
  };
  std::vector<Allocation> allocations;
  // Allocation i's Buffer header sits at i * Buffer::kHeaderBytes; the data
  // region starts at data_start.
  int64_t data_start = 0;
  int64_t arena_bytes = 0;  // headers and data
  int64_t data_bytes = 0;   // the data region alone (peak of the live values)
  int64_t total_bytes = 0;  // what the allocations would take without sharing
  // ends[i]: allocations whose group's lifetime ends with step i.
  std::vector<std::vector<int>> ends;
};

// Fills each step's arena_allocation and uses_arena and returns the plan.
// `fed_slots`: the slots the caller fills; `result_slots`: the returned ones.
MemoryPlan plan_memory(const graph::Graph& graph, std::span<Step> steps, int num_slots,
                       std::span<const int> fed_slots, std::span<const int> result_slots);

}  // namespace kiln::exec
