// tf.signal's engine ops, the FFTs (include/kiln/fft.h); names, defaults and the
// compositions (frame, windows, stft, mel matrices) are python/kiln/signal/'s.
#include "bindings.h"
#include "kiln/fft.h"

namespace kiln::python {

namespace {

using ComplexFft = Tensor (*)(const Tensor&, SourceLocation);
using RealFft = Tensor (*)(const Tensor&, std::vector<int64_t>, SourceLocation);

template <ComplexFft fn> void def_complex_fft(py::module_& m, const char* name) {
  m.def(name, [](py::handle x) { return fn(to_tensor(x), user_location()); });
}
// fft_length: a list of ints, or None for the input's static lengths.
template <RealFft fn> void def_real_fft(py::module_& m, const char* name) {
  m.def(name, [](py::handle x, std::vector<int64_t> fft_length) {
    return fn(to_tensor(x), std::move(fft_length), user_location());
  });
}

}  // namespace

void bind_signal(py::module_& m) {
  def_complex_fft<kiln::fft>(m, "fft");
  def_complex_fft<kiln::ifft>(m, "ifft");
  def_complex_fft<kiln::fft2d>(m, "fft2d");
  def_complex_fft<kiln::ifft2d>(m, "ifft2d");
  def_complex_fft<kiln::fft3d>(m, "fft3d");
  def_complex_fft<kiln::ifft3d>(m, "ifft3d");
  def_real_fft<kiln::rfft>(m, "rfft");
  def_real_fft<kiln::irfft>(m, "irfft");
  def_real_fft<kiln::rfft2d>(m, "rfft2d");
  def_real_fft<kiln::irfft2d>(m, "irfft2d");
  def_real_fft<kiln::rfft3d>(m, "rfft3d");
  def_real_fft<kiln::irfft3d>(m, "irfft3d");
}

}  // namespace kiln::python
