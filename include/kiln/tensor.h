#pragma once
// Tensor: a cheap, immutable, reference-counted handle. A tensor is either
// concrete (it owns a buffer of values) or symbolic (an output of a node in
// the graph being traced by kiln::function).
#include <atomic>
#include <complex>
#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/half.h"
#include "kiln/shape.h"

namespace kiln {

using SourceLocation = std::source_location;

namespace detail {
// The part of a tensor's implementation that handles read inline. The rest
// (buffer, graph node) lives in src/core/tensor_impl.h.
struct TensorHeader {
  std::atomic<int32_t> refs{1};
  DType dtype = DType::Float32;
  bool symbolic = false;
  Shape shape;
};
struct TensorImpl;
void destroy(TensorImpl* impl) noexcept;

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float32; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Float64; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<long> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<long long> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::UInt8; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<std::string> { static constexpr DType value = DType::String; };
template <> struct DTypeOf<const char*> { static constexpr DType value = DType::String; };
template <> struct DTypeOf<float16_t> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<bfloat16_t> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::UInt16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::UInt32; };
template <> struct DTypeOf<unsigned long> { static constexpr DType value = DType::UInt64; };
template <> struct DTypeOf<unsigned long long> { static constexpr DType value = DType::UInt64; };
template <> struct DTypeOf<std::complex<float>> { static constexpr DType value = DType::Complex64; };
template <> struct DTypeOf<std::complex<double>> { static constexpr DType value = DType::Complex128; };
}  // namespace detail

// The C++ type whose values a dtype holds: float, double, int32_t, int64_t,
// uint8_t, bool, std::string; kiln::float16, kiln::bfloat16, int8_t, int16_t,
// uint16_t, uint32_t, uint64_t, std::complex<float>, std::complex<double>.
template <class T>
inline constexpr DType dtype_of = detail::DTypeOf<std::remove_cvref_t<T>>::value;

struct Slice;
class TensorIndex;

class Tensor {
 public:
  Tensor() noexcept = default;
  Tensor(const Tensor& other) noexcept : impl_(other.impl_) { retain(); }
  Tensor(Tensor&& other) noexcept : impl_(other.impl_) { other.impl_ = nullptr; }
  Tensor& operator=(const Tensor& other) noexcept {
    Tensor(other).swap(*this);
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    Tensor(std::move(other)).swap(*this);
    return *this;
  }
  ~Tensor() { release(); }
  // Adopts one reference to `impl`.
  explicit Tensor(detail::TensorImpl* impl) noexcept : impl_(impl) {}
  void swap(Tensor& other) noexcept { std::swap(impl_, other.impl_); }

  // False for a default-constructed (null) handle.
  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return header().dtype; }
  const Shape& shape() const { return header().shape; }
  int rank() const { return header().shape.rank(); }
  // Number of elements (-1 when a symbolic tensor's shape is not fully known).
  int64_t size() const { return header().shape.num_elements(); }
  bool is_symbolic() const { return header().symbolic; }

  // The value of a one-element tensor. T must match the dtype exactly.
  template <class T> T item() const;
  // All values in row-major order. T must match the dtype exactly.
  template <class T> std::vector<T> to_vector() const;
  // Read-only view of a concrete tensor's values. T must match the dtype.
  template <class T> const T* data() const;

  // The truth value of a scalar, as Python's `if tensor:` in eager code.
  // A symbolic tensor has no value while tracing: that throws, pointing at
  // kiln::cond / kiln::while_loop.
  explicit operator bool() const;

  // Indexing, as Python's x[i], x[1:3], x[::2], x[..., 0]:
  // x[2], x[Slice(1, 3)], x.index({Slice(), 0}).
  Tensor operator[](int64_t index) const;
  Tensor operator[](const Slice& slice) const;
  Tensor index(std::initializer_list<TensorIndex> indices,
               SourceLocation loc = SourceLocation::current()) const;

  detail::TensorImpl* impl() const { return impl_; }

 private:
  const detail::TensorHeader& header() const {
    return *reinterpret_cast<const detail::TensorHeader*>(impl_);
  }
  void retain() const {
    if (impl_) reinterpret_cast<detail::TensorHeader*>(impl_)->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (impl_ && reinterpret_cast<detail::TensorHeader*>(impl_)->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
      detail::destroy(impl_);
  }
  detail::TensorImpl* impl_ = nullptr;
};

// A Python-style slice: Slice(start, stop, step), any part may be left out.
// One end of a Slice: a number, or None (left out).
struct SliceBound {
  std::optional<int64_t> value;
  SliceBound(int64_t v) : value(v) {}
  SliceBound(int v) : value(v) {}
  SliceBound(NoneType) {}
  SliceBound(std::nullopt_t) {}
  SliceBound(std::optional<int64_t> v) : value(v) {}
};

// Python's start:stop:step. Slice(1, 3), Slice(None, None, -1), Slice(2, None).
struct Slice {
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  Slice() = default;
  Slice(SliceBound start, SliceBound stop, int64_t step = 1)
      : start(start.value), stop(stop.value), step(step) {}
};
struct NewAxis {};
struct Ellipsis {};
inline constexpr NewAxis new_axis{};
inline constexpr Ellipsis ellipsis{};

// One entry of x.index({...}): an integer (drops the dim), a Slice, new_axis
// or ellipsis.
class TensorIndex {
 public:
  enum class Kind { Integer, Slice, NewAxis, Ellipsis };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}
  TensorIndex(const Slice& s) : kind_(Kind::Slice), slice_(s) {}
  TensorIndex(NewAxis) : kind_(Kind::NewAxis) {}
  TensorIndex(Ellipsis) : kind_(Kind::Ellipsis) {}
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
};

// A C++ number (or string) used where a tensor is expected. Numbers are
// "weakly typed": mixed with a Tensor they take the Tensor's dtype
// (`x * 2` on float32 stays float32); a number the dtype cannot hold exactly
// (1.5 for int32, 300 for uint8) is an error.
class Scalar {
 public:
  enum class Kind { Bool, Int, Float, String };
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)), natural_(dtype_of_int<T>()) {}
  Scalar(float v) : kind_(Kind::Float), f_(v), natural_(DType::Float32) {}
  Scalar(double v) : kind_(Kind::Float), f_(v), natural_(DType::Float64) {}
  Scalar(const char* v) : kind_(Kind::String), s_(v), natural_(DType::String) {}
  Scalar(std::string v) : kind_(Kind::String), s_(std::move(v)), natural_(DType::String) {}

  Kind kind() const { return kind_; }
  // The dtype this value has on its own: int -> int32, float -> float32,
  // double -> float64, int64_t -> int64, bool -> bool, strings -> string.
  DType natural_dtype() const { return natural_; }
  int64_t as_int() const { return i_; }
  double as_double() const { return kind_ == Kind::Float ? f_ : static_cast<double>(i_); }
  const std::string& as_string() const { return s_; }

 private:
  template <class T> static constexpr DType dtype_of_int() {
    if constexpr (sizeof(T) == 1 && std::is_unsigned_v<T>) return DType::UInt8;
    else if constexpr (sizeof(T) <= 4) return DType::Int32;
    else return DType::Int64;
  }
  Kind kind_;
  int64_t i_ = 0;
  double f_ = 0;
  std::string s_;
  DType natural_ = DType::Bool;
};

// The argument type of binary ops: a Tensor or a Scalar. It also carries the
// source location of the expression, so that `a + b` records the user's line.
class Operand {
 public:
  Operand(const Tensor& t, SourceLocation loc = SourceLocation::current())
      : tensor_(&t), loc_(loc) {}
  // A temporary may be donated: an op can write its result over it.
  Operand(Tensor&& t, SourceLocation loc = SourceLocation::current())
      : tensor_(&t), donated_(true), loc_(loc) {}
  template <class T>
    requires std::is_constructible_v<Scalar, T>
  Operand(T v, SourceLocation loc = SourceLocation::current())
      : tensor_(nullptr), scalar_(std::in_place, v), loc_(loc) {}
  // Anything with a value, such as a Variable: `v * 2`, `x + v`.
  template <class V>
    requires requires(const V& v) {
      { v.read_value() } -> std::same_as<Tensor>;
    }
  Operand(const V& v, SourceLocation loc = SourceLocation::current())
      : tensor_(nullptr), owned_(v.read_value(loc)), loc_(loc) {}

  bool is_tensor() const { return tensor_ != nullptr || owned_.defined(); }
  const Tensor& tensor() const { return tensor_ ? *tensor_ : owned_; }
  // The tensor as an owned handle: moved out of a donated temporary, copied
  // otherwise.
  Tensor take() const {
    if (!tensor_) return owned_;
    return donated_ ? std::move(*const_cast<Tensor*>(tensor_)) : *tensor_;
  }
  const Scalar& scalar() const { return *scalar_; }
  const SourceLocation& location() const { return loc_; }

 private:
  const Tensor* tensor_;
  Tensor owned_;
  bool donated_ = false;
  std::optional<Scalar> scalar_;
  SourceLocation loc_;
};

// ---- Creating tensors ----------------------------------------------------

namespace detail {
// Builds a concrete tensor holding `values` (count = shape's elements) of the
// C++ type of `src`, then casts to `dtype` when given.
Tensor make_constant(DType src, const void* values, int64_t count, const Shape& shape,
                     std::optional<DType> dtype, SourceLocation loc);
Tensor make_string_constant(const std::vector<std::string>& values, const Shape& shape,
                            SourceLocation loc);

template <class T> struct Nested {
  template <class E>
  static void flatten(const T& v, std::vector<E>& out, std::vector<int64_t>&, int) {
    out.push_back(E(v));
  }
};
void check_ragged(std::vector<int64_t>& dims, int depth, int64_t size);
template <class T> struct Nested<std::initializer_list<T>> {
  template <class E>
  static void flatten(std::initializer_list<T> list, std::vector<E>& out,
                      std::vector<int64_t>& dims, int depth) {
    check_ragged(dims, depth, static_cast<int64_t>(list.size()));
    for (const T& v : list) Nested<T>::flatten(v, out, dims, depth + 1);
  }
};
template <class E, class L>
Tensor constant_from_nested(const L& list, std::optional<DType> dtype, SourceLocation loc) {
  std::vector<E> flat;
  std::vector<int64_t> dims;
  Nested<L>::flatten(list, flat, dims, 0);
  Shape shape(dims);
  if constexpr (std::is_same_v<E, std::string>) {
    return make_string_constant(flat, shape, loc);
  } else if constexpr (std::is_same_v<E, bool>) {
    std::vector<uint8_t> bytes(flat.begin(), flat.end());
    return make_constant(DType::Bool, bytes.data(), static_cast<int64_t>(bytes.size()), shape, dtype, loc);
  } else {
    return make_constant(dtype_of<E>, flat.data(), static_cast<int64_t>(flat.size()), shape, dtype, loc);
  }
}
template <class T>
using ConstantElement = std::conditional_t<std::is_same_v<std::decay_t<T>, const char*>,
                                           std::string, std::decay_t<T>>;
}  // namespace detail

// A scalar: constant(4) is int32, constant(1.1f) float32, constant(2.0)
// float64, constant("a") string, constant(true) bool. `dtype` casts.
Tensor constant(const Scalar& value, std::optional<DType> dtype = std::nullopt,
                SourceLocation loc = SourceLocation::current());

// Nested lists give the shape: constant({{1, 2}, {3, 4}}) is int32 (2, 2).
template <class T>
Tensor constant(std::initializer_list<T> values, std::optional<DType> dtype = std::nullopt,
                SourceLocation loc = SourceLocation::current()) {
  return detail::constant_from_nested<detail::ConstantElement<T>>(values, dtype, loc);
}
template <class T>
Tensor constant(std::initializer_list<std::initializer_list<T>> values,
                std::optional<DType> dtype = std::nullopt,
                SourceLocation loc = SourceLocation::current()) {
  return detail::constant_from_nested<detail::ConstantElement<T>>(values, dtype, loc);
}
template <class T>
Tensor constant(std::initializer_list<std::initializer_list<std::initializer_list<T>>> values,
                std::optional<DType> dtype = std::nullopt,
                SourceLocation loc = SourceLocation::current()) {
  return detail::constant_from_nested<detail::ConstantElement<T>>(values, dtype, loc);
}
template <class T>
Tensor constant(
    std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>> values,
    std::optional<DType> dtype = std::nullopt, SourceLocation loc = SourceLocation::current()) {
  return detail::constant_from_nested<detail::ConstantElement<T>>(values, dtype, loc);
}

// A flat vector of values in row-major order and a shape.
template <class T>
Tensor constant(const std::vector<T>& values, const Shape& shape,
                std::optional<DType> dtype = std::nullopt,
                SourceLocation loc = SourceLocation::current()) {
  if constexpr (std::is_same_v<T, std::string>) {
    return detail::make_string_constant(values, shape, loc);
  } else if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return detail::make_constant(DType::Bool, bytes.data(), static_cast<int64_t>(bytes.size()), shape,
                                 dtype, loc);
  } else {
    return detail::make_constant(dtype_of<T>, values.data(), static_cast<int64_t>(values.size()),
                                 shape, dtype, loc);
  }
}
// A flat vector as a 1-D tensor.
template <class T>
Tensor constant(const std::vector<T>& values, std::optional<DType> dtype = std::nullopt,
                SourceLocation loc = SourceLocation::current()) {
  return constant(values, Shape{static_cast<int64_t>(values.size())}, dtype, loc);
}

Tensor zeros(const Shape& shape, DType dtype = DType::Float32,
             SourceLocation loc = SourceLocation::current());
Tensor ones(const Shape& shape, DType dtype = DType::Float32,
            SourceLocation loc = SourceLocation::current());
// A tensor of `shape` with every element `value` (in value's natural dtype
// unless `dtype` is given).
Tensor fill(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
            SourceLocation loc = SourceLocation::current());
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                  SourceLocation loc = SourceLocation::current());
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt,
                 SourceLocation loc = SourceLocation::current());
// [start, start + delta, ...) up to `limit`, as tf.range. The dtype follows
// the arguments (int -> int32, float -> float32, double -> float64) unless given.
Tensor range(const Scalar& start, const Scalar& limit, const Scalar& delta = 1,
             std::optional<DType> dtype = std::nullopt,
             SourceLocation loc = SourceLocation::current());
Tensor range(const Scalar& limit, SourceLocation loc = SourceLocation::current());

// Converts values to `dtype` (float -> int truncates toward zero, as tf.cast).
Tensor cast(const Tensor& x, DType dtype, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
