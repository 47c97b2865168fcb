// tf.print's text of a tensor: a port of TensorFlow's Tensor::SummarizeValue
// with print_v2 (PrintOneDimV2, PrintDimSpacing) and of the way its StrCat
// writes each element (FloatToBuffer / DoubleToBuffer for floats, integers
// for bools, Utf8SafeCEscape'd quoted strings).
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/dtype_switch.h"
#include "core/tensor_impl.h"
#include "runtime/format.h"

namespace kiln::runtime {

namespace {

// "%.<digits10>g" when that reads back to the same value, else
// "%.<max_digits10>g" (FLT_DIG 6 / 9 for float, DBL_DIG 15 / 17 for double).
template <class T> void append_float(std::string& out, T v) {
  char buf[64];
  if (std::isnan(v)) {
    out += std::signbit(v) ? "-nan" : "nan";
    return;
  }
  constexpr int kShort = std::is_same_v<T, float> ? FLT_DIG : DBL_DIG;
  constexpr int kLong = std::is_same_v<T, float> ? FLT_DIG + 3 : DBL_DIG + 2;
  std::snprintf(buf, sizeof buf, "%.*g", kShort, static_cast<double>(v));
  T back;
  if constexpr (std::is_same_v<T, float>) back = std::strtof(buf, nullptr);
  else back = std::strtod(buf, nullptr);
  if (back != v) std::snprintf(buf, sizeof buf, "%.*g", kLong, static_cast<double>(v));
  out += buf;
}

// absl::Utf8SafeCEscape: C escapes for quotes, backslash and control
// characters (octal), UTF-8 bytes kept as they are.
void append_escaped(std::string& out, const std::string& s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\'': out += "\\'"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\%03o", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
}

template <class T> void append_element(std::string& out, const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    out += '"';
    append_escaped(out, v);
    out += '"';
  } else if constexpr (std::is_floating_point_v<T>) {
    append_float(out, v);
  } else if constexpr (is_half_type<T>) {
    append_float(out, static_cast<float>(v));  // TF's StrCat widens Eigen::half to float
  } else if constexpr (requires { v.imag(); }) {
    out += '(';
    append_float(out, v.real());
    out += ',';
    append_float(out, v.imag());
    out += ')';
  } else if constexpr (std::is_same_v<T, bool>) {
    out += v ? '1' : '0';
  } else if constexpr (std::is_unsigned_v<T>) {
    out += std::to_string(static_cast<uint64_t>(v));
  } else {
    out += std::to_string(static_cast<int64_t>(v));
  }
}

void append_dim_spacing(std::string& out, int dim, int num_dims) {
  if (dim == num_dims - 1) {
    out += ' ';
    return;
  }
  out.append(static_cast<std::size_t>(num_dims - dim - 1), '\n');
  out.append(static_cast<std::size_t>(dim + 1), ' ');
}

template <class T>
void append_dim(std::string& out, const T* data, const Shape& shape, int dim, int64_t ends,
                int64_t offset) {
  int num_dims = shape.rank();
  if (dim == num_dims) {
    append_element(out, data[offset]);
    return;
  }
  out += '[';
  int64_t count = shape[dim];
  int64_t start_of_end = std::max(ends, count - ends);
  int64_t per_item = 1;
  for (int i = dim + 1; i < num_dims; ++i) per_item *= shape[i];
  for (int64_t i = 0; i < ends && i < count; ++i) {
    if (i > 0) append_dim_spacing(out, dim, num_dims);
    append_dim(out, data, shape, dim + 1, ends, offset + per_item * i);
  }
  if (count > 2 * ends) {
    append_dim_spacing(out, dim, num_dims);
    out += "...";
  }
  for (int64_t i = start_of_end; i < count; ++i) {
    append_dim_spacing(out, dim, num_dims);
    append_dim(out, data, shape, dim + 1, ends, offset + per_item * i);
  }
  out += ']';
}

}  // namespace

std::string summarize_value(const Tensor& t, int64_t summarize) {
  core::require_concrete(t, "summarize_value");
  if (t.dtype() == DType::Resource) return "<resource>";
  int64_t n = t.size();
  // TensorFlow caps the edge count by the element count (so an empty tensor
  // of shape (2, 0) reads "[\n ...]", as in TensorFlow).
  int64_t limit = summarize < 0 ? n : std::min(summarize, n);
  std::string out;
  core::visit_all_dtypes(t.dtype(), [&]<class T>() {
    const T* data = core::data_of<T>(t);
    if (t.rank() == 0) {
      for (int64_t i = 0; i < limit; ++i) {
        if (i > 0) out += ' ';
        append_element(out, data[i]);
      }
      if (n > limit) out += "...";
      return;
    }
    append_dim(out, data, t.shape(), 0, limit, 0);
  });
  return out;
}

}  // namespace kiln::runtime
