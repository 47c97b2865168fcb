// libFuzzer target of the WAV reader behind tf.audio.decode_wav
// (src/ops/wav_format.cpp) and of the DecodeWav op around it: any input must
// decode or throw a kiln::Error; a crash, a sanitizer report, another
// exception, or a decoded file that breaks the reader's promises (as many
// samples as frames times channels, each in [-1, 1)) is a bug. Built with
// -DKILN_FUZZ=ON by scripts/fuzz_loader.sh, and run for a few seconds by
// ctest without libFuzzer (Fuzz.WavShortRun); seeds in tests/fuzz_corpus/wav.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kiln/audio.h"
#include "kiln/error.h"
#include "ops/wav_format.h"

namespace {

void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz_wav: %s\n", what);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    kiln::ops::WavAudio wav = kiln::ops::parse_wav(bytes);
    check(wav.channels >= 1 && wav.frames >= 0, "channels or frames out of range");
    check(wav.samples.size() == static_cast<std::size_t>(wav.frames * wav.channels), "sample count");
    for (float v : wav.samples) check(v >= -1.0f && v < 1.0f, "a sample outside [-1, 1)");
    // The op: the file's shape, and a shape that pads, repeats and cuts.
    kiln::Tensor contents = kiln::constant(bytes);
    kiln::audio::DecodedWav all = kiln::audio::decode_wav(contents);
    check(all.audio.shape() == kiln::Shape{wav.frames, wav.channels}, "DecodeWav's shape");
    kiln::audio::DecodedWav some = kiln::audio::decode_wav(contents, 3, 5);
    check(some.audio.shape() == kiln::Shape{5, 3}, "DecodeWav's desired shape");
  } catch (const kiln::Error&) {
  }
  return 0;
}
