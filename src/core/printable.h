#pragma once
// Text that came from a file (names, string values, a parser's complaint), made
// safe to print on a terminal: a hostile saved model must not move the cursor,
// recolour or retitle the user's terminal, nor hide text with bidirectional
// overrides, through an error message or kiln-cli's output.
#include <string>
#include <string_view>

namespace kiln::core {

// `text` with control characters (C0 but tab, DEL, C1), bytes that are not
// UTF-8, and Unicode's bidirectional controls written as escapes ("\x1b",
// "\u{202e}"); printable UTF-8 passes unchanged. '\n' passes too when
// `keep_newlines` (multi-line output that Kiln lays out itself).
std::string printable(std::string_view text, bool keep_newlines = false);

}  // namespace kiln::core
