// kiln-cli: show / run a saved model, print or draw a function's graph.
//   kiln-cli show --dir D [--all | --signature_def NAME]
//   kiln-cli run --dir D --signature_def NAME --input a=5.0 [--input b=[1,2]]
//   kiln-cli run --onnx FILE --input a=5.0
//   kiln-cli export --dir D --signature_def NAME --onnx OUT
//   kiln-cli graph --dir D --function NAME [--dot]
//   kiln-cli board LOGDIR --out report.html
#include <iostream>

#include "io/cli.h"
#include "kiln/threading.h"

int main(int argc, char** argv) {
  kiln::config::adopt_fair_wait_policy(argc, argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  return kiln::io::kiln_cli_main(args, std::cout, std::cerr);
}
