// kiln.onnx's engine side: kiln::onnx::export_ and import_model.
#include "bindings.h"

#include "kiln/onnx.h"

namespace kiln::python {

void bind_onnx(py::module_& m) {
  m.def("onnx_export",
        [](const ConcreteFunction& f, const std::string& path, std::vector<std::string> input_names) {
          py::gil_scoped_release nogil;
          onnx::export_(f, path, {.input_names = std::move(input_names)});
        });
  m.def("onnx_export_signature", [](const saved_model::LoadedSignature& s, const std::string& path) {
    py::gil_scoped_release nogil;
    onnx::export_(s, path);
  });
  m.def("onnx_import", [](const std::string& path) {
    py::gil_scoped_release nogil;
    return onnx::import_model(path);
  });
}

}  // namespace kiln::python
