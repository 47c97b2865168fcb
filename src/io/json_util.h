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

// Parses `text`; a syntax error names `what` and the byte offset.
json parse_json(std::string_view text, std::string_view what);
// Serializes; text that is not valid UTF-8 is an InvalidArgument naming `what`.
std::string dump_json(const json& value, int indent, std::string_view what);

// For people reading the file: a value whose compact text fits in `width`
// characters stays on one line (a graph's node, a tensor spec); larger ones
// open with one key or element per line.
std::string dump_json_readable(const json& value, std::string_view what, std::size_t width = 200);

[[noreturn]] void json_fail(std::string_view where, std::string_view message);

const json& member(const json& object, std::string_view key, std::string_view where);
const json* optional_member(const json& object, std::string_view key, std::string_view where);
const std::string& parse_string(const json& value, std::string_view where);
int64_t parse_int(const json& value, std::string_view where);
uint64_t parse_uint(const json& value, std::string_view where);
bool parse_bool(const json& value, std::string_view where);
double parse_double(const json& value, std::string_view where);
const json& parse_array(const json& value, std::string_view where);
const json& parse_object(const json& value, std::string_view where);

// "float32" ... "resource" (Kiln's dtype names).
DType parse_dtype(const json& value, std::string_view where);
// [2, null] (null: an unknown dim); null for an unknown rank when allowed.
Shape parse_shape(const json& value, std::string_view where, bool allow_unknown);
json shape_to_json(const Shape& shape);
// Product of the dims of a fully defined shape, failing on overflow past 2^62.
uint64_t checked_num_elements(const Shape& shape, std::string_view where);

std::string base64_encode(std::string_view bytes);
// Throws InvalidArgument naming `where` on a character outside the alphabet
// or a bad length.
std::string base64_decode(std::string_view text, std::string_view where);

}  // namespace kiln::io
