// tf.audio's engine ops (include/kiln/audio.h), tf.bitwise's
// (include/kiln/bitwise.h) and ReadFile (include/kiln/file_io.h); names, defaults and argument checks are
// python/kiln/audio.py's and python/kiln/bitwise.py's.
#include "bindings.h"
#include "kiln/audio.h"
#include "kiln/bitwise.h"
#include "kiln/file_io.h"

namespace kiln::python {

namespace {

using BinaryOp = Tensor (*)(const Operand&, const Operand&, SourceLocation);

// x and y are tensors of one dtype already (the Python side converts them).
template <BinaryOp fn> void def_bitwise(py::module_& m, const char* name) {
  m.def(name, [](py::handle x, py::handle y) {
    SourceLocation loc = user_location();
    return fn(Operand(to_tensor(x), loc), Operand(to_tensor(y), loc), loc);
  });
}

}  // namespace

void bind_audio(py::module_& m) {
  m.def("decode_wav", [](py::handle contents, int64_t desired_channels, int64_t desired_samples) {
    audio::DecodedWav d = audio::decode_wav(to_tensor(contents), desired_channels, desired_samples, user_location());
    return py::make_tuple(std::move(d.audio), std::move(d.sample_rate));
  });
  m.def("encode_wav", [](py::handle audio, py::handle sample_rate) {
    SourceLocation loc = user_location();
    return audio::encode_wav(to_tensor(audio), Operand(to_tensor(sample_rate), loc), loc);
  });
  m.def("read_file", [](py::handle filename) { return kiln::read_file(to_tensor(filename), user_location()); });
  def_bitwise<bitwise::bitwise_and>(m, "bitwise_and");
  def_bitwise<bitwise::bitwise_or>(m, "bitwise_or");
  def_bitwise<bitwise::bitwise_xor>(m, "bitwise_xor");
  def_bitwise<bitwise::left_shift>(m, "left_shift");
  def_bitwise<bitwise::right_shift>(m, "right_shift");
  m.def("invert", [](py::handle x) { return bitwise::invert(to_tensor(x), user_location()); });
}

}  // namespace kiln::python
