#pragma once
// The WAV files tf.audio reads and writes (TF's wav_io): RIFF/WAVE with the
// "fmt " chunk first, 16-bit little-endian PCM, any number of channels, other
// chunks skipped. Shared by the DecodeWav/EncodeWav ops (audio_ops.cpp) and
// the fuzz target of the parser (tests/fuzz/fuzz_wav.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ops {

struct WavAudio {
  std::vector<float> samples;  // frames * channels, interleaved, each int16 / 32768
  int64_t frames = 0;
  int64_t channels = 0;
  uint32_t sample_rate = 0;
};

// Parses `bytes`; a file TF would refuse throws InvalidArgument with TF's
// message. Never reads past `bytes`, and allocates only for samples present.
WavAudio parse_wav(std::string_view bytes);

// A 44-byte header and the samples rounded to int16 (clamped to [-1, 1)).
// `frames` > 0, 0 < `channels` < 2^16, 0 < `sample_rate` < 2^32, as TF.
std::string write_wav(const float* samples, int64_t frames, int64_t channels, int64_t sample_rate);

}  // namespace kiln::ops
