#pragma once
// Files of a saved model: whole-file reads with a size limit, and a directory
// written atomically (complete, or not at all).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::io {

// The bytes of the file `name` in the directory `dir`. It must be a regular
// file inside `dir`: a symbolic link is followed only to a file inside `dir`
// (never out of it, however many links or ".." it takes), and devices, FIFOs
// and directories are refused, so a hostile model directory cannot make Kiln
// read (and echo) another file or block on a pipe. NotFound when it does not
// exist; InvalidArgument when it is elsewhere, not a regular file, or larger
// than `max_bytes`.
std::string read_file_in(const std::string& dir, const std::string& name, uint64_t max_bytes);

// Writes `files` (name, bytes) into a fresh temporary directory next to `dir`,
// flushes them to disk, then puts the directory in place of `dir` in one
// rename (an atomic exchange when `dir` exists, so readers see the old or the
// new model, never a mix). `dir` may be absent, empty, or hold a saved model
// (a directory with `marker_file`); anything else is refused
// (FailedPrecondition) rather than deleted. On failure the temporary directory
// is removed and `dir` is untouched.
void write_directory_atomically(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files,
                                const std::string& marker_file);

namespace testing {
// Makes the next write_directory_atomically fail after writing this many
// files (-1: never); for tests of the failure path.
void fail_after_files(int count);
}  // namespace testing

}  // namespace kiln::io
