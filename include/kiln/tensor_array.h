#pragma once
// kiln::TensorArray (docs/design-notes.md, "Control flow and TensorArray"): a growable list of same-typed tensors with
// value semantics, usable eagerly and as a loop variable of while_loop /
// for_range inside kiln::function.
//
//   kiln::TensorArray states(DType::Float32, n);
//   states = kiln::for_range(0, n, 1, states, [&](const Tensor& i, const kiln::TensorArray& s) {
//     return s.write(i, step(i));
//   });
//   Tensor all = states.stack();  // [n, ...element]
//
// `write`, `scatter` and `unstack` return the new array and leave the old one
// as it was. The state is three tensors: a buffer [capacity, ...element], a
// uint8 mask [capacity] (0 unwritten, 1 written, 2 read and cleared) and an
// int32 scalar size. A write copies the buffer only when someone else still
// holds it: in a traced loop (and for `std::move(ta).write(...)`) it writes
// in place, so a loop of n writes costs O(n), not O(n * capacity).
//
// Gradients (GradientTape) flow from reads, gathers, stacks and concats back
// to the written values; an overwritten value gets zeros. Through a traced
// while_loop the array must keep one shape: give it an element_shape and no
// dynamic_size.
//
// Without an element_shape the buffer takes its element shape from the first
// write. An unwritten element reads, gathers and stacks as zeros once the
// element shape is known (declared or from a write), as in TF2; before that,
// reading it is an error. Index, shape, dtype and unread-element errors are InvalidArgument
// with the same text eagerly and in graphs (there raised at run time, with
// the node's source line appended).
#include <cstdint>
#include <initializer_list>

#include "kiln/detail/trace.h"
#include "kiln/tensor.h"

namespace kiln {

namespace detail {
struct OpDef;
}

struct TensorArrayOptions {
  // Writes past the end grow the array (capacity doubles); size becomes the
  // highest written index + 1. Off: an index >= size is an error.
  bool dynamic_size = false;
  // Every element's shape; kiln::None dims (or an unknown rank, the default)
  // are taken from the first write.
  Shape element_shape = Shape::unknown_rank();
  // A read clears the element in the array it was read from: reading it
  // again is an error until it is written again.
  bool clear_after_read = false;
};

class TensorArray {
 public:
  // `size` elements (a C++ int or an int32 scalar tensor), none written yet.
  TensorArray(DType dtype, const Operand& size, TensorArrayOptions options = {},
              SourceLocation loc = SourceLocation::current());

  // The array with element `index` (an int or an int32/int64 scalar tensor)
  // set to `value`. The && form hands this array's buffer over, so the write
  // happens in place when no one else holds it.
  TensorArray write(const Operand& index, const Tensor& value,
                    SourceLocation loc = SourceLocation::current()) const&;
  TensorArray write(const Operand& index, const Tensor& value,
                    SourceLocation loc = SourceLocation::current()) &&;
  // The array with element indices[k] set to values[k] (indices: 1-D).
  TensorArray scatter(const Tensor& indices, const Tensor& values,
                      SourceLocation loc = SourceLocation::current()) const;
  // The array with element k set to value[k] for every k < value.shape[0].
  TensorArray unstack(const Tensor& value, SourceLocation loc = SourceLocation::current()) const;

  // Element `index`. With clear_after_read, the element is cleared in this
  // array (copies made before keep it).
  Tensor read(const Operand& index, SourceLocation loc = SourceLocation::current()) const;
  // Elements at `indices` (any rank): shape indices.shape + element shape.
  Tensor gather(const Tensor& indices, SourceLocation loc = SourceLocation::current()) const;
  // The first size() elements stacked: [size, ...element]; all must be written.
  Tensor stack(SourceLocation loc = SourceLocation::current()) const;
  // The first size() elements joined along their first dim: [size * e0, e1, ...].
  Tensor concat(SourceLocation loc = SourceLocation::current()) const;
  // The number of elements, an int32 scalar tensor.
  const Tensor& size() const { return size_; }

  DType dtype() const { return buffer_.dtype(); }
  const TensorArrayOptions& options() const { return options_; }

 private:
  friend struct detail::TraceTraits<TensorArray>;
  TensorArray(TensorArrayOptions options, Tensor buffer, Tensor written, Tensor size)
      : options_(std::move(options)), buffer_(std::move(buffer)), size_(std::move(size)),
        written_(std::move(written)) {}
  // Runs a write-like op on `self`'s state (moved in: the op may write over
  // it when it is the only holder) and `more` inputs; returns the new array.
  static TensorArray apply(const detail::OpDef& op, TensorArray self, std::initializer_list<Tensor> more,
                           const SourceLocation& loc);

  TensorArrayOptions options_;
  Tensor buffer_, size_;
  // The one piece a const read changes (clear_after_read).
  mutable Tensor written_;
};

namespace detail {

// A TensorArray flattens to its three state tensors; its options go into the
// structure (loop variables and branch results must keep them) and the key.
template <> struct TraceTraits<TensorArray> {
  using Rebuilt = TensorArray;
  static int64_t flags(const TensorArrayOptions& o) {
    return (o.dynamic_size ? 1 : 0) | (o.clear_after_read ? 2 : 0);
  }
  static void flatten(const TensorArray& a, Flattener& f) {
    f.begin(KeyAtom::Kind::Struct, 5, "TensorArray");
    f.integer(flags(a.options_), DType::Int64);
    f.string(a.options_.element_shape.to_string());
    f.tensor(a.buffer_);
    f.tensor(a.written_);
    f.tensor(a.size_);
    f.end();
  }
  static TensorArray rebuild(const TensorArray& a, Rebuilder& r) {
    Tensor buffer = r.next();
    Tensor written = r.next();
    return TensorArray(a.options_, std::move(buffer), std::move(written), r.next());
  }
  static void flatten_result(const TensorArray& a, ResultFlattener& f) {
    const Shape& e = a.options_.element_shape;
    f.size(flags(a.options_));
    f.size(e.has_known_rank() ? e.rank() : -1);
    for (int d = 0; d < e.rank(); ++d) f.size(e[d]);
    const Shape& b = a.buffer_.shape();
    if (!e.is_fully_defined() && b.rank() == 1 && b[0] <= 0) f.leaf_of_any_rank(a.buffer_);
    else f.internal_leaf(a.buffer_);
    f.internal_leaf(a.written_);
    f.internal_leaf(a.size_);
  }
  static TensorArray unflatten(ResultReader& r) {
    TensorArrayOptions o;
    int64_t fl = r.size();
    o.dynamic_size = (fl & 1) != 0;
    o.clear_after_read = (fl & 2) != 0;
    if (int64_t rank = r.size(); rank >= 0) {
      o.element_shape = Shape{};
      for (int64_t d = 0; d < rank; ++d) o.element_shape.push_back(r.size());
    }
    Tensor buffer = r.leaf();
    Tensor written = r.leaf();
    return TensorArray(std::move(o), std::move(buffer), std::move(written), r.leaf());
  }
};

}  // namespace detail
}  // namespace kiln
