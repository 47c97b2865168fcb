#pragma once
// The bytes of a data file, read front to back: as they are, or decompressed
// when the file is gzip (it starts with 1f 8b), so that readers take
// "train-images-idx3-ubyte" and "train-images-idx3-ubyte.gz" alike.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kiln::data {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to `n` bytes into `dst`; fewer only at the end of the data.
  // Damaged compressed data is an InvalidArgument naming the file.
  virtual std::size_t read(unsigned char* dst, std::size_t n) = 0;
  // The bytes left when known without reading them (a plain file); nullopt
  // for gzip, whose true size shows only by decompressing.
  virtual std::optional<int64_t> remaining() const = 0;
  virtual bool gzipped() const = 0;
};

// Opens `path` for reading; `who` prefixes error messages (e.g. "read_idx").
// A file that cannot be opened is NotFound.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path, const std::string& who);

}  // namespace kiln::data
