#pragma once
// Kiln's bridge to oneDNN: the CPU engine, a stream per thread, a bounded
// cache of primitives and per-thread scratch memory.
//
// Creating a oneDNN primitive (descriptor, implementation search, JIT code)
// costs tens to hundreds of microseconds, far more than running a small one,
// so every primitive is created once per (op, shapes, attrs) and kept.
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <memory>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

namespace kiln::ops::onednn {

dnnl::engine& engine();
// Streams are cheap but not meant to be shared between threads that execute
// at the same time, so each thread has its own.
dnnl::stream& stream();

// Identifies a primitive: which op and every number that shapes it.
struct PrimitiveKey {
  static constexpr int kMaxValues = 40;
  uint32_t kind = 0;
  int count = 0;
  std::array<int64_t, kMaxValues> values{};

  explicit PrimitiveKey(uint32_t kind) : kind(kind) {}
  // Returns false when the key is full (the caller then skips the cache).
  bool add(int64_t v) {
    if (count == kMaxValues) return false;
    values[count++] = v;
    return true;
  }
  friend bool operator==(const PrimitiveKey& a, const PrimitiveKey& b);
};

struct PrimitiveKeyHash {
  std::size_t operator()(const PrimitiveKey& k) const;
};

// A thread-safe LRU cache of immutable entries (a primitive and what running it
// needs). Entries are shared_ptrs, so one evicted while another thread still
// runs it stays alive until that run ends.
class PrimitiveCache {
 public:
  explicit PrimitiveCache(std::size_t capacity) : capacity_(capacity) {}

  // The entry for `key`, created by `make` on a miss. `make` may throw (then
  // nothing is cached). Two threads missing at once may both create; one wins.
  std::shared_ptr<const void> get(const PrimitiveKey& key,
                                  const std::function<std::shared_ptr<const void>()>& make);

  std::size_t size() const;
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  void clear();

 private:
  struct Entry {
    std::shared_ptr<const void> value;
    uint64_t last_use = 0;
  };
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_map<PrimitiveKey, Entry, PrimitiveKeyHash> map_;
  uint64_t clock_ = 0;
  uint64_t hits_ = 0, misses_ = 0;
};

// The process-wide cache (256 entries).
PrimitiveCache& primitive_cache();

// Typed access: `make` returns a std::shared_ptr<const T>.
template <class T, class Make>
std::shared_ptr<const T> cached(const PrimitiveKey& key, Make&& make) {
  return std::static_pointer_cast<const T>(
      primitive_cache().get(key, [&]() -> std::shared_ptr<const void> { return make(); }));
}

// Per-thread scratch memory, 64-byte aligned, grown on demand and reused by
// later calls on the same thread (no allocation per call in steady state).
// Slots are independent buffers; the pointer stays valid until the same
// thread asks for the same slot again.
enum ScratchSlot { kScratchpad = 0, kWeights = 1, kNumScratchSlots = 2 };
void* scratch(ScratchSlot slot, std::size_t bytes);

// A primitive ready to run with no heap allocation on Kiln's side: its
// arguments' memory objects are made once and only their data handles change
// per call, and the arguments go to oneDNN's C API as an array on the stack
// (the C++ API builds a std::vector, and the old argument map and memory
// objects allocated too). A memory object must not be used by two threads at
// once, so each call claims one set of them from a small lock-free pool; a
// thread finding the pool empty makes a set (and keeps it when a slot is
// free), so steady state on any number of threads allocates nothing.
// oneDNN's own dnnl_primitive_execute still allocates its internal argument
// map (see docs/design-notes.md); nothing on this side can avoid that.
class Executable {
 public:
  static constexpr int kMaxArgs = 6;

  Executable() = default;
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;
  ~Executable();

  struct Arg {
    int arg;  // DNNL_ARG_*
    dnnl::memory::desc desc;
  };
  // Set once, before the owning cache entry is shared. A primitive that needs
  // a scratchpad gets this thread's kScratchpad buffer as its last argument.
  void init(dnnl::primitive prim, std::initializer_list<Arg> args, std::size_t scratch_bytes);
  explicit operator bool() const { return bool(prim_); }

  // Runs on this thread's stream and waits; data[i] is the buffer of the
  // i-th argument given to init. Throws dnnl::error when oneDNN fails.
  void run(std::initializer_list<const void*> data) const;

 private:
  struct Memories;
  static constexpr int kPoolSize = 8;
  Memories* claim() const;
  void give_back(Memories* m) const;

  dnnl::primitive prim_;
  int nargs_ = 0;  // with the scratchpad
  int args_[kMaxArgs + 1] = {};
  dnnl_memory_desc_t descs_[kMaxArgs + 1] = {};
  std::size_t scratch_bytes_ = 0;
  mutable std::array<std::atomic<Memories*>, kPoolSize> pool_{};
};

// A plain (row-major or strided) memory descriptor of float32 (or `type`) values.
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides,
                              dnnl::memory::data_type type = dnnl::memory::data_type::f32);

// Whether bfloat16 MatMul and Conv2D (and its backprops) run on oneDNN's bf16
// kernels, which multiply on the CPU's bf16 instructions and accumulate in
// float32: where oneDNN's effective ISA has AVX512_BF16 or AMX (the
// ONEDNN_MAX_CPU_ISA environment variable can lower it). Elsewhere those ops
// compute bfloat16 in float32 through the widen bridge, which is faster than
// oneDNN's emulation of bf16 there.
bool bf16_kernels();

// A bf16 primitive worth running: not oneDNN's reference implementation
// (naive loops, slower than the float32 path the caller falls back to).
bool is_fast_impl(const char* impl_info);

// out [rows, n] = a [rows, k] b, a and out row-major and b of k x n as
// b_desc(k, n, variant) describes it (a weight layout's; made only when the
// primitive is, since building a desc allocates): MatMul's float32 primitive
// for those operands (user scratchpad), so its bits, cached under `key`,
// which names everything the desc depends on. False where oneDNN cannot run it.
bool matmul_with_b(const PrimitiveKey& key, int64_t rows, int64_t k, int64_t n,
                   dnnl::memory::desc (*b_desc)(int64_t k, int64_t n, int64_t variant), int64_t variant,
                   const float* a, const float* b_data, float* out);

}  // namespace kiln::ops::onednn
