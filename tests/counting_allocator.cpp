// Replaces every form of the global operator new and delete by malloc-based
// versions that count allocations, so tests can assert that a code path
// makes none (tests/memory_plan_test.cpp). Also interposes oneDNN's
// dnnl_primitive_execute to count what it allocates apart.
#include "counting_allocator.h"

#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<int64_t> allocations{0};
std::atomic<int64_t> executes{0}, execute_allocations{0};
std::atomic<int> executing{0};  // dnnl_primitive_execute calls under way

void* counted(std::size_t size, std::size_t alignment) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (executing.load(std::memory_order_relaxed) > 0) execute_allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) p = std::malloc(size);
  else if (posix_memalign(&p, alignment, size) != 0) p = nullptr;
  return p;
}

void* counted_or_throw(std::size_t size, std::size_t alignment) {
  void* p = counted(size, alignment);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

namespace kiln::testing {
int64_t heap_allocations() { return allocations.load(std::memory_order_relaxed); }
int64_t onednn_executes() { return executes.load(std::memory_order_relaxed); }
int64_t onednn_execute_allocations() { return execute_allocations.load(std::memory_order_relaxed); }
}  // namespace kiln::testing

// Kiln (a static library) links against this definition; libdnnl's is the
// next one.
extern "C" dnnl_status_t dnnl_primitive_execute(const_dnnl_primitive_t primitive, dnnl_stream_t stream, int nargs,
                                                const dnnl_exec_arg_t* args) {
  using Execute = dnnl_status_t (*)(const_dnnl_primitive_t, dnnl_stream_t, int, const dnnl_exec_arg_t*);
  static const Execute next = reinterpret_cast<Execute>(dlsym(RTLD_NEXT, "dnnl_primitive_execute"));
  if (!next) std::abort();
  executes.fetch_add(1, std::memory_order_relaxed);
  executing.fetch_add(1, std::memory_order_relaxed);
  dnnl_status_t status = next(primitive, stream, nargs, args);
  executing.fetch_sub(1, std::memory_order_relaxed);
  return status;
}

void* operator new(std::size_t n) { return counted_or_throw(n, 0); }
void* operator new[](std::size_t n) { return counted_or_throw(n, 0); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted(n, 0); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_or_throw(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return counted(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
