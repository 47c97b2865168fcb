#pragma once
// kiln-cli (tools/kiln_cli.cpp is only its main): behind a function so tests
// drive it with argument lists and read what it prints.
#include <iosfwd>
#include <string>
#include <vector>

#include "kiln/dtype.h"

namespace kiln::io {

// args excludes the program name. Returns the exit status: 0 on success, 1
// on an error (printed to `err`), 2 on a usage error.
int kiln_cli_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// TensorFlow's DataType enum names ("DT_FLOAT"), as saved_model_cli and TF
// Serving's model metadata print them.
std::string tf_dtype(DType d);

}  // namespace kiln::io
