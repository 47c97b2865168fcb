#pragma once
// The test binary replaces the global operator new (counting_allocator.cpp):
// every heap allocation made through new, on any thread, is counted.
#include <cstdint>

namespace kiln::testing {

int64_t heap_allocations();

// Heap allocations made while `body` runs.
template <class F> int64_t count_heap_allocations(F&& body) {
  int64_t before = heap_allocations();
  body();
  return heap_allocations() - before;
}

}  // namespace kiln::testing
