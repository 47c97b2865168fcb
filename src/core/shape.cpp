#include "kiln/shape.h"

#include <fmt/format.h>

#include "kiln/error.h"

namespace kiln {

namespace {
[[noreturn]] void too_many_dims(std::size_t n) {
  throw InvalidArgument(
      fmt::format("Shape: rank {} is more than Kiln supports ({})", n, Shape::kMaxRank));
}
}  // namespace

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  if (dims.size() > kMaxRank) too_many_dims(dims.size());
  rank_ = static_cast<int32_t>(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -1)
      throw InvalidArgument(fmt::format("Shape: dimension {} is {}; dims must be >= 0 (or None)", i, dims[i]));
    dims_[i] = dims[i];
  }
}

bool Shape::is_fully_defined() const {
  if (rank_ < 0) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] < 0) return false;
  return true;
}

int64_t Shape::num_elements() const {
  if (rank_ < 0) return -1;
  int64_t n = 1;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] < 0) return -1;
    n *= dims_[i];
  }
  return n;
}

void Shape::push_back(int64_t d) {
  if (rank_ >= kMaxRank) too_many_dims(rank_ + 1);
  dims_[rank_++] = d;
}

void Shape::insert(int pos, int64_t d) {
  if (rank_ >= kMaxRank) too_many_dims(rank_ + 1);
  for (int i = rank_; i > pos; --i) dims_[i] = dims_[i - 1];
  dims_[pos] = d;
  ++rank_;
}

void Shape::erase(int pos) {
  for (int i = pos; i + 1 < rank_; ++i) dims_[i] = dims_[i + 1];
  dims_[--rank_] = 0;
}

bool Shape::is_compatible_with(const Shape& other) const {
  if (rank_ < 0 || other.rank_ < 0) return true;
  if (rank_ != other.rank_) return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] >= 0 && other.dims_[i] >= 0 && dims_[i] != other.dims_[i]) return false;
  return true;
}

std::string Shape::to_string() const {
  if (rank_ < 0) return "<unknown>";
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += dims_[i] < 0 ? std::string("None") : std::to_string(dims_[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i)
    if (a.dims_[i] != b.dims_[i]) return false;
  return true;
}

}  // namespace kiln
