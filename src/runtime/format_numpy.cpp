// NumPy's str() of an array with default print options, byte for byte: a
// port of numpy.core.arrayprint (_formatArray, FloatingFormat in 'maxprec'
// mode, IntegerFormat, BoolFormat, object arrays of bytes), and the
// tf.Tensor(...) wrapper TensorFlow puts around it.
//
// NumPy's Dragon4 gives the shortest digits that read back to the same value
// of the element's type; std::to_chars gives the same digits. Where NumPy
// prints more or fewer digits than the shortest (a common precision, the
// 8-digit cap), it rounds the exact binary value, as to_chars with a
// precision does.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/dtype_switch.h"
#include "core/tensor_impl.h"
#include "runtime/format.h"

namespace kiln::runtime {

namespace {

constexpr int kPrecision = 8;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr int kLineWidth = 75;

template <class T> std::string chars(T v, std::chars_format fmt) {
  char buf[512];
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt);
  return std::string(buf, r.ptr);
}
template <class T> std::string chars(T v, std::chars_format fmt, int precision) {
  char buf[512];
  auto r = std::to_chars(buf, buf + sizeof buf, v, fmt, precision);
  return std::string(buf, r.ptr);
}

// The shortest scientific digits that read back to the same float16 (what
// NumPy's Dragon4 prints for a float16): the fewest significant digits whose
// correctly rounded decimal converts back to the same bits.
std::string chars(float16_t v, std::chars_format fmt) {
  for (int precision = 0; precision < 17; ++precision) {
    std::string s = chars(static_cast<double>(v), std::chars_format::scientific, precision);
    if (float16_t(std::strtod(s.c_str(), nullptr)).bits == v.bits)
      return fmt == std::chars_format::scientific ? s : chars(std::strtod(s.c_str(), nullptr), fmt);
  }
  return chars(static_cast<double>(v), fmt);
}
// With a precision a float16 prints as its exact value does (a float16 is
// exactly a double).
std::string chars(float16_t v, std::chars_format fmt, int precision) {
  return chars(static_cast<double>(v), fmt, precision);
}

// A finite float's text cut into "<int>.<frac>e<exp>" (exp empty when
// positional, else with its sign: "-05").
struct Decimal {
  std::string int_part, frac, exp;
};

Decimal split(const std::string& s) {
  Decimal d;
  std::size_t e = s.find('e');
  std::string mantissa = s.substr(0, e);
  if (e != std::string::npos) d.exp = s.substr(e + 1);
  std::size_t dot = mantissa.find('.');
  d.int_part = mantissa.substr(0, dot);
  if (dot != std::string::npos) d.frac = mantissa.substr(dot + 1);
  return d;
}

void trim_zeros(std::string& frac) {
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
}

// The shortest round-trip digits laid out positionally: 6131243500000000
// for the float32 6131243519311872 (to_chars' fixed format would print every
// digit of a large integral value).
template <class T> Decimal shortest_positional(T v) {
  Decimal sci = split(chars(v, std::chars_format::scientific));
  Decimal d;
  std::string sign;
  std::string digits = sci.int_part + sci.frac;
  if (digits[0] == '-') {
    sign = "-";
    digits.erase(0, 1);
  }
  int exp = std::stoi(sci.exp);
  if (exp >= 0) {
    auto int_len = static_cast<std::size_t>(exp) + 1;
    if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
    d.int_part = sign + digits.substr(0, int_len);
    d.frac = digits.substr(int_len);
  } else {
    d.int_part = sign + "0";
    d.frac = std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  }
  trim_zeros(d.frac);
  return d;
}

// Dragon4 positional as FloatingFormat calls it: unique digits, at most
// kPrecision fractional digits, trailing zeros trimmed; and, as it passes
// min_digits=0, never fewer digits than down to the units (the float32
// 58740792 prints as "58740792.", where its shortest text is 58740790).
template <class T> Decimal positional(T v) {
  Decimal d = shortest_positional(v);
  if (d.frac.empty()) return split(chars(v, std::chars_format::fixed, 0));
  if (d.frac.size() > kPrecision) {
    d = split(chars(v, std::chars_format::fixed, kPrecision));
    trim_zeros(d.frac);
  }
  return d;
}

// Dragon4 scientific, unique digits, at most kPrecision fractional digits in
// the mantissa, trailing zeros trimmed.
template <class T> Decimal scientific(T v) {
  Decimal d = split(chars(v, std::chars_format::scientific));
  if (d.frac.size() > kPrecision) {
    d = split(chars(v, std::chars_format::scientific, kPrecision));
    trim_zeros(d.frac);
  }
  return d;
}

std::string spaces(std::ptrdiff_t n) { return n > 0 ? std::string(n, ' ') : std::string(); }

// numpy's FloatingFormat with precision 8, floatmode 'maxprec', sign '-'.
// `plus` is NumPy's sign='+' (the imaginary parts of complex numbers).
template <class T> class FloatFormat {
 public:
  explicit FloatFormat(const std::vector<T>& data, bool plus = false) : plus_(plus) {
    std::vector<T> finite;
    bool neginf = plus;
    for (T v : data) {
      if (std::isfinite(v)) finite.push_back(v);
      else if (std::isinf(v) && v < 0) neginf = true;
    }
    bool any_nonzero = false;
    T max_val{}, min_val{};
    for (T v : finite) {
      if (v == 0) continue;
      T a = T(std::abs(v));
      if (!any_nonzero || a > max_val) max_val = a;
      if (!any_nonzero || a < min_val) min_val = a;
      any_nonzero = true;
    }
    if (any_nonzero) {
      // NumPy divides in the element type (a float32 ratio may overflow to
      // inf) and compares with the thresholds as doubles.
      T ratio = T(max_val / min_val);
      exp_ = static_cast<double>(max_val) >= 1e8 || static_cast<double>(min_val) < 1e-4 ||
             static_cast<double>(ratio) > 1000.0;
    }
    if (finite.empty()) {
      pad_left_ = pad_right_ = 0;
    } else if (exp_) {
      std::size_t int_len = 0, frac_len = 0, exp_len = 0;
      for (T v : finite) {
        Decimal d = scientific(v);
        int_len = std::max(int_len, d.int_part.size() + plus_sign(v).size());
        frac_len = std::max(frac_len, d.frac.size());
        exp_len = std::max(exp_len, d.exp.size() - 1);
      }
      precision_ = static_cast<int>(frac_len);
      exp_size_ = static_cast<int>(exp_len);
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = exp_size_ + 2 + precision_;
    } else {
      std::size_t int_len = 0, frac_len = 0;
      for (T v : finite) {
        Decimal d = positional(v);
        int_len = std::max(int_len, d.int_part.size() + plus_sign(v).size());
        frac_len = std::max(frac_len, d.frac.size());
      }
      pad_left_ = static_cast<int>(int_len);
      pad_right_ = static_cast<int>(frac_len);
    }
    if (finite.size() != data.size()) {
      int offset = pad_right_ + 1;
      pad_left_ = std::max({pad_left_, 3 - offset, 3 + (neginf ? 1 : 0) - offset});
    }
  }

  std::string operator()(T v) const {
    if (!std::isfinite(v)) {
      std::string ret = std::isnan(v) ? (plus_ ? "+nan" : "nan") : v < 0 ? "-inf" : plus_ ? "+inf" : "inf";
      return spaces(pad_left_ + pad_right_ + 1 - static_cast<std::ptrdiff_t>(ret.size())) + ret;
    }
    if (exp_) {
      // Every value gets exactly precision_ mantissa digits: the shortest
      // digits when they are that many, else the exact value rounded.
      Decimal d = split(chars(v, std::chars_format::scientific));
      if (d.frac.size() != static_cast<std::size_t>(precision_))
        d = split(chars(v, std::chars_format::scientific, precision_));
      std::string digits = d.exp.substr(1);
      if (static_cast<int>(digits.size()) < exp_size_) digits.insert(0, exp_size_ - digits.size(), '0');
      std::string exp = d.exp.substr(0, 1) + digits;
      d.int_part.insert(0, plus_sign(v));
      return spaces(pad_left_ - static_cast<std::ptrdiff_t>(d.int_part.size())) + d.int_part + "." +
             d.frac + "e" + exp;
    }
    Decimal d = positional(v);
    d.int_part.insert(0, plus_sign(v));
    return spaces(pad_left_ - static_cast<std::ptrdiff_t>(d.int_part.size())) + d.int_part + "." + d.frac +
           spaces(pad_right_ - static_cast<std::ptrdiff_t>(d.frac.size()));
  }

 private:
  std::string plus_sign(T v) const { return plus_ && !std::signbit(static_cast<double>(v)) ? "+" : ""; }

  bool plus_ = false;
  bool exp_ = false;
  int pad_left_ = 0, pad_right_ = 0;
  int precision_ = kPrecision;
  int exp_size_ = -1;
};

// numpy's IntegerFormat: right-aligned to the widest of max and min.
template <class T> class IntegerFormat {
 public:
  explicit IntegerFormat(const std::vector<T>& data) {
    if (data.empty()) return;
    auto [lo, hi] = std::minmax_element(data.begin(), data.end());
    width_ = std::max(text(*lo).size(), text(*hi).size());
  }
  std::string operator()(T v) const {
    std::string s = text(v);
    return spaces(static_cast<std::ptrdiff_t>(width_) - static_cast<std::ptrdiff_t>(s.size())) + s;
  }

 private:
  static std::string text(T v) {
    if constexpr (std::is_unsigned_v<T>) return std::to_string(static_cast<uint64_t>(v));
    else return std::to_string(static_cast<int64_t>(v));
  }
  std::size_t width_ = 0;
};

std::string rstrip(const std::string& s) {
  std::size_t end = s.find_last_not_of(" \t\n\r\v\f");
  return end == std::string::npos ? std::string() : s.substr(0, end + 1);
}

// numpy's _extendLine.
void extend_line(std::string& s, std::string& line, const std::string& word, int line_width,
                 const std::string& next_line_prefix) {
  bool needs_wrap = static_cast<int>(line.size() + word.size()) > line_width;
  if (line.size() <= next_line_prefix.size()) needs_wrap = false;
  if (needs_wrap) {
    s += rstrip(line);
    s += '\n';
    line = next_line_prefix;
  }
  line += word;
}

// numpy's _formatArray with separator ' ' and legacy printing off.
template <class Element> class ArrayFormatter {
 public:
  ArrayFormatter(const Shape& shape, bool summary, const Element& element)
      : shape_(shape), summary_(summary), element_(element), strides_(shape.rank(), 1) {
    for (int i = shape.rank() - 2; i >= 0; --i) strides_[i] = strides_[i + 1] * shape[i + 1];
  }

  std::string format() const { return recurse(0, 0, " ", kLineWidth); }

 private:
  std::string recurse(int axis, int64_t offset, const std::string& hanging_indent, int curr_width) const {
    int axes_left = shape_.rank() - axis;
    if (axes_left == 0) return element_(offset);
    std::string next_hanging_indent = hanging_indent + ' ';
    int next_width = curr_width - 1;  // len(']')
    int64_t a_len = shape_[axis];
    bool show_summary = summary_ && 2 * kEdgeItems < a_len;
    int64_t leading = show_summary ? kEdgeItems : 0;
    int64_t trailing = show_summary ? kEdgeItems : a_len;
    auto child = [&](int64_t i) {
      return recurse(axis + 1, offset + i * strides_[axis], next_hanging_indent, next_width);
    };

    std::string s;
    if (axes_left == 1) {
      int elem_width = curr_width - 1;  // max(len(separator.rstrip()), len(']'))
      std::string line = hanging_indent;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, child(i), elem_width, hanging_indent);
        line += ' ';
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging_indent);
        line += ' ';
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, child(a_len - i), elem_width, hanging_indent);
        line += ' ';
      }
      extend_line(s, line, child(a_len - 1), elem_width, hanging_indent);
      s += line;
    } else {
      std::string line_sep(static_cast<std::size_t>(axes_left - 1), '\n');
      for (int64_t i = 0; i < leading; ++i) s += hanging_indent + child(i) + line_sep;
      if (show_summary) s += hanging_indent + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i) s += hanging_indent + child(a_len - i) + line_sep;
      s += hanging_indent + child(a_len - 1);
    }
    // (Built piece by piece: "[" + s.substr(...) trips GCC 12's -Wrestrict.)
    std::string out(1, '[');
    out.append(s, hanging_indent.size());
    out += ']';
    return out;
  }

  const Shape& shape_;
  bool summary_;
  const Element& element_;
  std::vector<int64_t> strides_;
};

// The flat offsets of the elements a (maybe summarized) array shows: numpy's
// _leading_trailing, whose values alone decide the common format.
void collect_shown(const Shape& shape, const std::vector<int64_t>& strides, bool summary, int axis,
                   int64_t offset, std::vector<int64_t>& out) {
  if (axis == shape.rank()) {
    out.push_back(offset);
    return;
  }
  int64_t n = shape[axis];
  for (int64_t i = 0; i < n; ++i) {
    if (summary && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    collect_shown(shape, strides, summary, axis + 1, offset + i * strides[axis], out);
  }
}

template <class T> std::string scalar_str(T v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  double a = std::abs(static_cast<double>(v));
  if (a == 0 || (a < 1e16 && a >= 1e-4)) {
    Decimal d = shortest_positional(v);
    return d.int_part + "." + (d.frac.empty() ? "0" : d.frac);
  }
  return chars(v, std::chars_format::scientific);
}

// bfloat16 as TF prints it: NumPy has no bfloat16, and TF's (ml_dtypes')
// array type prints each element as C++'s ostream prints the float value
// ("%g": 6 significant digits, "1" for 1.0), with no common width.
std::string bfloat16_str(bfloat16_t v) {
  float f = v;
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", static_cast<double>(f));
  return buf;
}

// One part of a complex scalar as Python's repr writes it: shortest digits,
// no ".0" for whole numbers ("1", "1.5", "1e+20").
template <class R> std::string complex_part(R v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  std::string s = scalar_str(v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// NumPy's str of a complex scalar: "(1+2j)", "(1.5-0.5j)", or "2j" when the
// real part is +0.
template <class R> std::string complex_scalar_str(std::complex<R> v) {
  std::string imag = complex_part(v.imag());
  if (v.real() == 0 && !std::signbit(v.real())) return imag + "j";
  std::string sign = imag[0] == '-' ? "" : "+";
  return "(" + complex_part(v.real()) + sign + imag + "j)";
}

// NumPy's ComplexFloatingFormat: the real parts formatted together, the
// imaginary parts together with a '+' sign, "j" before the padding.
template <class R> class ComplexFormat {
 public:
  explicit ComplexFormat(const std::vector<std::complex<R>>& data)
      : real_(parts(data, false)), imag_(parts(data, true), true) {}
  std::string operator()(std::complex<R> v) const {
    std::string i = imag_(v.imag());
    std::size_t end = i.find_last_not_of(' ') + 1;
    return real_(v.real()) + i.substr(0, end) + "j" + i.substr(end);
  }

 private:
  static std::vector<R> parts(const std::vector<std::complex<R>>& data, bool imag) {
    std::vector<R> out;
    out.reserve(data.size());
    for (const auto& v : data) out.push_back(imag ? v.imag() : v.real());
    return out;
  }
  FloatFormat<R> real_, imag_;
};

template <class T> std::string format_array(const Tensor& t, bool summary) {
  const Shape& shape = t.shape();
  const T* data = core::data_of<T>(t);
  std::vector<int64_t> strides(shape.rank(), 1);
  for (int i = shape.rank() - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  std::vector<T> shown;
  if (summary) {
    std::vector<int64_t> offsets;
    collect_shown(shape, strides, summary, 0, 0, offsets);
    shown.reserve(offsets.size());
    for (int64_t o : offsets) shown.push_back(data[o]);
  } else {
    shown.assign(data, data + t.size());
  }
  auto run = [&](const auto& fmt) {
    auto element = [&](int64_t offset) { return fmt(data[offset]); };
    return ArrayFormatter<decltype(element)>(shape, summary, element).format();
  };
  if constexpr (std::is_same_v<T, bool>) {
    return run([](bool v) { return std::string(v ? " True" : "False"); });
  } else if constexpr (std::is_same_v<T, std::string>) {
    return run([](const std::string& v) { return python_bytes_repr(v); });
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16_t>) {
    return run(FloatFormat<T>(shown));
  } else if constexpr (std::is_same_v<T, bfloat16_t>) {
    return run([](bfloat16_t v) { return bfloat16_str(v); });  // each its own repr, unpadded
  } else if constexpr (requires { shown[0].imag(); }) {
    return run(ComplexFormat<typename T::value_type>(shown));
  } else {
    return run(IntegerFormat<T>(shown));
  }
}

template <class T> std::string format_scalar(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "True" : "False";
  else if constexpr (std::is_same_v<T, std::string>) return python_bytes_repr(v);
  else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, float16_t>) return scalar_str(v);
  else if constexpr (std::is_same_v<T, bfloat16_t>) return bfloat16_str(v);
  else if constexpr (requires { v.imag(); }) return complex_scalar_str(v);
  else if constexpr (std::is_unsigned_v<T>) return std::to_string(static_cast<uint64_t>(v));
  else return std::to_string(static_cast<int64_t>(v));
}

}  // namespace

std::string numpy_scalar_str(double v) { return scalar_str(v); }
std::string numpy_scalar_str(float v) { return scalar_str(v); }

std::string python_bytes_repr(std::string_view s) {
  char quote = '\'';
  if (s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos) quote = '"';
  std::string out = "b";
  out += quote;
  static constexpr char kHex[] = "0123456789abcdef";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == static_cast<unsigned char>(quote) || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  out += quote;
  return out;
}

std::string numpy_str(const Tensor& t) {
  core::require_concrete(t, "numpy_str");
  // As TensorFlow shows a dtype NumPy cannot hold (a resource handle).
  if (t.dtype() == DType::Resource) return "<unprintable>";
  return core::visit_all_dtypes(t.dtype(), [&]<class T>() -> std::string {
    if (t.rank() == 0) return format_scalar(core::data_of<T>(t)[0]);
    if (t.size() == 0) return "[]";
    return format_array<T>(t, t.size() > kThreshold);
  });
}

std::string tensor_repr(const Tensor& t) {
  if (!t.defined()) return "kiln.Tensor(null)";
  std::string out;
  if (t.is_symbolic()) {
    out = "Tensor(\"";
    out += core::symbolic_tensor_name(t);
    out += '"';
  } else {
    out = "kiln.Tensor(";
    std::string text = numpy_str(t);
    if (text.find('\n') != std::string::npos) out += '\n';
    out += text;
  }
  out += ", shape=";
  out += t.shape().to_string();
  out += ", dtype=";
  out += dtype_name(t.dtype());
  out += ')';
  return out;
}

}  // namespace kiln::runtime
