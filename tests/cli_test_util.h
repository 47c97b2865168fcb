#pragma once
// kiln-cli driven in process, through kiln_cli_main (the kiln-cli tests).
#include <sstream>
#include <string>
#include <vector>

#include "io/cli.h"

namespace kiln::testing {

struct CliResult {
  int status;
  std::string out, err;
};

inline CliResult cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  int status = io::kiln_cli_main(args, out, err);
  return {status, out.str(), err.str()};
}

}  // namespace kiln::testing
