// The IDX file format (MNIST's): bytes 0-1 zero, byte 2 the element type,
// byte 3 the rank, then one big-endian uint32 per dim, then the values,
// big-endian, row-major. Files may be gzip-compressed, as MNIST is shipped.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "data/byte_source.h"
#include "kiln/data.h"
#include "kiln/dtype.h"
#include "kiln/error.h"

namespace kiln::data {
namespace {

constexpr int kMaxRank = 8;  // Shape's inline capacity

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw InvalidArgument("read_idx: " + path + " is not a valid IDX file: " + what);
}

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

template <class Out, class Wire, int Size>
Tensor decode(const unsigned char* p, int64_t count, const Shape& shape) {
  std::vector<Out> values(static_cast<std::size_t>(count));
  for (int64_t i = 0; i < count; ++i, p += Size) {
    uint64_t bits = 0;
    for (int b = 0; b < Size; ++b) bits = (bits << 8) | p[b];
    Wire w;
    if constexpr (Size == 1) {
      uint8_t u = static_cast<uint8_t>(bits);
      std::memcpy(&w, &u, 1);
    } else if constexpr (Size == 2) {
      uint16_t u = static_cast<uint16_t>(bits);
      std::memcpy(&w, &u, 2);
    } else if constexpr (Size == 4) {
      uint32_t u = static_cast<uint32_t>(bits);
      std::memcpy(&w, &u, 4);
    } else {
      std::memcpy(&w, &bits, 8);
    }
    values[static_cast<std::size_t>(i)] = static_cast<Out>(w);
  }
  return constant(values, shape);
}

}  // namespace

Tensor read_idx(const std::string& path) {
  std::unique_ptr<ByteSource> in = open_byte_source(path, "read_idx");
  // What "has" the bytes in messages: the file, or what its gzip stream decompresses to.
  const std::string holder = in->gzipped() ? "the decompressed data" : "the file";
  unsigned char magic[4];
  std::size_t got = in->read(magic, 4);
  if (got < 4)
    bad(path, holder + " has " + std::to_string(got) + " bytes, fewer than the 4-byte magic number");
  if (magic[0] != 0 || magic[1] != 0)
    bad(path, "the magic number must start with two zero bytes, got " + std::to_string(magic[0]) + " " +
                  std::to_string(magic[1]));
  int elem_size;
  switch (magic[2]) {
    case 0x08: case 0x09: elem_size = 1; break;
    case 0x0B: elem_size = 2; break;
    case 0x0C: case 0x0D: elem_size = 4; break;
    case 0x0E: elem_size = 8; break;
    default:
      bad(path, "unknown element type byte " + std::to_string(magic[2]) +
                    " (expected 8, 9, 11, 12, 13 or 14)");
  }
  int rank = magic[3];
  if (rank > kMaxRank)
    bad(path, "rank " + std::to_string(rank) + " exceeds Kiln's maximum of " + std::to_string(kMaxRank));
  unsigned char dim_bytes[4 * kMaxRank];
  got = in->read(dim_bytes, static_cast<std::size_t>(4 * rank));
  if (got < static_cast<std::size_t>(4 * rank))
    bad(path, "truncated header: rank " + std::to_string(rank) + " needs " + std::to_string(4 + 4 * rank) +
                  " bytes, " + holder + " has " + std::to_string(4 + got));
  std::vector<int64_t> dims(static_cast<std::size_t>(rank));
  std::string dims_text;
  for (int i = 0; i < rank; ++i) {
    dims[static_cast<std::size_t>(i)] = be32(dim_bytes + 4 * i);
    dims_text += (i ? ", " : "") + std::to_string(dims[static_cast<std::size_t>(i)]);
  }
  const std::string need = "dims (" + dims_text + ") of " + std::to_string(elem_size) + "-byte values need ";
  // The payload must match the data's length exactly. A plain file's length
  // is known: checking the product against it as we go keeps hostile dims
  // from overflowing or allocating. A gzip stream's length is not, so the
  // product is only kept from overflowing, and the payload grows as bytes
  // actually arrive (a few bytes claiming terabytes allocate nothing).
  std::optional<int64_t> known = in->remaining();
  int64_t limit = known.value_or(std::numeric_limits<int64_t>::max());
  int64_t count = 1;
  bool too_big = false;
  for (int64_t d : dims) {
    if (d != 0 && count > limit / elem_size / d) too_big = true;
    count = too_big ? count : count * d;
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) count = 0, too_big = false;
  int64_t payload = count * elem_size;
  if (too_big)
    bad(path, need + "more than " + std::to_string(limit) + " bytes of data" +
                  (known ? ", the file has " + std::to_string(*known) + " (truncated?)" : ""));
  if (known && payload != *known)
    bad(path, need + std::to_string(payload) + " bytes of data, the file has " + std::to_string(*known) +
                  (payload > *known ? " (truncated?)" : " (trailing bytes)"));
  std::vector<unsigned char> data;
  constexpr int64_t kFirstChunk = int64_t{1} << 20;
  while (static_cast<int64_t>(data.size()) < payload) {
    auto have = static_cast<int64_t>(data.size());
    int64_t want = std::min(payload - have, known ? payload : std::max(have, kFirstChunk));
    data.resize(static_cast<std::size_t>(have + want));
    got = in->read(data.data() + have, static_cast<std::size_t>(want));
    data.resize(static_cast<std::size_t>(have) + got);
    if (static_cast<int64_t>(got) < want)
      bad(path, need + std::to_string(payload) + " bytes of data, " + holder + " has " +
                    std::to_string(data.size()) + " (truncated?)");
  }
  // Reading past the payload also makes zlib check the gzip trailer's CRC.
  unsigned char extra;
  if (in->read(&extra, 1) != 0)
    bad(path, need + std::to_string(payload) + " bytes of data, " + holder + " has more (trailing bytes)");
  Shape shape(dims);
  const unsigned char* p = data.data();
  switch (magic[2]) {
    case 0x08: return constant(data, shape);  // uint8_t is unsigned char: no conversion
    case 0x09: return decode<int32_t, int8_t, 1>(p, count, shape);
    case 0x0B: return decode<int32_t, int16_t, 2>(p, count, shape);
    case 0x0C: return decode<int32_t, int32_t, 4>(p, count, shape);
    case 0x0D: return decode<float, float, 4>(p, count, shape);
    default: return decode<double, double, 8>(p, count, shape);
  }
}

void write_idx(const std::string& path, const Tensor& tensor) {
  if (!tensor.defined() || tensor.is_symbolic())
    throw InvalidArgument("write_idx: " + path + ": the tensor must be concrete");
  unsigned char type;
  int elem_size = 4;
  switch (tensor.dtype()) {
    case DType::UInt8: type = 0x08; elem_size = 1; break;
    case DType::Int32: type = 0x0C; break;
    case DType::Float32: type = 0x0D; break;
    default:
      throw InvalidArgument("write_idx: " + path + ": dtype " + std::string(dtype_name(tensor.dtype())) +
                            " is not supported (uint8, int32 or float32)");
  }
  for (int64_t d : tensor.shape())
    if (d > 0xFFFFFFFFll)
      throw InvalidArgument("write_idx: " + path + ": dim " + std::to_string(d) + " does not fit in 32 bits");
  std::vector<unsigned char> out;
  out.reserve(static_cast<std::size_t>(4 + 4 * tensor.rank() + tensor.size() * elem_size));
  auto put32 = [&](uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<unsigned char>(v >> s));
  };
  out.insert(out.end(), {0, 0, type, static_cast<unsigned char>(tensor.rank())});
  for (int64_t d : tensor.shape()) put32(static_cast<uint32_t>(d));
  if (elem_size == 1) {
    const uint8_t* v = tensor.data<uint8_t>();
    out.insert(out.end(), v, v + tensor.size());
  } else {
    const char* base = tensor.dtype() == DType::Int32 ? reinterpret_cast<const char*>(tensor.data<int32_t>())
                                                      : reinterpret_cast<const char*>(tensor.data<float>());
    for (int64_t i = 0; i < tensor.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, base + 4 * i, 4);
      put32(bits);
    }
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw NotFound("write_idx: cannot open " + path + " for writing");
  file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  if (!file) throw InvalidArgument("write_idx: writing " + path + " failed");
}

}  // namespace kiln::data
