#include "ops/onednn.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

namespace kiln::detail::onednn {

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

dnnl::memory scratchpad_memory(std::size_t bytes) {
  return dnnl::memory(dnnl::memory::desc({static_cast<int64_t>(bytes)}, dnnl::memory::data_type::u8,
                                         dnnl::memory::format_tag::a),
                      engine(), scratch(kScratchpad, bytes));
}

void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory>& args,
             std::size_t scratch_bytes) {
  if (scratch_bytes) args.emplace(DNNL_ARG_SCRATCHPAD, scratchpad_memory(scratch_bytes));
  dnnl::stream& s = stream();
  prim.execute(s, args);
  s.wait();
}

dnnl::primitive_attr bias_post_op_attr(const dnnl::memory::desc& bias) {
  // A new attr: copies of a dnnl handle share one object.
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  ops.append_binary(dnnl::algorithm::binary_add, bias);
  attr.set_post_ops(ops);
  return attr;
}

bool same_implementation(const dnnl::primitive_desc_base& plain, const dnnl::primitive_desc_base& fused) {
  return std::strcmp(plain.impl_info_str(), fused.impl_info_str()) == 0 &&
         plain.weights_desc(0) == fused.weights_desc(0);
}

dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

}  // namespace kiln::detail::onednn
