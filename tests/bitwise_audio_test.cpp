// The C++ API of tf.bitwise and tf.audio: the operators' choice between
// logic and bits, shifts at the edges of each width (TF's clamped counts),
// WAV round trips through kiln::audio, and the reader's refusals. Values
// against NumPy and Python's `wave` are python/tests/test_bitwise.py's and
// test_audio.py's; the registry tests run every op's samples.
#include <cstdint>
#include <string>

#include "core/tensor_impl.h"
#include "kiln/audio.h"
#include "kiln/bitwise.h"
#include "kiln/file_io.h"
#include "kiln/math.h"
#include "test_util.h"

namespace kiln {
namespace {

using testing::expect_error;
using testing::expect_tensor;

TEST(Bitwise, OperatorsAreBitsOnIntegersAndLogicOnBools) {
  Tensor a = constant({12, -7, 0}), b = constant({10, 3, -1});
  expect_tensor<int32_t>(a & b, Shape{3}, {8, 1, 0});
  expect_tensor<int32_t>(a | b, Shape{3}, {14, -5, -1});
  expect_tensor<int32_t>(a ^ b, Shape{3}, {6, -6, -1});
  expect_tensor<int32_t>(~a, Shape{3}, {-13, 6, -1});
  expect_tensor<int32_t>(a & 4, Shape{3}, {4, 0, 0});
  Tensor p = constant({true, true, false, false}), q = constant({true, false, true, false});
  expect_tensor<bool>(p & q, Shape{4}, {true, false, false, false});
  expect_tensor<bool>(p | q, Shape{4}, {true, true, true, false});
  expect_tensor<bool>(p ^ q, Shape{4}, {false, true, true, false});
  expect_tensor<bool>(~p, Shape{4}, {false, false, true, true});
  expect_error<InvalidArgument>([&] { (void)(constant({1.5f}) & constant({2.5f})); },
                                {"BitwiseAnd does not support dtype float32"});
}

TEST(Bitwise, ShiftCountsAreClampedAsTfsKernels) {
  Tensor x = constant({1, -8, 3, -5}, DType::Int32);
  Tensor counts = constant({40, 99, -2, 31}, DType::Int32);
  expect_tensor<int32_t>(x << counts, Shape{4}, {INT32_MIN, 0, 3, INT32_MIN});  // 40 and 99 count as 31, -2 as 0
  expect_tensor<int32_t>(x >> counts, Shape{4}, {0, -1, 3, -1});  // arithmetic: the sign fills in
  Tensor u = constant({uint8_t{129}, uint8_t{255}}, DType::UInt8);
  expect_tensor<uint8_t>(bitwise::left_shift(u, constant({uint8_t{1}, uint8_t{200}})), Shape{2}, {2, 128});
  expect_tensor<uint8_t>(bitwise::right_shift(u, 7), Shape{2}, {1, 1});
  expect_tensor<int64_t>(bitwise::invert(constant({int64_t{0}, int64_t{-1}})), Shape{2}, {-1, 0});
}

TEST(Audio, WavRoundTripAndDesiredShape) {
  Tensor samples = constant({{0.5f, -0.25f}, {-1.0f, 0.75f}, {0.0f, 0.125f}});
  Tensor file = audio::encode_wav(samples, 16000);
  ASSERT_EQ(file.dtype(), DType::String);
  audio::DecodedWav back = audio::decode_wav(file);
  expect_tensor<float>(back.audio, Shape{3, 2}, {0.5f, -0.25f, -1.0f, 0.75f, 0.0f, 0.125f});
  EXPECT_EQ(back.audio.shape(), Shape({3, 2}));
  expect_tensor<int32_t>(back.sample_rate, Shape{}, {16000});
  audio::DecodedWav mono = audio::decode_wav(file, 1, 4);
  EXPECT_EQ(mono.audio.shape(), Shape({4, 1}));
  expect_tensor<float>(mono.audio, Shape{4, 1}, {0.5f, -1.0f, 0.0f, 0.0f});
  // 1.0 is 32768 / 32768, past int16: clamped to 32767 / 32768.
  expect_tensor<float>(audio::decode_wav(audio::encode_wav(constant({{1.0f}}), 8000)).audio, Shape{1, 1}, {32767.0f / 32768});
}

TEST(Audio, ReaderRefusesWhatTfRefuses) {
  expect_error<InvalidArgument>([] { audio::decode_wav(constant(std::string("RIFX"))); },
                                {"Header mismatch: Expected RIFF but found RIFX"});
  std::string file = core::data_of<std::string>(audio::encode_wav(constant({{0.5f}}), 8000))[0];
  file[34] = 8;  // bits per sample
  expect_error<InvalidArgument>([&] { audio::decode_wav(constant(file)); },
                                {"Can only read 16-bit WAV files, but received 8"});
  expect_error<InvalidArgument>([] { audio::encode_wav(constant({{0.5f}}), 0); },
                                {"sample_rate must be in (0, 2^32), got: 0"});
  expect_error<NotFound>([] { read_file(constant(std::string("/nonexistent/kiln.wav"))); },
                         {"/nonexistent/kiln.wav; No such file or directory"});
}

}  // namespace
}  // namespace kiln
