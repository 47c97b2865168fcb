#pragma once
// Adding context to an error on its way up (the executor names the node that
// failed), or cleaning its text (the loader escapes bytes from a file),
// without changing its kind, so callers (and Python's tf.errors classes)
// still see InvalidArgument, ResourceExhausted...
#include <functional>
#include <string>
#include <string_view>

namespace kiln::core {

// Throws the exception being handled again, of the same kiln::Error kind,
// with the message `edit(what())`. std::bad_alloc and std::length_error (a
// container asked for more than memory holds) become ResourceExhausted
// ("out of memory (...)"); another std::exception becomes Error. Call only
// inside a catch block.
[[noreturn]] void rethrow_edited(const std::function<std::string(std::string_view)>& edit);

// rethrow_edited with `before` + message + `after`.
[[noreturn]] void rethrow_with_context(std::string_view before, std::string_view after);

}  // namespace kiln::core
