#include "core/allocator.h"

#include <sys/sysinfo.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <new>
#include <vector>

namespace kiln::core {

namespace {

// Size classes: 64 bytes, then four classes per power of two (at most 25%
// waste), like jemalloc's.
constexpr int kNumClasses = 4 * 48;
constexpr std::size_t kMaxCachedBytesPerThread = std::size_t(1) << 30;

int size_class(std::size_t n, std::size_t* rounded) {
  if (n <= 64) {
    *rounded = 64;
    return 0;
  }
  int log = std::bit_width(n - 1) - 1;  // 2^log < n <= 2^(log+1)
  std::size_t base = std::size_t(1) << log;
  std::size_t step = base / 4;
  std::size_t k = (n - base + step - 1) / step;  // 1..4
  *rounded = base + k * step;
  return 1 + (log - 6) * 4 + static_cast<int>(k - 1);
}

std::size_t max_cached_blocks(std::size_t capacity) {
  return capacity >= (std::size_t(1) << 20) ? 8 : 64;
}

// Set when this thread's cache is destroyed (thread or program exit): a
// block freed after that (by a static tensor) goes straight to the heap.
thread_local bool thread_cache_gone = false;

struct ThreadCache {
  std::vector<void*> free[kNumClasses];
  std::size_t cached_bytes = 0;
  AllocatorStats stats;
  ~ThreadCache() {
    clear();
    thread_cache_gone = true;
  }
  void clear() noexcept {
    for (int c = 0; c < kNumClasses; ++c) {
      for (void* p : free[c]) ::operator delete(p, std::align_val_t(kBufferAlignment));
      free[c].clear();
    }
    cached_bytes = 0;
  }
};

ThreadCache& cache() {
  thread_local ThreadCache c;
  return c;
}

}  // namespace

void* allocate_block(std::size_t nbytes, std::size_t* capacity) {
  std::size_t rounded;
  int c = size_class(nbytes, &rounded);
  *capacity = rounded;
  if (thread_cache_gone) [[unlikely]]
    return ::operator new(rounded, std::align_val_t(kBufferAlignment));
  ThreadCache& tc = cache();
  tc.stats.bytes_allocated += static_cast<int64_t>(nbytes);
  if (c < kNumClasses && !tc.free[c].empty()) {
    void* p = tc.free[c].back();
    tc.free[c].pop_back();
    tc.cached_bytes -= rounded;
    ++tc.stats.cache_hits;
    return p;
  }
  ++tc.stats.system_allocations;
  return ::operator new(rounded, std::align_val_t(kBufferAlignment));
}

void free_block(void* block, std::size_t capacity) noexcept {
  std::size_t rounded;
  int c = size_class(capacity, &rounded);
  if (thread_cache_gone) [[unlikely]] {
    ::operator delete(block, std::align_val_t(kBufferAlignment));
    return;
  }
  ThreadCache& tc = cache();
  if (c < kNumClasses && tc.free[c].size() < max_cached_blocks(capacity) &&
      tc.cached_bytes + capacity <= kMaxCachedBytesPerThread) {
    try {
      tc.free[c].push_back(block);
      tc.cached_bytes += capacity;
      return;
    } catch (...) {
    }
  }
  ::operator delete(block, std::align_val_t(kBufferAlignment));
}

namespace {
// 0 until first needed (then the machine's memory) or set.
std::atomic<std::size_t> allocation_limit{0};

std::size_t machine_memory() {
  struct sysinfo info {};
  if (sysinfo(&info) != 0) return SIZE_MAX;
  unsigned __int128 bytes = (static_cast<unsigned __int128>(info.totalram) + info.totalswap) * info.mem_unit;
  return bytes > SIZE_MAX ? SIZE_MAX : static_cast<std::size_t>(bytes);
}
}  // namespace

std::size_t max_allocation_bytes() {
  std::size_t limit = allocation_limit.load(std::memory_order_relaxed);
  if (limit == 0) {
    limit = machine_memory();
    allocation_limit.store(limit, std::memory_order_relaxed);
  }
  return limit;
}

void set_max_allocation_bytes(std::size_t bytes) { allocation_limit.store(bytes, std::memory_order_relaxed); }

bool allocation_within_limit(std::size_t bytes) {
  return bytes <= allocation_limit.load(std::memory_order_relaxed) || bytes <= max_allocation_bytes();
}

AllocatorStats allocator_stats() {
  if (thread_cache_gone) return {};
  AllocatorStats s = cache().stats;
  s.bytes_cached = static_cast<int64_t>(cache().cached_bytes);
  return s;
}

int64_t bytes_allocated_by_this_thread() { return thread_cache_gone ? 0 : cache().stats.bytes_allocated; }

}  // namespace kiln::core
