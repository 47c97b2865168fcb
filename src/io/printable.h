#pragma once
// io::printable is core::printable (core/printable.h): the ONNX importer,
// below io, escapes its messages with it too.
#include "core/printable.h"

namespace kiln::io {
using core::printable;
}  // namespace kiln::io
