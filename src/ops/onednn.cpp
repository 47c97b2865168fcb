#include "ops/onednn.h"

#include <cstdlib>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string_view>

namespace kiln::ops::onednn {

dnnl::engine& engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

bool operator==(const PrimitiveKey& a, const PrimitiveKey& b) {
  if (a.kind != b.kind || a.count != b.count) return false;
  for (int i = 0; i < a.count; ++i)
    if (a.values[i] != b.values[i]) return false;
  return true;
}

std::size_t PrimitiveKeyHash::operator()(const PrimitiveKey& k) const {
  uint64_t h = 1469598103934665603ull ^ k.kind;
  for (int i = 0; i < k.count; ++i) {
    h ^= static_cast<uint64_t>(k.values[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
  }
  return static_cast<std::size_t>(h);
}

std::shared_ptr<const void> PrimitiveCache::get(
    const PrimitiveKey& key, const std::function<std::shared_ptr<const void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      ++hits_;
      it->second.last_use = ++clock_;
      return it->second.value;
    }
    ++misses_;
  }
  // Created outside the lock: creation is slow and may itself run in parallel.
  std::shared_ptr<const void> value = make();
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = map_.try_emplace(key);
  if (!inserted) return it->second.value;  // another thread was faster
  it->second.value = value;
  it->second.last_use = ++clock_;
  if (map_.size() > capacity_) {
    // Evict the least recently used entry. A linear scan is fine: misses are
    // rare and already pay for a primitive's creation.
    auto victim = map_.begin();
    for (auto i = map_.begin(); i != map_.end(); ++i)
      if (i->second.last_use < victim->second.last_use) victim = i;
    map_.erase(victim);
  }
  return value;
}

std::size_t PrimitiveCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return map_.size();
}

void PrimitiveCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  map_.clear();
}

PrimitiveCache& primitive_cache() {
  static PrimitiveCache* cache = new PrimitiveCache(256);
  return *cache;
}

namespace {

struct ScratchBuffers {
  void* data[kNumScratchSlots] = {};
  std::size_t bytes[kNumScratchSlots] = {};
  ~ScratchBuffers() {
    for (void* p : data) std::free(p);
  }
};

}  // namespace

void* scratch(ScratchSlot slot, std::size_t bytes) {
  thread_local ScratchBuffers buffers;
  if (bytes > buffers.bytes[slot]) {
    std::free(buffers.data[slot]);
    std::size_t rounded = (bytes + 4095) / 4096 * 4096;
    buffers.data[slot] = std::aligned_alloc(64, rounded);
    if (!buffers.data[slot]) {
      buffers.bytes[slot] = 0;
      throw std::bad_alloc();
    }
    buffers.bytes[slot] = rounded;
  }
  return buffers.data[slot];
}

// One set of memory objects for an Executable's arguments, with the data
// handle each holds (set again only when it changes).
struct Executable::Memories {
  dnnl_memory_t memory[kMaxArgs + 1] = {};
  const void* handle[kMaxArgs + 1] = {};
};

void Executable::init(dnnl::primitive prim, std::initializer_list<Arg> args, std::size_t scratch_bytes) {
  if (args.size() > kMaxArgs) throw std::invalid_argument("oneDNN primitive with too many arguments");
  prim_ = std::move(prim);
  nargs_ = 0;
  for (const Arg& a : args) {
    args_[nargs_] = a.arg;
    descs_[nargs_++] = a.desc.data;
  }
  scratch_bytes_ = scratch_bytes;
  if (scratch_bytes) {
    args_[nargs_] = DNNL_ARG_SCRATCHPAD;
    descs_[nargs_++] = dnnl::memory::desc({static_cast<int64_t>(scratch_bytes)}, dnnl::memory::data_type::u8,
                                          dnnl::memory::format_tag::a)
                           .data;
  }
}

Executable::~Executable() {
  for (auto& slot : pool_) {
    Memories* m = slot.load(std::memory_order_acquire);
    if (!m) continue;
    for (int i = 0; i < nargs_; ++i) dnnl_memory_destroy(m->memory[i]);
    delete m;
  }
}

Executable::Memories* Executable::claim() const {
  for (auto& slot : pool_) {
    if (slot.load(std::memory_order_relaxed) == nullptr) continue;
    if (Memories* m = slot.exchange(nullptr, std::memory_order_acquire)) return m;
  }
  auto m = std::make_unique<Memories>();
  for (int i = 0; i < nargs_; ++i) {
    dnnl_status_t status = dnnl_memory_create(&m->memory[i], &descs_[i], engine().get(), DNNL_MEMORY_NONE);
    if (status != dnnl_success) {
      for (int j = 0; j < i; ++j) dnnl_memory_destroy(m->memory[j]);
      dnnl::error::wrap_c_api(status, "could not create a memory object");
    }
  }
  return m.release();
}

void Executable::give_back(Memories* m) const {
  for (auto& slot : pool_) {
    Memories* empty = nullptr;
    if (slot.compare_exchange_strong(empty, m, std::memory_order_release, std::memory_order_relaxed)) return;
  }
  // More threads ran this primitive at once than the pool holds.
  for (int i = 0; i < nargs_; ++i) dnnl_memory_destroy(m->memory[i]);
  delete m;
}

void Executable::run(std::initializer_list<const void*> data) const {
  int given = static_cast<int>(data.size());
  if (given + (scratch_bytes_ ? 1 : 0) != nargs_)
    throw std::invalid_argument("oneDNN primitive run with the wrong number of arguments");
  Memories* m = claim();
  struct Release {
    const Executable* e;
    Memories* m;
    ~Release() { e->give_back(m); }
  } release{this, m};
  dnnl_exec_arg_t args[kMaxArgs + 1];
  auto bind = [&](int i, const void* handle) {
    if (m->handle[i] != handle) {
      // Plain layouts have no padding, so this writes nothing; a padded
      // (blocked weights) layout gets its padding zeroed, as oneDNN requires.
      dnnl::error::wrap_c_api(dnnl_memory_set_data_handle_v2(m->memory[i], const_cast<void*>(handle), nullptr),
                              "could not set a memory handle");
      m->handle[i] = handle;
    }
    args[i] = {args_[i], m->memory[i]};
  };
  int i = 0;
  for (const void* handle : data) bind(i++, handle);
  if (scratch_bytes_) bind(i, scratch(kScratchpad, scratch_bytes_));
  dnnl_stream_t s = stream().get();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim_.get(), s, nargs_, args), "could not execute a primitive");
  dnnl::error::wrap_c_api(dnnl_stream_wait(s), "could not wait on a stream");
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides,
                              dnnl::memory::data_type type) {
  return dnnl::memory::desc(dims, type, strides);
}

bool bf16_kernels() {
  static const bool available = [] {
    // The ISA values are masks: AMX's holds AVX512_BF16's bits.
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (isa & bf16) == bf16;
  }();
  return available;
}

bool is_fast_impl(const char* impl_info) { return std::string_view(impl_info).rfind("ref", 0) != 0; }

namespace {
struct MatmulWithB {
  Executable exec;  // (a, b, c)
};
}  // namespace

bool matmul_with_b(const PrimitiveKey& key, int64_t rows, int64_t k, int64_t n,
                   dnnl::memory::desc (*b_desc)(int64_t k, int64_t n, int64_t variant), int64_t variant,
                   const float* a, const float* b_data, float* out) {
  try {
    auto p = cached<MatmulWithB>(key, [&] {
      using dims = dnnl::memory::dims;
      const dnnl::memory::desc ad = plain_desc(dims{rows, k}, dims{k, 1});
      const dnnl::memory::desc cd = plain_desc(dims{rows, n}, dims{n, 1});
      const dnnl::memory::desc b = b_desc(k, n, variant);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(ad, b, cd), attr, engine());
      auto made = std::make_shared<MatmulWithB>();
      made->exec.init(dnnl::matmul(pd), {{DNNL_ARG_SRC, ad}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, cd}},
                      pd.scratchpad_desc().get_size());
      return made;
    });
    p->exec.run({a, b_data, out});
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace kiln::ops::onednn
