// WAV parsing and writing with TF's rules and messages (tensorflow/core/lib/wav/wav_io.cc):
// every read is bounds-checked against the bytes, sizes are computed in 64 bits.
#include "ops/wav_format.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "kiln/error.h"

namespace kiln::ops {

namespace {

constexpr int kBitsPerSample = 16;
constexpr int kBytesPerSample = kBitsPerSample / 8;
constexpr std::size_t kHeaderSize = 44;  // RIFF (12) + fmt (24) + data header (8)

// Bytes from the file as message text: printable ASCII as is, others as \xNN
// (a message must stay valid UTF-8 on its way to Python).
std::string shown(std::string_view bytes) {
  std::string out;
  for (unsigned char ch : bytes) {
    if (ch >= 0x20 && ch < 0x7f) out += static_cast<char>(ch);
    else out += fmt::format("\\x{:02x}", ch);
  }
  return out;
}

// A cursor over the bytes: each read checks that the bytes are there.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool at_end() const { return offset_ >= bytes_.size(); }
  std::size_t left() const { return at_end() ? 0 : bytes_.size() - offset_; }

  void expect(std::string_view text) {
    if (left() < text.size()) throw InvalidArgument(fmt::format("Data too short when trying to read {}", text));
    std::string_view found = bytes_.substr(offset_, text.size());
    if (found != text)
      throw InvalidArgument(fmt::format("Header mismatch: Expected {} but found {}", text, shown(found)));
    offset_ += text.size();
  }
  std::string_view text(std::size_t n) {
    need(n);
    std::string_view s = bytes_.substr(offset_, n);
    offset_ += n;
    return s;
  }
  template <class T> T value() {
    need(sizeof(T));
    T v = 0;  // little-endian files on little-endian hosts (x86-64, aarch64)
    std::memcpy(&v, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return v;
  }
  void skip(uint64_t n) {
    need(n);
    offset_ += static_cast<std::size_t>(n);
  }
  const char* here() const { return bytes_.data() + offset_; }
  void need(uint64_t n) const {
    if (left() < n) throw InvalidArgument("Data too short when trying to read string");
  }

 private:
  std::string_view bytes_;
  std::size_t offset_ = 0;
};

int16_t to_int16(float v) {
  if (std::isnan(v)) return 0;  // TF leaves NaN undefined (a cast of NaN); Kiln writes silence
  float scaled = std::round(v * 32768.0f);
  return static_cast<int16_t>(std::min(std::max(scaled, -32768.0f), 32767.0f));
}

void put16(std::string& out, uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); }
void put32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

WavAudio parse_wav(std::string_view bytes) {
  Reader r(bytes);
  r.expect("RIFF");
  r.value<uint32_t>();  // the file's size: not trusted, as TF
  r.expect("WAVE");
  r.expect("fmt ");
  const uint32_t format_size = r.value<uint32_t>();
  if (format_size != 16 && format_size != 18)
    throw InvalidArgument(fmt::format("Bad format chunk size for WAV: Expected 16 or 18, but got {}", format_size));
  const uint16_t format = r.value<uint16_t>();
  if (format != 1) throw InvalidArgument(fmt::format("Bad audio format for WAV: Expected 1 (PCM), but got {}", format));
  WavAudio wav;
  const uint16_t channels = r.value<uint16_t>();
  if (channels < 1)
    throw InvalidArgument(fmt::format("Bad number of channels for WAV: Expected at least 1, but got {}", channels));
  wav.channels = channels;
  wav.sample_rate = r.value<uint32_t>();
  const uint32_t bytes_per_second = r.value<uint32_t>();
  const uint16_t bytes_per_frame = r.value<uint16_t>();  // WAV's "block align": all channels of one instant
  const uint16_t bits = r.value<uint16_t>();
  if (bits != kBitsPerSample)
    throw InvalidArgument(fmt::format("Can only read 16-bit WAV files, but received {}", bits));
  const uint64_t expected_frame = (uint64_t{bits} * channels + 7) / 8;
  if (bytes_per_frame != expected_frame)
    throw InvalidArgument(fmt::format("Bad bytes per sample in WAV header: Expected {} but got {}", expected_frame,
                                      bytes_per_frame));
  // TF compares in 32 bits: the product wraps as there.
  const uint32_t expected_rate = static_cast<uint32_t>(uint64_t{bytes_per_frame} * wav.sample_rate);
  if (bytes_per_second != expected_rate)
    throw InvalidArgument(fmt::format(
        "Bad bytes per second in WAV header: Expected {} but got {} (sample_rate={}, bytes_per_sample={})",
        expected_rate, bytes_per_second, wav.sample_rate, bytes_per_frame));
  if (format_size == 18) r.skip(2);  // the unused extension size

  bool found_data = false;
  while (!r.at_end()) {
    const std::string_view id = r.text(4);
    const uint32_t size = r.value<uint32_t>();
    if (size > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
      throw InvalidArgument(fmt::format("WAV data chunk '{}' is too large: {} bytes, but the limit is {}", shown(id), size,
                                        std::numeric_limits<int32_t>::max()));
    if (id != "data") {
      r.skip(size);
      continue;
    }
    if (found_data) throw InvalidArgument("More than one data chunk found in WAV");
    found_data = true;
    wav.frames = size / bytes_per_frame;
    const uint64_t count = static_cast<uint64_t>(wav.frames) * channels;
    r.need(count * kBytesPerSample);  // before allocating: a header cannot ask for more than the file holds
    wav.samples.resize(static_cast<std::size_t>(count));
    const char* p = r.here();
    for (uint64_t i = 0; i < count; ++i) {
      int16_t v;
      std::memcpy(&v, p + i * kBytesPerSample, sizeof v);
      wav.samples[i] = static_cast<float>(v) * (1.0f / 32768.0f);
    }
    r.skip(count * kBytesPerSample);
  }
  if (!found_data) throw InvalidArgument("No data chunk found in WAV");
  return wav;
}

std::string write_wav(const float* samples, int64_t frames, int64_t channels, int64_t sample_rate) {
  if (sample_rate <= 0 || sample_rate > int64_t{std::numeric_limits<uint32_t>::max()})
    throw InvalidArgument(fmt::format("sample_rate must be in (0, 2^32), got: {}", sample_rate));
  if (channels <= 0 || channels > int64_t{std::numeric_limits<uint16_t>::max()})
    throw InvalidArgument(fmt::format("num_channels must be in (0, 2^16), got: {}", channels));
  if (frames <= 0) throw InvalidArgument("num_frames must be positive.");
  const uint64_t count = static_cast<uint64_t>(frames) * static_cast<uint64_t>(channels);
  const uint64_t data_size = count * kBytesPerSample;
  // The frames test first: it keeps count (frames * channels) from wrapping before the size test.
  if (static_cast<uint64_t>(frames) > std::numeric_limits<uint32_t>::max() ||
      kHeaderSize + data_size > std::numeric_limits<uint32_t>::max())
    throw InvalidArgument("Provided channels and frames cannot be encoded as a WAV.");
  const uint32_t frame_bytes = static_cast<uint32_t>(channels * kBytesPerSample);
  std::string out;
  out.reserve(kHeaderSize + data_size);
  out += "RIFF";
  put32(out, static_cast<uint32_t>(kHeaderSize + data_size - 8));
  out += "WAVEfmt ";
  put32(out, 16);
  put16(out, 1);  // PCM
  put16(out, static_cast<uint16_t>(channels));
  put32(out, static_cast<uint32_t>(sample_rate));
  put32(out, static_cast<uint32_t>(sample_rate * frame_bytes));
  put16(out, static_cast<uint16_t>(frame_bytes));
  put16(out, kBitsPerSample);
  out += "data";
  put32(out, static_cast<uint32_t>(data_size));
  for (uint64_t i = 0; i < count; ++i) put16(out, static_cast<uint16_t>(to_int16(samples[i])));
  return out;
}

}  // namespace kiln::ops
