#pragma once
// Adding context to an error on its way up (the executor names the node that
// failed) without changing its kind, so callers (and Python's tf.errors
// classes) still see InvalidArgument, ResourceExhausted...
#include <string_view>

namespace kiln::detail {

// Throws the exception being handled again, of the same kiln::Error kind,
// with `before` + its message + `after`. std::bad_alloc and std::length_error
// (a container asked for more than memory holds) become ResourceExhausted;
// another std::exception becomes Error. Call only inside a catch block.
[[noreturn]] void rethrow_with_context(std::string_view before, std::string_view after);

}  // namespace kiln::detail
