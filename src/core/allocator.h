#pragma once
// Size-bucketed caching allocator. Every tensor buffer comes from here, so
// eager code that makes and drops same-sized tensors (the common case) reuses
// memory instead of paying malloc, page faults and zeroing each time. Freed
// blocks go to a per-thread cache: no lock on the hot path.
#include <cstddef>
#include <cstdint>

namespace kiln::core {

inline constexpr std::size_t kBufferAlignment = 64;

// Returns a block of at least `nbytes` bytes, 64-byte aligned.
void* allocate_block(std::size_t nbytes, std::size_t* capacity);
// Returns a block obtained from allocate_block (capacity as it reported).
void free_block(void* block, std::size_t capacity) noexcept;

// The largest tensor buffer Kiln asks the system for; a larger request is
// ResourceExhausted at once. By default the machine's RAM plus swap: nothing
// larger can succeed, and with overcommit the system might grant it and kill
// the process on first touch instead of failing the call.
std::size_t max_allocation_bytes();
// Lowers (or raises) that limit; 0 restores the default. The fuzz target
// lowers it, so a hostile model's huge tensor fails before libFuzzer's own
// malloc limit does.
void set_max_allocation_bytes(std::size_t bytes);
// Whether a buffer of `bytes` is within that limit: one relaxed load.
bool allocation_within_limit(std::size_t bytes);

struct AllocatorStats {
  int64_t cache_hits = 0;
  int64_t system_allocations = 0;
  int64_t bytes_cached = 0;
  int64_t bytes_allocated = 0;  // asked for so far (headers included), from the cache or the system
};
// The calling thread's figures.
AllocatorStats allocator_stats();
// allocator_stats().bytes_allocated, for the profiler's per-op figures.
int64_t bytes_allocated_by_this_thread();

}  // namespace kiln::core
