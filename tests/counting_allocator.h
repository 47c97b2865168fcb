#pragma once
// The test binary replaces the global operator new (counting_allocator.cpp):
// every heap allocation made through new, on any thread, is counted.
#include <cstdint>

namespace kiln::testing {

int64_t heap_allocations();

// oneDNN 2.x's dnnl_primitive_execute builds its own argument map (an
// std::unordered_map) on the heap at every call, which no caller can avoid.
// The test binary interposes that function (counting_allocator.cpp) and
// counts the executes and the allocations made while one runs (on any
// thread: kernels' threads run inside it), so tests can tell Kiln's
// allocations from oneDNN's.
int64_t onednn_executes();
int64_t onednn_execute_allocations();

// Heap allocations made while `body` runs.
template <class F> int64_t count_heap_allocations(F&& body) {
  int64_t before = heap_allocations();
  body();
  return heap_allocations() - before;
}

}  // namespace kiln::testing
