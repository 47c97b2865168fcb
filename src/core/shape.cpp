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

namespace {
// The product of the known dims, or -1 past kMaxElements (a dim alone too).
int64_t known_product(const int64_t* dims, int rank) {
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    int64_t d = dims[i];
    if (d < 0) continue;
    if (d > Shape::kMaxElements || __builtin_mul_overflow(n, d, &n) || n > Shape::kMaxElements) return -1;
  }
  return n;
}
}  // namespace

int64_t Shape::num_elements() const {
  if (!is_fully_defined()) return -1;
  int64_t n = known_product(dims_, rank_);
  if (n < 0) [[unlikely]]
    throw InvalidArgument(fmt::format("Shape {} has more elements than a tensor may have (2^48 = {})",
                                      to_string(), kMaxElements));
  return n;
}

bool Shape::within_limits() const { return rank_ <= 0 || known_product(dims_, rank_) >= 0; }

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
