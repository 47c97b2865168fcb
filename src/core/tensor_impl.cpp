#include "core/tensor_impl.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "core/allocator.h"
#include "kiln/error.h"

namespace kiln::core {

namespace {

// TensorImpls are all one size: recycle them through a per-thread free list.
// Set when this thread's pool is destroyed (at thread or program exit); a
// tensor released after that (a static one) goes straight to the heap. A
// bool has no destructor, so it stays readable until the thread is gone.
thread_local bool impl_pool_gone = false;

struct ImplPool {
  static constexpr std::size_t kMax = 4096;
  void* free[kMax];
  std::size_t count = 0;
  ~ImplPool() {
    for (std::size_t i = 0; i < count; ++i) ::operator delete(free[i]);
    count = 0;
    impl_pool_gone = true;
  }
};
// nullptr once the pool is gone.
ImplPool* impl_pool() {
  thread_local ImplPool pool;
  return impl_pool_gone ? nullptr : &pool;
}

detail::TensorImpl* new_impl() {
  ImplPool* pool = impl_pool();
  void* mem = pool && pool->count ? pool->free[--pool->count] : ::operator new(sizeof(detail::TensorImpl));
  return new (mem) detail::TensorImpl();
}

}  // namespace

namespace {

[[noreturn]] void out_of_memory(DType dtype, int64_t count, const Shape* shape, const std::string& why) {
  std::string what = shape ? fmt::format("a tensor of shape {} and type {}", shape->to_string(), dtype_name(dtype))
                           : fmt::format("{} elements of type {}", count, dtype_name(dtype));
  throw OutOfMemory(fmt::format("OOM when allocating {}: {} bytes wanted, {}", what,
                                static_cast<uint64_t>(count) * dtype_size(dtype), why));
}

}  // namespace

Buffer* allocate_buffer(DType dtype, int64_t count, const Shape* shape) {
  if (count < 0) [[unlikely]]
    throw Internal(fmt::format("allocate_buffer: {} elements of type {}", count, dtype_name(dtype)));
  // Past it only an arena could ask (bytes of many values); below it,
  // count * dtype_size (at most 32) cannot wrap.
  if (count > Shape::kMaxElements) [[unlikely]]
    out_of_memory(dtype, count, shape, "more than a tensor may have (2^48 elements)");
  std::size_t bytes = Buffer::kHeaderBytes + static_cast<std::size_t>(count) * dtype_size(dtype);
  if (!allocation_within_limit(bytes)) [[unlikely]]
    out_of_memory(dtype, count, shape,
                  fmt::format("more than the {} bytes one tensor may take (the machine's memory)",
                              max_allocation_bytes()));
  std::size_t capacity;
  void* block;
  try {
    block = allocate_block(bytes, &capacity);
  } catch (const std::bad_alloc&) {
    out_of_memory(dtype, count, shape, "which the system could not provide");
  }
  Buffer* b = new (block) Buffer();
  b->dtype = dtype;
  b->count = count;
  b->capacity = capacity;
  b->elements = static_cast<char*>(block) + Buffer::kHeaderBytes;
  if (dtype == DType::String) {
    auto* s = static_cast<std::string*>(b->data());
    for (int64_t i = 0; i < count; ++i) new (s + i) std::string();
  } else if (dtype == DType::Resource) {
    auto* r = static_cast<std::shared_ptr<void>*>(b->data());
    for (int64_t i = 0; i < count; ++i) new (r + i) std::shared_ptr<void>();
  }
  return b;
}

Buffer* make_slice(void* header, Buffer* arena, DType dtype, int64_t count, void* elements) {
  Buffer* b = new (header) Buffer();
  b->dtype = dtype;
  b->count = count;
  b->capacity = 0;
  b->elements = elements;
  b->parent = arena;
  retain(arena);
  return b;
}

Buffer* make_external_buffer(DType dtype, int64_t count, void* data, void (*release)(void*) noexcept,
                             void* owner) {
  Buffer* b = new Buffer();
  b->dtype = dtype;
  b->count = count;
  b->capacity = 0;
  b->elements = data;
  b->release_external = release;
  b->external_owner = owner;
  return b;
}

void destroy_buffer(Buffer* b) noexcept {
  if (b->release_external) {
    auto release = b->release_external;
    void* owner = b->external_owner;
    delete b;
    release(owner);
    return;
  }
  if (Buffer* arena = b->parent) {
    // Slices hold POD elements only; the header's memory belongs to the arena.
    // refs stays 0: the executor reads it to see that the slice is gone.
    release(arena);
    return;
  }
  if (b->dtype == DType::String) {
    auto* s = static_cast<std::string*>(b->data());
    for (int64_t i = 0; i < b->count; ++i) s[i].~basic_string();
  } else if (b->dtype == DType::Resource) {
    auto* r = static_cast<std::shared_ptr<void>*>(b->data());
    for (int64_t i = 0; i < b->count; ++i) r[i].~shared_ptr();
  }
  std::size_t capacity = b->capacity;
  b->~Buffer();
  free_block(b, capacity);
}

}  // namespace kiln::core

namespace kiln::detail {

void destroy(TensorImpl* impl) noexcept {
  if (impl->buffer) core::release(impl->buffer);
  impl->~TensorImpl();
  core::ImplPool* pool = core::impl_pool();
  if (pool && pool->count < core::ImplPool::kMax)
    pool->free[pool->count++] = impl;
  else
    ::operator delete(impl);
}

}  // namespace kiln::detail

namespace kiln::core {

Tensor make_tensor(DType dtype, const Shape& shape) {
  int64_t count = shape.num_elements();  // throws past kMaxElements
  if (count < 0) [[unlikely]]
    throw Internal(fmt::format("make_tensor: shape {} is not fully defined", shape.to_string()));
  Buffer* buffer = allocate_buffer(dtype, count, &shape);  // before the impl: nothing to undo if it throws
  detail::TensorImpl* impl = new_impl();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->buffer = buffer;
  return Tensor(impl);
}

Tensor make_tensor_view(DType dtype, const Shape& shape, Buffer* buffer) {
  detail::TensorImpl* impl = new_impl();
  impl->dtype = dtype;
  impl->shape = shape;
  retain(buffer);
  impl->buffer = buffer;
  return Tensor(impl);
}

Tensor adopt_buffer(DType dtype, const Shape& shape, Buffer* buffer) {
  detail::TensorImpl* impl = new_impl();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->buffer = buffer;
  return Tensor(impl);
}

Tensor make_symbolic(DType dtype, const Shape& shape, graph::Node* node, int output_index,
                     std::shared_ptr<void> graph_owner) {
  detail::TensorImpl* impl = new_impl();
  impl->dtype = dtype;
  impl->shape = shape;
  impl->symbolic = true;
  impl->node = node;
  impl->output_index = output_index;
  impl->graph_owner = std::move(graph_owner);
  return Tensor(impl);
}

namespace {
std::atomic<SymbolicNameFn> symbolic_name_fn{nullptr};
}  // namespace

std::string symbolic_tensor_name(const Tensor& t) {
  SymbolicNameFn fn = symbolic_name_fn.load(std::memory_order_acquire);
  return fn ? fn(*t.impl()) : std::string("<symbolic>");
}

void set_symbolic_name_fn(SymbolicNameFn fn) { symbolic_name_fn.store(fn, std::memory_order_release); }

void require_concrete(const Tensor& t, const char* what) {
  if (!t.defined()) throw InvalidArgument(fmt::format("{}: the tensor is null (default-constructed)", what));
  if (t.is_symbolic())
    throw InvalidArgument(fmt::format(
        "{}: this is a symbolic tensor of a graph being traced by kiln::function; it has no "
        "value until the graph runs. Use kiln::print to see values while the graph runs.",
        what));
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  if (a.dtype() == DType::String) return a.to_vector<std::string>() == b.to_vector<std::string>();
  return std::memcmp(raw_data(a), raw_data(b), static_cast<std::size_t>(a.size()) * dtype_size(a.dtype())) == 0;
}

}  // namespace kiln::core
