// libFuzzer target of the ONNX importer and of what an imported model runs:
// any bytes must import and run on small inputs, or throw a kiln::Error.
// Built with -DKILN_FUZZ=ON (and ONNX) by `scripts/fuzz_loader.sh SECONDS
// fuzz_onnx`; seeds in tests/fuzz_corpus/onnx (tests/onnx/onnx_corpus_test.cpp).
// CI runs it for a few seconds without libFuzzer (standalone_driver.cpp).
#include <cstddef>
#include <cstdint>

#include "fuzz_run.h"
#include "kiln/error.h"
#include "kiln/onnx.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static kiln::fuzz::FuzzLimits limits;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    kiln::fuzz::run_signature(
        kiln::onnx::import_model_from_string(std::string(reinterpret_cast<const char*>(data), size), "fuzz"));
  } catch (const kiln::Error&) {
  }
  return 0;
}
