// kiln::onnx in a build without ONNX (KILN_WITH_ONNX off: libprotobuf-dev or
// libonnx-dev missing): the same API, refusing with the reason.
#include "kiln/error.h"
#include "kiln/onnx.h"

namespace kiln::onnx {

namespace {
[[noreturn]] void unavailable() {
  throw Unimplemented(
      "kiln::onnx: this Kiln was built without ONNX support (KILN_WITH_ONNX is off: install libprotobuf-dev and "
      "libonnx-dev, e.g. with scripts/setup.sh, and rebuild)");
}
}  // namespace

void export_(const ConcreteFunction&, const std::string&, const ExportOptions&) { unavailable(); }
void export_(const saved_model::LoadedSignature&, const std::string&) { unavailable(); }
std::string export_to_string(const ConcreteFunction&, const ExportOptions&) { unavailable(); }
saved_model::LoadedSignature import_model(const std::string&) { unavailable(); }
saved_model::LoadedSignature import_model_from_string(const std::string&, const std::string&) { unavailable(); }

}  // namespace kiln::onnx
