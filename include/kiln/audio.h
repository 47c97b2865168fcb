#pragma once
// tf.audio: WAV files (16-bit PCM, as TF reads and writes them) to and from
// float32 samples in [-1, 1). A file TF refuses is InvalidArgument.
#include <cstdint>

#include "kiln/tensor.h"

namespace kiln::audio {

struct DecodedWav {
  Tensor audio;        // float32 [samples, channels]
  Tensor sample_rate;  // int32 scalar, from the header
};

// `contents`: a string scalar holding a WAV file. desired_channels -1 keeps the
// file's channels; more channels than the file has repeat its last one, fewer
// keep the first ones. desired_samples -1 keeps the file's length; a longer
// length pads with zeros, a shorter one cuts.
DecodedWav decode_wav(const Tensor& contents, int64_t desired_channels = -1, int64_t desired_samples = -1,
                      SourceLocation loc = SourceLocation::current());

// The WAV file (a string scalar) of float32 `audio` [frames, channels], each
// sample rounded to int16 after scaling by 32768 and clamped;
// `sample_rate`: an int32 scalar.
Tensor encode_wav(const Tensor& audio, const Operand& sample_rate, SourceLocation loc = SourceLocation::current());

}  // namespace kiln::audio
