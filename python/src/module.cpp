// The extension module kiln._C.
#include "bindings.h"

namespace kiln::python {
void bind_audio(py::module_& m);  // audio.cpp: tf.audio and tf.bitwise
}  // namespace kiln::python

PYBIND11_MODULE(_C, m) {
  using namespace kiln::python;
  m.doc() = "Kiln's engine, for the Python package `kiln` (conversions only; the API is kiln's)";
  bind_errors(m);
  bind_interrupt(m);
  bind_tensor(m);
  bind_ops(m);
  bind_linalg(m);
  bind_function(m);
  bind_control_flow(m);
  bind_autodiff(m);
  bind_data(m);
  bind_saved_model(m);
  bind_onnx(m);
  bind_distributed(m);
  bind_profiler(m);
  bind_image(m);
  bind_signal(m);
  bind_graph(m);
  bind_audio(m);
}
