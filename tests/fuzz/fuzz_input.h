#pragma once
// The fuzz target's input: a saved model's two files in one blob, a 4-byte
// little-endian length of saved_model.json, its bytes, then the bytes of
// variables.safetensors.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace kiln::fuzz {

inline std::string encode_model(std::string_view document, std::string_view weights) {
  std::string out(4, '\0');
  uint32_t n = static_cast<uint32_t>(document.size());
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  out += document;
  out += weights;
  return out;
}

// Any blob splits into two parts (a length past the end takes everything).
inline std::pair<std::string_view, std::string_view> decode_model(std::string_view blob) {
  if (blob.size() < 4) return {{}, {}};
  uint32_t n = 0;
  for (int i = 3; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(blob[i]);
  std::string_view rest = blob.substr(4);
  if (n > rest.size()) n = static_cast<uint32_t>(rest.size());
  return {rest.substr(0, n), rest.substr(n)};
}

}  // namespace kiln::fuzz
