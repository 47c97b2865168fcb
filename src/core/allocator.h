#pragma once
// Size-bucketed caching allocator. Every tensor buffer comes from here, so
// eager code that makes and drops same-sized tensors (the common case) reuses
// memory instead of paying malloc, page faults and zeroing each time. Freed
// blocks go to a per-thread cache: no lock on the hot path.
#include <cstddef>
#include <cstdint>

namespace kiln::detail {

inline constexpr std::size_t kBufferAlignment = 64;

// Returns a block of at least `nbytes` bytes, 64-byte aligned.
void* allocate_block(std::size_t nbytes, std::size_t* capacity);
// Returns a block obtained from allocate_block (capacity as it reported).
void free_block(void* block, std::size_t capacity) noexcept;

struct AllocatorStats {
  int64_t cache_hits = 0;
  int64_t system_allocations = 0;
  int64_t bytes_cached = 0;
};
// The calling thread's figures.
AllocatorStats allocator_stats();

}  // namespace kiln::detail
