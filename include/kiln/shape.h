#pragma once
// Tensor shapes. A dimension may be unknown (kiln::None) while tracing, and a
// whole shape may have unknown rank. Dims are stored inline: shapes are built on
// every op, so they must never touch the heap.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

namespace kiln {

// kiln::None: an unknown dimension, as in TensorSpec({None, 28, 28, 1}), and
// a left-out slice bound, as in Slice(None, None, 2). As a dimension it is -1.
struct NoneType {
  constexpr operator int64_t() const { return -1; }
};
inline constexpr NoneType None{};

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;  // a scalar: rank 0
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(std::span<const int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims)
      : Shape(std::span<const int64_t>(dims.data(), dims.size())) {}

  static Shape unknown_rank() { Shape s; s.rank_ = -1; return s; }

  bool has_known_rank() const { return rank_ >= 0; }
  int rank() const { return rank_; }  // -1 when unknown
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t& operator[](int i) { return dims_[i]; }
  int64_t dim(int i) const { return dims_[i]; }
  const int64_t* begin() const { return dims_; }
  const int64_t* end() const { return dims_ + (rank_ > 0 ? rank_ : 0); }
  std::span<const int64_t> dims() const { return {begin(), end()}; }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  // The most elements a shape may describe, and the largest dim: 2^48 (a
  // petabyte of float32, more than any machine holds). Below it, elements
  // times the largest dtype size and every offset a kernel computes fit in
  // int64, so no size arithmetic can wrap. Ops raise InvalidArgument for
  // larger shapes (docs/design-notes.md, "Sizes and memory").
  static constexpr int64_t kMaxElements = int64_t{1} << 48;

  bool is_fully_defined() const;
  // Product of dims; -1 when any dim (or the rank) is unknown. Throws
  // InvalidArgument when a dim or the product is more than kMaxElements.
  int64_t num_elements() const;
  // Whether every known dim and the product of the known dims are at most
  // kMaxElements. Never throws.
  bool within_limits() const;

  void push_back(int64_t d);
  void insert(int pos, int64_t d);
  void erase(int pos);

  // Whether a value of shape `other` can be used where this shape is expected
  // (unknown dims and unknown rank accept anything).
  bool is_compatible_with(const Shape& other) const;

  // "(2, 2)", "(3,)", "()", "(None, 28)", "<unknown>"
  std::string to_string() const;

  friend bool operator==(const Shape& a, const Shape& b);
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  int32_t rank_ = 0;
  int64_t dims_[kMaxRank] = {};
};

}  // namespace kiln
