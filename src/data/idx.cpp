// The IDX file format (MNIST's): bytes 0-1 zero, byte 2 the element type,
// byte 3 the rank, then one big-endian uint32 per dim, then the values,
// big-endian, row-major.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

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
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw NotFound("read_idx: cannot open " + path);
  std::streamoff end = in.tellg();
  if (end < 0) bad(path, "cannot determine its size");
  int64_t file_size = static_cast<int64_t>(end);
  in.seekg(0);
  if (file_size < 4) bad(path, "it has " + std::to_string(file_size) + " bytes, fewer than the 4-byte magic number");
  unsigned char magic[4];
  in.read(reinterpret_cast<char*>(magic), 4);
  if (!in) bad(path, "cannot read the magic number");
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
  int64_t header = 4 + 4 * int64_t{rank};
  if (file_size < header)
    bad(path, "truncated header: rank " + std::to_string(rank) + " needs " + std::to_string(header) +
                  " bytes, the file has " + std::to_string(file_size));
  unsigned char dim_bytes[4 * kMaxRank];
  in.read(reinterpret_cast<char*>(dim_bytes), 4 * rank);
  if (!in) bad(path, "cannot read the dims");
  std::vector<int64_t> dims(static_cast<std::size_t>(rank));
  // The payload must match the file's length exactly; checking the product
  // against it as we go keeps hostile dims from overflowing or allocating.
  int64_t payload = file_size - header;
  int64_t count = 1;
  std::string dims_text;
  for (int i = 0; i < rank; ++i) {
    dims[static_cast<std::size_t>(i)] = be32(dim_bytes + 4 * i);
    dims_text += (i ? ", " : "") + std::to_string(dims[static_cast<std::size_t>(i)]);
  }
  bool too_big = false;
  for (int64_t d : dims) {
    if (d != 0 && count > payload / elem_size / d) too_big = true;
    count = too_big ? count : count * d;
  }
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) count = 0, too_big = false;
  if (too_big || count * elem_size != payload)
    bad(path, "dims (" + dims_text + ") of " + std::to_string(elem_size) + "-byte values need " +
                  (too_big ? std::string("more than ") + std::to_string(payload)
                           : std::to_string(count * elem_size)) +
                  " bytes of data, the file has " + std::to_string(payload) +
                  (too_big || count * elem_size > payload ? " (truncated?)" : " (trailing bytes)"));
  std::vector<unsigned char> data(static_cast<std::size_t>(payload));
  in.read(reinterpret_cast<char*>(data.data()), payload);
  if (!in) bad(path, "cannot read " + std::to_string(payload) + " bytes of data");
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
