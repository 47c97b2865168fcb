#pragma once
// Strict readers of JSON values for the saved-model loader: every helper
// checks the JSON type and range and throws InvalidArgument naming `where`
// (a path such as "function 'f': node 'add': attr axis"), so no loader code
// converts a value without checking it first.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "kiln/tensor.h"

namespace kiln::io {

using json = nlohmann::ordered_json;

// Where in a document a value sits, for error messages. The text is built
// only when an error is raised: a loader checks every value of a large model
// and almost never fails, so it passes a chain of parts (each appended to its
// parent's text: "graph 0" + ": node 'add'" + ": input " + 1) that costs a few
// words on the stack. A part refers to its parent and to its strings; build it
// where it is used, from values that outlive it.
class Where {
 public:
  Where(const char* text) : text_(text) {}
  Where(std::string_view text) : text_(text) {}
  Where(const std::string& text) : text_(text) {}
  // parent + text
  Where(const Where& parent, std::string_view text) : parent_(&parent), text_(text) {}
  // parent + text + index + close ("[", 3, "]"; ": node ", 3)
  Where(const Where& parent, std::string_view text, std::size_t index, std::string_view close = {})
      : parent_(&parent), text_(text), close_(close), index_(index), has_index_(true) {}
  // parent + text + name + close (": node '", "add", "'")
  Where(const Where& parent, std::string_view text, std::string_view name, std::string_view close)
      : parent_(&parent), text_(text), name_(name), close_(close) {}

  // A part keeps a pointer to its parent, so a temporary parent would leave
  // a named part dangling: name the parent first.
  Where(Where&&, std::string_view) = delete;
  Where(Where&&, std::string_view, std::size_t, std::string_view = {}) = delete;
  Where(Where&&, std::string_view, std::string_view, std::string_view) = delete;

  std::string str() const;

 private:
  void append_to(std::string& out) const;

  const Where* parent_ = nullptr;
  std::string_view text_, name_, close_;
  std::size_t index_ = 0;
  bool has_index_ = false;
};

// Parses `text`; a syntax error names `what` and the byte offset.
json parse_json(std::string_view text, std::string_view what);
// Serializes; text that is not valid UTF-8 is an InvalidArgument naming `what`.
std::string dump_json(const json& value, int indent, std::string_view what);

// For people reading the file: a value whose compact text fits in `width`
// characters stays on one line (a graph's node, a tensor spec); larger ones
// open with one key or element per line.
std::string dump_json_readable(const json& value, std::string_view what, std::size_t width = 200);

// Throws InvalidArgument "<where>: <message>".
[[noreturn]] void json_fail(const Where& where, std::string_view message);

const json& member(const json& object, std::string_view key, const Where& where);
const json* optional_member(const json& object, std::string_view key, const Where& where);
const std::string& parse_string(const json& value, const Where& where);
int64_t parse_int(const json& value, const Where& where);
uint64_t parse_uint(const json& value, const Where& where);
bool parse_bool(const json& value, const Where& where);
double parse_double(const json& value, const Where& where);
const json& parse_array(const json& value, const Where& where);
const json& parse_object(const json& value, const Where& where);

// "float32" ... "resource" (Kiln's dtype names).
DType parse_dtype(const json& value, const Where& where);
// [2, null] (null: an unknown dim); null for an unknown rank when allowed.
Shape parse_shape(const json& value, const Where& where, bool allow_unknown);
json shape_to_json(const Shape& shape);
// Product of the dims of a fully defined shape, failing on overflow past 2^62.
uint64_t checked_num_elements(const Shape& shape, const Where& where);

std::string base64_encode(std::string_view bytes);
// Throws InvalidArgument naming `where` on a character outside the alphabet
// or a bad length.
std::string base64_decode(std::string_view text, const Where& where);

}  // namespace kiln::io
