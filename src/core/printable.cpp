#include "core/printable.h"

#include <fmt/format.h>

namespace kiln::core {

namespace {

// The length of the UTF-8 sequence at s[i] and its code point, or 0 when it
// is not well-formed (overlong, surrogate, past U+10FFFF, cut short).
int decode_utf8(std::string_view s, std::size_t i, char32_t* cp) {
  unsigned char b = static_cast<unsigned char>(s[i]);
  int n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  char32_t c = n == 1 ? b : b & (0x7f >> n);
  for (int k = 1; k < n; ++k) {
    unsigned char cont = static_cast<unsigned char>(s[i + k]);
    if ((cont >> 6) != 0x2) return 0;
    c = (c << 6) | (cont & 0x3f);
  }
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < kMin[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *cp = c;
  return n;
}

bool is_control(char32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) ||
         // bidirectional embeddings, overrides and isolates; line and paragraph separators
         (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029 ||
         c == 0x200e || c == 0x200f || c == 0x061c;
}

}  // namespace

std::string printable(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    int n = decode_utf8(text, i, &c);
    if (n == 0) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (!is_control(c) || c == '\t' || (c == '\n' && keep_newlines))
      out.append(text.substr(i, static_cast<std::size_t>(n)));
    else if (c == '\n')
      out += "\\n";
    else if (c < 0x80)
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned>(c));
    else
      fmt::format_to(std::back_inserter(out), "\\u{{{:04x}}}", static_cast<unsigned>(c));
    i += static_cast<std::size_t>(n);
  }
  return out;
}

}  // namespace kiln::core
