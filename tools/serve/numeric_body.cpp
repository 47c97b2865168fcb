#include "numeric_body.h"

#include <charconv>
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/tensor_impl.h"

namespace kiln::serve {

namespace {

// Below the full reader's nesting limit (64, counting the body's object), so
// a body that deep gets that reader's error.
constexpr std::size_t kMaxDepth = 60;

class Reader {
 public:
  Reader(std::string_view text, NumericBody& out) : p_(text.data()), end_(text.data() + text.size()), out_(out) {}

  bool body() {
    if (!eat('{') || eat('}')) return false;
    bool have_signature = false, have_payload = false;
    do {
      std::string_view key;
      if (!plain_string(key) || !eat(':')) return false;
      if (key == "signature_name") {
        std::string_view name;
        if (have_signature || !plain_string(name)) return false;
        have_signature = true;
        out_.signature_name = name;
      } else if (key == "instances" || key == "inputs") {
        if (have_payload) return false;
        have_payload = true;
        out_.row_format = key == "instances";
        if (!value(0)) return false;
      } else {
        return false;
      }
    } while (eat(','));
    if (!eat('}')) return false;
    skip_space();
    return p_ == end_ && have_payload && (!out_.row_format || !out_.dims.empty());
  }

 private:
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool eat(char c) {
    skip_space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  // A string of printable ASCII without escapes (anything else: the full reader).
  bool plain_string(std::string_view& s) {
    if (!eat('"')) return false;
    const char* start = p_;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ < 0x20 || *p_ > 0x7e || *p_ == '\\') return false;
      ++p_;
    }
    if (p_ == end_) return false;
    s = std::string_view(start, static_cast<std::size_t>(p_ - start));
    ++p_;
    return true;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  // JSON's number grammar exactly. The value: up to 19 significant digits
  // times a power of ten within 1e22 is one correctly rounded IEEE operation
  // on two exact doubles (Clinger's fast path, the one strtod and from_chars
  // take too); anything longer or further goes to from_chars. A number out
  // of double's range is left to the full reader.
  bool number() {
    static constexpr double kPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                         1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char* start = p_;
    const bool negative = p_ < end_ && *p_ == '-';
    if (negative) ++p_;
    uint64_t mantissa = 0;
    int significant = 0, exponent = 0;
    auto take = [&](char c, bool fraction) {
      if (mantissa == 0 && c == '0') {  // a leading zero
        exponent -= fraction;
        return;
      }
      if (significant < 19) {
        mantissa = mantissa * 10 + static_cast<uint64_t>(c - '0');
        exponent -= fraction;
      } else if (!fraction) {
        ++exponent;
      }
      ++significant;
    };
    if (p_ < end_ && *p_ == '0') {
      ++p_;
    } else if (p_ < end_ && digit(*p_)) {
      for (; p_ < end_ && digit(*p_); ++p_) take(*p_, false);
    } else {
      return false;
    }
    bool integer = true;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      integer = false;
      if (p_ == end_ || !digit(*p_)) return false;
      for (; p_ < end_ && digit(*p_); ++p_) take(*p_, true);
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      integer = false;
      const bool down = p_ < end_ && *p_ == '-';
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !digit(*p_)) return false;
      int e = 0;
      for (; p_ < end_ && digit(*p_); ++p_) e = std::min(e * 10 + (*p_ - '0'), 100000);
      exponent += down ? -e : e;
    }
    double x = 0;
    if (significant <= 19 && mantissa <= (uint64_t{1} << 53) && exponent >= -22 && exponent <= 22) {
      x = exponent < 0 ? static_cast<double>(mantissa) / kPowers[-exponent]
                       : static_cast<double>(mantissa) * kPowers[exponent];
      if (negative) x = -x;
    } else {
      const auto [ptr, ec] = std::from_chars(start, p_, x);
      if (ec != std::errc() || ptr != p_) return false;
    }
    out_.values.push_back(x);
    out_.all_integers = out_.all_integers && integer;
    return true;
  }
  // A number or a non-empty list at `depth`; the lists must be rectangular
  // (every list at one depth as long as the first, numbers all at one depth).
  bool value(std::size_t depth) {
    skip_space();
    if (p_ == end_) return false;
    std::vector<int64_t>& dims = out_.dims;
    if (*p_ != '[') {
      if (leaf_depth_ < 0) {
        if (depth != dims.size()) return false;
        leaf_depth_ = static_cast<int64_t>(depth);
      }
      return static_cast<int64_t>(depth) == leaf_depth_ && number();
    }
    if (depth >= kMaxDepth || (leaf_depth_ >= 0 && static_cast<int64_t>(depth) >= leaf_depth_)) return false;
    ++p_;
    if (depth == dims.size()) dims.push_back(-1);  // the first list this deep: its length sets the dim
    if (eat(']')) return false;
    int64_t n = 0;
    do {
      if (!value(depth + 1)) return false;
      ++n;
    } while (eat(','));
    if (!eat(']')) return false;
    if (dims[depth] < 0) dims[depth] = n;
    return dims[depth] == n;
  }

  const char* p_;
  const char* end_;
  NumericBody& out_;
  int64_t leaf_depth_ = -1;
};

// The numbers as integers of [lo, hi], when each was written as one (the
// full reader refuses 1.0 for an integer input) and is exact in a double.
template <typename T>
bool store_integers(const std::vector<double>& values, bool all_integers, T* to, double lo, double hi) {
  constexpr double kExact = 9007199254740992.0;  // 2^53
  if (!all_integers) return false;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    if (x < lo || x > hi || std::fabs(x) > kExact) return false;
    to[i] = static_cast<T>(x);
  }
  return true;
}

}  // namespace

std::optional<NumericBody> read_numeric_body(std::string_view body) {
  NumericBody out;
  if (!Reader(body, out).body()) return std::nullopt;
  return out;
}

std::optional<TensorMap> numeric_tensors(const NumericBody& body, const std::vector<saved_model::TensorInfo>& inputs) {
  if (inputs.size() != 1) return std::nullopt;
  const saved_model::TensorInfo& info = inputs[0];
  const Shape shape(body.dims);
  check_shape_fits(info, shape);
  Tensor t = core::make_tensor(info.dtype, shape);
  const std::vector<double>& v = body.values;
  bool stored = true;
  switch (info.dtype) {
    case DType::Float32: {
      float* to = core::data_of<float>(t);
      for (std::size_t i = 0; i < v.size(); ++i) to[i] = static_cast<float>(v[i]);
      break;
    }
    case DType::Float64: std::copy(v.begin(), v.end(), core::data_of<double>(t)); break;
    case DType::Int32:
      stored = store_integers(v, body.all_integers, core::data_of<int32_t>(t), INT32_MIN, INT32_MAX);
      break;
    case DType::Int64:
      stored = store_integers(v, body.all_integers, core::data_of<int64_t>(t), static_cast<double>(INT64_MIN),
                              static_cast<double>(INT64_MAX));
      break;
    case DType::UInt8: stored = store_integers(v, body.all_integers, core::data_of<uint8_t>(t), 0, 255); break;
    default: stored = false;  // bools and strings are not numbers
  }
  if (!stored) return std::nullopt;
  TensorMap tensors;
  tensors.emplace(info.name, std::move(t));
  return tensors;
}

}  // namespace kiln::serve
