#pragma once
// `kiln-cli board LOGDIR --out report.html`: the HTML report of a TensorBoard
// log directory. The page is written by the Python package's kiln.board (one
// implementation; design notes, "kiln-cli board runs the Python board"), which
// this command runs with Debian's interpreter, finding the package beside the
// build or installed.
#include <iosfwd>
#include <string>
#include <vector>

namespace kiln::io {

// args: the words after `board`. Runs the interpreter ($KILN_PYTHON, else
// /usr/bin/python3) on kiln.board; its standard output goes to `out`, its
// errors to `err`. Returns its exit status, or 1 with a message naming what is
// missing when the interpreter or the package cannot be found.
int run_board(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The folders searched for the `kiln` package, first to last, for an
// executable at `exe`: `<exe's folder>/python` (the build tree's package) and
// `<exe's folder>/../lib/python3.*/site-packages` (`cmake --install`'s). Only
// those holding kiln/__init__.py are returned.
std::vector<std::string> board_package_dirs(const std::string& exe);

}  // namespace kiln::io
