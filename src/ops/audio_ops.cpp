// tf.audio: DecodeWav and EncodeWav, over the WAV reader and writer of
// wav_format.cpp. Both are pure and not differentiable, as TF's. A traced
// DecodeWav has unknown dims where desired_samples/desired_channels are -1
// (the file says them when it runs).
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "kiln/audio.h"
#include "ops/creation.h"
#include "ops/wav_format.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

schema::Attrs decode_attrs(int64_t channels, int64_t samples) {
  return schema::Attrs{{"desired_channels", channels}, {"desired_samples", samples}};
}

void decode_wav_infer(schema::InferContext& c) {
  if (c.dtype(0) != DType::String) c.fail("contents must be a string tensor, got {}", dtype_name(c.dtype(0)));
  if (c.shape(0).has_known_rank() && c.shape(0).rank() != 0)
    c.fail("contents must be scalar, got shape {}", c.shape(0).to_string());
  const int64_t channels = c.attrs().get_int("desired_channels"), samples = c.attrs().get_int("desired_samples");
  if (channels < -1) c.fail("desired_channels must be -1 (the file's) or at least 0, got {}", channels);
  if (samples < -1) c.fail("desired_samples must be -1 (the file's) or at least 0, got {}", samples);
  c.add_output(DType::Float32, Shape{samples, channels});  // -1: unknown until the file is read
  c.add_output(DType::Int32, Shape{});
}

void decode_wav_kernel(schema::KernelContext& c) {
  WavAudio wav = parse_wav(core::data_of<std::string>(c.inputs[0])[0]);
  if (wav.sample_rate > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
    throw InvalidArgument(fmt::format("sample_rate {} does not fit in int32", wav.sample_rate));
  const int64_t want_channels = c.attrs.get_int("desired_channels");
  const int64_t want_samples = c.attrs.get_int("desired_samples");
  const int64_t channels = want_channels == -1 ? wav.channels : want_channels;
  const int64_t samples = want_samples == -1 ? wav.frames : want_samples;
  c.outputs[0] = core::make_tensor(DType::Float32, Shape{samples, channels});
  float* out = core::data_of<float>(c.outputs[0]);
  // Samples past the file's are silence; channels past the file's repeat its last one.
  for (int64_t s = 0; s < samples; ++s)
    for (int64_t ch = 0; ch < channels; ++ch)
      out[s * channels + ch] =
          s < wav.frames ? wav.samples[static_cast<std::size_t>(s * wav.channels + std::min(ch, wav.channels - 1))]
                         : 0.0f;
  c.outputs[1] = core::make_tensor(DType::Int32, Shape{});
  *core::data_of<int32_t>(c.outputs[1]) = static_cast<int32_t>(wav.sample_rate);
}

// A stereo file of three frames, decoded as it is, to mono and padded, to
// three channels and cut.
std::vector<schema::OpSample> decode_wav_samples() {
  const float frames[] = {0.5f, -0.25f, 1.0f, -1.0f, 0.0f, 0.125f};
  Tensor file = constant(write_wav(frames, 3, 2, 16000));
  return {{{file}, decode_attrs(-1, -1)}, {{file}, decode_attrs(1, 5)}, {{file}, decode_attrs(3, 2)}};
}

constexpr detail::OpDef kDecodeWav{.name = "DecodeWav", .infer = decode_wav_infer, .kernel = decode_wav_kernel,
                                   .flags = schema::kSetsOwnOutputs | schema::kNotDifferentiable,
                                   .samples = decode_wav_samples};

void encode_wav_infer(schema::InferContext& c) {
  if (c.dtype(0) != DType::Float32) c.fail("audio must be float32, got {}", dtype_name(c.dtype(0)));
  if (c.shape(0).has_known_rank() && c.shape(0).rank() != 2)
    c.fail("audio must be 2-dimensional (frames x channels), got shape {}", c.shape(0).to_string());
  if (c.dtype(1) != DType::Int32) c.fail("sample_rate must be int32, got {}", dtype_name(c.dtype(1)));
  if (c.shape(1).has_known_rank() && c.shape(1).rank() != 0)
    c.fail("Input sample_rate should be a scalar tensor, got {} instead.", c.shape(1).to_string());
  c.add_output(DType::String, Shape{});
}

void encode_wav_kernel(schema::KernelContext& c) {
  const Shape& shape = c.in_shape(0);
  core::data_of<std::string>(c.outputs[0])[0] =
      write_wav(c.in<float>(0), shape[0], shape[1], *c.in<int32_t>(1));
}

std::vector<schema::OpSample> encode_wav_samples() {
  return {{{constant({{0.5f, -0.25f}, {1.0f, -1.0f}, {0.0f, 0.125f}}), constant(16000)}, {}},
          {{constant({{0.3f}, {-0.7f}, {0.99999f}, {-2.0f}}), constant(8000)}, {}}};
}

constexpr detail::OpDef kEncodeWav{.name = "EncodeWav", .infer = encode_wav_infer, .kernel = encode_wav_kernel,
                                   .flags = schema::kNotDifferentiable | schema::kShapeFromShapes,
                                   .samples = encode_wav_samples};

}  // namespace

void register_audio_ops(schema::OpRegistry& r) {
  r.add(kDecodeWav);
  r.add(kEncodeWav);
}

}  // namespace ops

namespace audio {

DecodedWav decode_wav(const Tensor& contents, int64_t desired_channels, int64_t desired_samples,
                      SourceLocation loc) {
  const Tensor in[] = {contents};
  runtime::TensorList out = runtime::dispatch(ops::kDecodeWav, in, ops::decode_attrs(desired_channels, desired_samples),
                                              loc);
  return {std::move(out[0]), std::move(out[1])};
}

Tensor encode_wav(const Tensor& audio, const Operand& sample_rate, SourceLocation loc) {
  const Tensor rate = sample_rate.is_tensor()
                          ? sample_rate.tensor()
                          : ops::scalar_to_tensor(sample_rate.scalar(), DType::Int32, "encode_wav", loc);
  const Tensor in[] = {audio, rate};
  return runtime::dispatch1(ops::kEncodeWav, in, schema::Attrs{}, loc);
}

}  // namespace audio

}  // namespace kiln
