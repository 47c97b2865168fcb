#pragma once
// Debugging aids.
#include <functional>
#include <memory>
#include <source_location>
#include <typeinfo>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

namespace debugging {
// From now on every op checks its float outputs: NaN or Inf throws
// InvalidArgument naming the op (and, in a graph, the user's source line).
void enable_check_numerics();
void disable_check_numerics();
}  // namespace debugging

// tf.py_function: runs `callback` on the values of `inputs`, eagerly now, or
// on every call of a graph that was traced with it (in program order with
// the other side effects). The callback must return one tensor per entry of
// `output_dtypes`, of those dtypes; an exception it throws reaches the caller
// (from a graph, with the source line of the host_function call).
using HostCallbackFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::vector<Tensor> host_function(HostCallbackFn callback, const std::vector<Tensor>& inputs,
                                  const std::vector<DType>& output_dtypes,
                                  SourceLocation loc = SourceLocation::current());
// The same with the results' shapes declared (None dims allowed), so a graph
// knows them while tracing; a result of another shape is an error.
std::vector<Tensor> host_function(HostCallbackFn callback, const std::vector<Tensor>& inputs,
                                  const std::vector<DType>& output_dtypes, const std::vector<Shape>& output_shapes,
                                  SourceLocation loc = SourceLocation::current());

namespace detail {
// A scalar Resource tensor carrying `object` of type `type` into a graph as an
// argument (a Dataset fed to a kiln::function), for host functions to read
// back with object_in_handle. The graph passes it through untouched.
Tensor make_object_handle(std::shared_ptr<const void> object, const std::type_info& type);
// The object a make_object_handle tensor carries; InvalidArgument when the
// tensor carries no object of `type`.
std::shared_ptr<const void> object_in_handle(const Tensor& handle, const std::type_info& type);
}  // namespace detail

}  // namespace kiln
