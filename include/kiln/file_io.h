#pragma once
// tf.io.read_file as an op: the bytes of the file a string scalar names, read
// when the op runs (eagerly, or each time a graph holding it runs). A missing
// file is NotFound, a directory FailedPrecondition.
#include "kiln/tensor.h"

namespace kiln {

Tensor read_file(const Tensor& filename, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
