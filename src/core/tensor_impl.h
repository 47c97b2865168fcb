#pragma once
// What a Tensor handle points at. Concrete tensors own (a share of) a Buffer;
// symbolic tensors name an output of a node in a graph being traced.
#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "kiln/error.h"
#include "kiln/tensor.h"

namespace kiln::graph {
struct Node;
}

namespace kiln::core {

// A block of element storage, shared by tensors that view the same values
// (reshape, identity). An owning buffer's header lives at the start of its
// allocation, its elements right after. A slice (a value placed in an
// executor's arena, see exec/memory_plan.h) has its header in the arena too
// and its elements at a planned offset; it keeps the arena alive.
struct Buffer {
  std::atomic<int32_t> refs{1};
  DType dtype;
  int64_t count;         // elements
  std::size_t capacity;  // bytes of the whole block, header included (0 for a slice)
  void* elements;
  Buffer* parent = nullptr;  // the arena a slice lives in
  // Memory lent by another library (a NumPy array, a DLPack tensor): called
  // with `external_owner` when the last reference goes. Never written in place.
  void (*release_external)(void* owner) noexcept = nullptr;
  void* external_owner = nullptr;
  void* data() const { return elements; }
  static constexpr std::size_t kHeaderBytes = 64;
};
static_assert(sizeof(Buffer) <= Buffer::kHeaderBytes);

// A slice of `arena` holding `count` POD elements at `elements`, its header
// constructed at `header` (kHeaderBytes inside the arena). Retains the arena.
Buffer* make_slice(void* header, Buffer* arena, DType dtype, int64_t count, void* elements);

// A buffer over `count` POD elements at `data` that another library owns;
// `release(owner)` runs when the last reference goes (on any thread).
Buffer* make_external_buffer(DType dtype, int64_t count, void* data, void (*release)(void*) noexcept,
                             void* owner);

// A buffer for `count` elements of `dtype`. Strings are default-constructed;
// other values are left uninitialized. Throws OutOfMemory when the bytes are
// past max_allocation_bytes() or the system has none (`shape`, when given,
// is named in the message).
Buffer* allocate_buffer(DType dtype, int64_t count, const Shape* shape = nullptr);

// The ResourceExhausted raised when a tensor's memory cannot be had. Its
// message names the shape, dtype and bytes, but not the op, which the
// allocation does not know: run_eager prefixes the op's name, the executor
// adds the node's (the plain ResourceExhausted they throw is no OutOfMemory).
class OutOfMemory : public ResourceExhausted {
 public:
  using ResourceExhausted::ResourceExhausted;
};
inline void retain(Buffer* b) { b->refs.fetch_add(1, std::memory_order_relaxed); }
// Frees an unreferenced buffer (or, for a slice, lets go of its arena).
void destroy_buffer(Buffer* b) noexcept;
inline void release(Buffer* b) noexcept {
  if (b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_buffer(b);
}

}  // namespace kiln::core

namespace kiln::detail {

struct TensorImpl : TensorHeader {
  core::Buffer* buffer = nullptr;  // concrete tensors
  // Symbolic tensors: the node and output index in the graph being traced.
  // `graph_owner` keeps that graph alive as long as the handle lives.
  graph::Node* node = nullptr;
  int output_index = 0;
  std::shared_ptr<void> graph_owner;
};

}  // namespace kiln::detail

namespace kiln::core {

// A new concrete tensor with fresh (uninitialized) storage. Throws
// InvalidArgument for a shape past Shape::kMaxElements, OutOfMemory when the
// bytes cannot be had.
Tensor make_tensor(DType dtype, const Shape& shape);
// A new concrete tensor that shares `buffer` (which must hold enough elements).
Tensor make_tensor_view(DType dtype, const Shape& shape, Buffer* buffer);
// A new concrete tensor taking over the caller's reference to `buffer`.
Tensor adopt_buffer(DType dtype, const Shape& shape, Buffer* buffer);
// A new symbolic tensor.
Tensor make_symbolic(DType dtype, const Shape& shape, graph::Node* node, int output_index,
                     std::shared_ptr<void> graph_owner);

inline void* raw_data(const Tensor& t) { return t.impl()->buffer->data(); }
// Same dtype, shape and bytes (NaN equals the same NaN, -0 differs from +0);
// strings by value; resource handles by the handle's bytes. Both concrete.
bool same_bits(const Tensor& a, const Tensor& b);
template <class T> inline T* data_of(const Tensor& t) {
  return static_cast<T*>(t.impl()->buffer->data());
}

// True when `t` is the only handle to its impl and its buffer, so an op may
// write its result over it.
inline bool is_exclusively_owned(const Tensor& t) {
  detail::TensorImpl* impl = t.impl();
  return impl->refs.load(std::memory_order_acquire) == 1 && impl->buffer &&
         impl->buffer->refs.load(std::memory_order_acquire) == 1 && !impl->buffer->release_external;
}

// Makes `t` a tensor of its own when another handle shares its impl (a
// forwarding kernel's input, a variable's stored value, a graph's captured
// constant): an op's result is always a new tensor, though it may view
// another's buffer, since tapes tell tensors apart by identity
// (docs/design-notes.md, "Tensor identity"). A resource handle keeps its
// impl: it is the variable's identity.
inline void give_own_identity(Tensor& t) {
  detail::TensorImpl* impl = t.impl();
  if (impl && impl->buffer && impl->refs.load(std::memory_order_acquire) > 1 && impl->dtype != DType::Resource)
    t = make_tensor_view(impl->dtype, impl->shape, impl->buffer);
}

// The graph-level name of a symbolic tensor's value, "add:0" (set by the
// graph layer; "<symbolic>" until one is installed).
std::string symbolic_tensor_name(const Tensor& t);
using SymbolicNameFn = std::string (*)(const detail::TensorImpl&);
void set_symbolic_name_fn(SymbolicNameFn fn);

// A hard error if `t` is not concrete (a kernel or host access got a
// symbolic tensor).
void require_concrete(const Tensor& t, const char* what);

}  // namespace kiln::core
