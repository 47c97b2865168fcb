#include "io/json_util.h"

#include <fmt/format.h>

#include "kiln/error.h"

namespace kiln::io {

json parse_json(std::string_view text, std::string_view what) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // nlohmann quotes the bytes it read last: not echoed (they may be any
    // file's); the position stays.
    std::string_view message = e.what();
    message = message.substr(0, message.find("; last read: "));
    throw InvalidArgument(fmt::format("{} is not valid JSON: {}", what, message));
  }
}

namespace {
[[noreturn]] void dump_failed(std::string_view what, const json::exception& e) {
  throw InvalidArgument(fmt::format("{}: cannot write it as JSON (strings must be UTF-8): {}", what, e.what()));
}
}  // namespace

std::string dump_json(const json& value, int indent, std::string_view what) {
  try {
    return value.dump(indent);
  } catch (const json::exception& e) {
    dump_failed(what, e);
  }
}

namespace {
void dump_readable(const json& v, int indent, std::size_t width, std::string& out) {
  std::string compact = v.dump();
  if ((!v.is_object() && !v.is_array()) || v.empty() || compact.size() + static_cast<std::size_t>(indent) <= width) {
    out += compact;
    return;
  }
  out += v.is_object() ? "{\n" : "[\n";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first) out += ",\n";
    first = false;
    out.append(static_cast<std::size_t>(indent + 1), ' ');
    if (v.is_object()) {
      out += json(it.key()).dump();
      out += ": ";
    }
    dump_readable(it.value(), indent + 1, width, out);
  }
  out += '\n';
  out.append(static_cast<std::size_t>(indent), ' ');
  out += v.is_object() ? '}' : ']';
}
}  // namespace

std::string dump_json_readable(const json& value, std::string_view what, std::size_t width) {
  try {
    std::string out;
    dump_readable(value, 0, width, out);
    return out;
  } catch (const json::exception& e) {
    dump_failed(what, e);
  }
}

void Where::append_to(std::string& out) const {
  if (parent_) parent_->append_to(out);
  out += text_;
  if (has_index_) fmt::format_to(std::back_inserter(out), "{}", index_);
  out += name_;
  out += close_;
}

std::string Where::str() const {
  std::string out;
  append_to(out);
  return out;
}

void json_fail(const Where& where, std::string_view message) {
  throw InvalidArgument(fmt::format("{}: {}", where.str(), message));
}

const json& parse_object(const json& value, const Where& where) {
  if (!value.is_object()) json_fail(where, fmt::format("expected an object, got {}", value.type_name()));
  return value;
}

const json& parse_array(const json& value, const Where& where) {
  if (!value.is_array()) json_fail(where, fmt::format("expected an array, got {}", value.type_name()));
  return value;
}

const json* optional_member(const json& object, std::string_view key, const Where& where) {
  parse_object(object, where);
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const json& member(const json& object, std::string_view key, const Where& where) {
  const json* v = optional_member(object, key, where);
  if (!v) json_fail(where, fmt::format("'{}' is missing", key));
  return *v;
}

const std::string& parse_string(const json& value, const Where& where) {
  if (!value.is_string()) json_fail(where, fmt::format("expected a string, got {}", value.type_name()));
  return value.get_ref<const std::string&>();
}

int64_t parse_int(const json& value, const Where& where) {
  if (value.is_number_unsigned()) {
    uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) json_fail(where, fmt::format("{} does not fit in int64", u));
    return static_cast<int64_t>(u);
  }
  if (!value.is_number_integer()) json_fail(where, fmt::format("expected an integer, got {}", value.type_name()));
  return value.get<int64_t>();
}

uint64_t parse_uint(const json& value, const Where& where) {
  if (value.is_number_unsigned()) return value.get<uint64_t>();
  if (value.is_number_integer()) json_fail(where, fmt::format("{} is negative", value.get<int64_t>()));
  json_fail(where, fmt::format("expected a non-negative integer, got {}", value.type_name()));
}

bool parse_bool(const json& value, const Where& where) {
  if (!value.is_boolean()) json_fail(where, fmt::format("expected true or false, got {}", value.type_name()));
  return value.get<bool>();
}

double parse_double(const json& value, const Where& where) {
  if (value.is_number()) return value.get<double>();
  // JSON has no NaN or infinity.
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  json_fail(where, fmt::format("expected a number (or \"nan\", \"inf\", \"-inf\"), got {}", value.dump()));
}

DType parse_dtype(const json& value, const Where& where) {
  const std::string& s = parse_string(value, where);
  for (int d = 0; d < kNumDTypes; ++d)
    if (dtype_name(static_cast<DType>(d)) == s) return static_cast<DType>(d);
  json_fail(where, fmt::format("unknown dtype '{}'", s));
}

Shape parse_shape(const json& value, const Where& where, bool allow_unknown) {
  if (value.is_null()) {
    if (!allow_unknown) json_fail(where, "the shape must be known");
    return Shape::unknown_rank();
  }
  parse_array(value, where);
  if (value.size() > static_cast<std::size_t>(Shape::kMaxRank))
    json_fail(where, fmt::format("rank {} is more than Kiln supports ({})", value.size(), Shape::kMaxRank));
  int64_t dims[Shape::kMaxRank];
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i].is_null()) {
      if (!allow_unknown) json_fail(where, fmt::format("dim {} is unknown (null); it must be known", i));
      dims[i] = -1;
      continue;
    }
    int64_t d = parse_int(value[i], Where(where, ": dim ", i));
    if (d < 0) json_fail(where, fmt::format("dim {} is {}; dims are >= 0 (null for unknown)", i, d));
    dims[i] = d;
  }
  return Shape(std::span<const int64_t>(dims, value.size()));
}

json shape_to_json(const Shape& shape) {
  if (!shape.has_known_rank()) return nullptr;
  json out = json::array();
  for (int64_t d : shape.dims()) out.push_back(d < 0 ? json(nullptr) : json(d));
  return out;
}

uint64_t checked_num_elements(const Shape& shape, const Where& where) {
  uint64_t n = 1;
  for (int64_t d : shape.dims()) {
    if (d < 0) json_fail(where, fmt::format("shape {} is not fully defined", shape.to_string()));
    if (static_cast<uint64_t>(d) > uint64_t(Shape::kMaxElements) ||
        __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n) || n > uint64_t(Shape::kMaxElements))
      json_fail(where, fmt::format("shape {} has too many elements (a tensor may have 2^48)", shape.to_string()));
  }
  return n;
}

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(bytes[i]) << 16) | (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(v >> (6 * k)) & 63]);
  }
  std::size_t rest = bytes.size() - i;
  if (rest) {
    uint32_t v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string base64_decode(std::string_view text, const Where& where) {
  if (text.size() % 4 != 0) json_fail(where, fmt::format("base64 text has length {}, not a multiple of 4", text.size()));
  auto value = [&](char c, std::size_t pos) -> uint32_t {
    if (c >= 'A' && c <= 'Z') return static_cast<uint32_t>(c - 'A');
    if (c >= 'a' && c <= 'z') return static_cast<uint32_t>(c - 'a' + 26);
    if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0' + 52);
    if (c == '+') return 62;
    if (c == '/') return 63;
    json_fail(where, fmt::format("base64 text has a bad character at {}", pos));
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    int pad = 0;
    if (last && text[i + 3] == '=') pad = text[i + 2] == '=' ? 2 : 1;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 6) | (k >= 4 - pad ? 0 : value(text[i + k], i + k));
    out.push_back(static_cast<char>((v >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<char>((v >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<char>(v & 0xff));
  }
  return out;
}

}  // namespace kiln::io
