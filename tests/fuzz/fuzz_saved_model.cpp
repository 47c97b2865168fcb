// libFuzzer target of the saved-model loader and of what a model runs: any
// input must load and run its signatures on small inputs, or throw a
// kiln::Error; anything else (a crash, a sanitizer report, another exception
// escaping) is a bug. Built with -DKILN_FUZZ=ON by scripts/fuzz_loader.sh;
// seeds in tests/fuzz_corpus/saved_model.
#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "fuzz_run.h"
#include "io/saved_model_format.h"
#include "kiln/error.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static kiln::fuzz::FuzzLimits limits;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto [document, weights] = kiln::fuzz::decode_model(std::string_view(reinterpret_cast<const char*>(data), size));
  try {
    kiln::saved_model::Loaded model = kiln::io::load_from_bytes(document, weights, "fuzz");
    kiln::fuzz::run_signatures(model);
  } catch (const kiln::Error&) {
  }
  return 0;
}
