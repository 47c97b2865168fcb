#include "data/byte_source.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "kiln/error.h"

namespace kiln::data {
namespace {

class PlainFile : public ByteSource {
 public:
  PlainFile(std::ifstream in, int64_t size) : in_(std::move(in)), left_(size) {}

  std::size_t read(unsigned char* dst, std::size_t n) override {
    in_.read(reinterpret_cast<char*>(dst), static_cast<std::streamsize>(n));
    auto got = static_cast<std::size_t>(in_.gcount());
    left_ -= static_cast<int64_t>(got);
    return got;
  }
  std::optional<int64_t> remaining() const override { return left_; }
  bool gzipped() const override { return false; }

 private:
  std::ifstream in_;
  int64_t left_;
};

// Inflates one gzip member after another (as gzip -d does for `cat a.gz
// b.gz`), in fixed-size steps: memory follows the data actually decompressed,
// never a size claimed by the file.
class GzipFile : public ByteSource {
 public:
  GzipFile(std::ifstream in, std::string path, std::string who)
      : in_(std::move(in)), path_(std::move(path)), who_(std::move(who)), input_(1 << 16) {
    if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK)  // 16: expect the gzip wrapper
      throw Internal(who_ + ": zlib could not start decompressing " + path_);
  }
  ~GzipFile() override { inflateEnd(&z_); }
  GzipFile(const GzipFile&) = delete;
  GzipFile& operator=(const GzipFile&) = delete;

  std::size_t read(unsigned char* dst, std::size_t n) override {
    constexpr std::size_t kMaxStep = std::size_t{1} << 30;  // zlib counts in 32 bits
    std::size_t total = 0;
    while (total < n) {
      std::size_t step = std::min(n - total, kMaxStep);
      std::size_t got = read_step(dst + total, step);
      total += got;
      if (got < step) break;
    }
    return total;
  }
  std::optional<int64_t> remaining() const override { return std::nullopt; }
  bool gzipped() const override { return true; }

 private:
  std::size_t read_step(unsigned char* dst, std::size_t n) {
    z_.next_out = dst;
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out > 0 && !ended_) {
      if (z_.avail_in == 0 && !refill()) {
        if (!between_members_)
          fail("truncated gzip data: the file ends inside the compressed stream");
        ended_ = true;
        break;
      }
      if (between_members_) {
        inflateReset(&z_);
        between_members_ = false;
      }
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        between_members_ = true;
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        fail(std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "invalid stream") + ")");
      } else if (rc == Z_MEM_ERROR) {
        throw Internal(who_ + ": out of memory decompressing " + path_);
      }
      // Z_OK or Z_BUF_ERROR: more input or more room is needed; the loop sees which.
    }
    return n - z_.avail_out;
  }
  bool refill() {
    in_.read(reinterpret_cast<char*>(input_.data()), static_cast<std::streamsize>(input_.size()));
    z_.next_in = input_.data();
    z_.avail_in = static_cast<uInt>(in_.gcount());
    return z_.avail_in > 0;
  }
  [[noreturn]] void fail(const std::string& what) {
    throw InvalidArgument(who_ + ": " + path_ + " is not a valid gzip file: " + what);
  }

  std::ifstream in_;
  std::string path_, who_;
  std::vector<unsigned char> input_;
  z_stream z_{};
  bool between_members_ = false;  // the last member ended; another may follow
  bool ended_ = false;
};

}  // namespace

std::unique_ptr<ByteSource> open_byte_source(const std::string& path, const std::string& who) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InvalidArgument(who + ": " + path + " is a directory, not a file");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw NotFound(who + ": cannot open " + path);
  std::streamoff end = in.tellg();
  if (end < 0) throw InvalidArgument(who + ": cannot determine the size of " + path);
  in.seekg(0);
  unsigned char magic[2] = {0, 0};
  in.read(reinterpret_cast<char*>(magic), 2);
  in.clear();  // a file shorter than 2 bytes is plain (and the reader reports it)
  in.seekg(0);
  if (end >= 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    return std::make_unique<GzipFile>(std::move(in), path, who);
  return std::make_unique<PlainFile>(std::move(in), static_cast<int64_t>(end));
}

}  // namespace kiln::data
