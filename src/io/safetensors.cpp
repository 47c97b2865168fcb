// safetensors reader and writer. Every number in the header is checked before
// it is used, so a hostile file gives an error, never an out-of-bounds read or
// a huge allocation (tensor bytes must be present in the file).
#include "io/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <nlohmann/json.hpp>

#include "core/tensor_impl.h"
#include "io/json_util.h"
#include "kiln/error.h"

namespace kiln::io {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; this build copies it as is");

namespace {

// The reference implementation's limit: a header is metadata, not data.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

struct DTypeName {
  DType dtype;
  std::string_view name;
};
// The format's names. It defines no complex type, so complex tensors are
// refused (Unimplemented) rather than stored under a name of Kiln's own.
constexpr DTypeName kNames[] = {
    {DType::Float32, "F32"}, {DType::Float64, "F64"},  {DType::Int32, "I32"},    {DType::Int64, "I64"},
    {DType::UInt8, "U8"},    {DType::Bool, "BOOL"},    {DType::Float16, "F16"},  {DType::BFloat16, "BF16"},
    {DType::Int8, "I8"},     {DType::Int16, "I16"},    {DType::UInt16, "U16"},   {DType::UInt32, "U32"},
    {DType::UInt64, "U64"}};

}  // namespace

std::string_view safetensors_dtype_name(DType dtype) {
  for (const DTypeName& d : kNames)
    if (d.dtype == dtype) return d.name;
  return {};
}

namespace {
std::optional<DType> safetensors_dtype(std::string_view name) {
  for (const DTypeName& d : kNames)
    if (d.name == name) return d.dtype;
  return std::nullopt;
}
}  // namespace

std::string safetensors_encode(const std::vector<NamedTensor>& tensors) {
  json header = json::object();
  uint64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    std::string_view dtype = safetensors_dtype_name(t.value.dtype());
    if (dtype.empty())
      throw Unimplemented(fmt::format("safetensors: tensor '{}' is {}; the format holds real numbers and bools only",
                                      t.name, dtype_name(t.value.dtype())));
    if (t.value.is_symbolic()) throw InvalidArgument(fmt::format("safetensors: tensor '{}' is symbolic", t.name));
    if (header.contains(t.name) || t.name == "__metadata__")
      throw Internal(fmt::format("safetensors: tensor name '{}' is used twice or reserved", t.name));
    uint64_t bytes = static_cast<uint64_t>(t.value.size()) * dtype_size(t.value.dtype());
    header[t.name] = {{"dtype", dtype}, {"shape", t.value.shape().to_vector()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  header["__metadata__"] = {{"format", "pt"}, {"writer", "kiln"}};
  std::string text = dump_json(header, -1, "safetensors header");
  // Data starts 8-byte aligned (the reference writer pads with spaces).
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out;
  out.reserve(8 + text.size() + offset);
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out += text;
  for (const NamedTensor& t : tensors) {
    std::size_t bytes = static_cast<std::size_t>(t.value.size()) * dtype_size(t.value.dtype());
    if (bytes) out.append(static_cast<const char*>(core::raw_data(t.value)), bytes);
  }
  return out;
}

std::vector<NamedTensor> safetensors_decode(std::string_view bytes, std::string_view what) {
  auto fail = [&](const std::string& message) -> void {
    throw InvalidArgument(fmt::format("{}: {}", what, message));
  };
  if (bytes.size() < 8) fail(fmt::format("the file has {} bytes; a safetensors file starts with an 8-byte header length", bytes.size()));
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (n > kMaxHeaderBytes) fail(fmt::format("the header length is {} bytes, more than the limit of {}", n, kMaxHeaderBytes));
  if (n > bytes.size() - 8)
    fail(fmt::format("the header length is {} bytes but only {} bytes follow it (truncated file?)", n, bytes.size() - 8));
  std::string_view header_text = bytes.substr(8, n);
  std::string_view data = bytes.substr(8 + n);
  json header = parse_json(header_text, fmt::format("{}: header", what));
  if (!header.is_object()) fail("the header is not a JSON object");

  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t begin, end;
  };
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (!it->is_object()) fail("__metadata__ is not an object");
      for (const auto& m : it->items())
        if (!m.value().is_string()) fail(fmt::format("__metadata__ entry '{}' is not a string", m.key()));
      continue;
    }
    const json& e = *it;
    std::string where = fmt::format("tensor '{}'", name);
    if (!e.is_object()) fail(where + " is not an object");
    Entry entry{name, DType::Float32, Shape{}, 0, 0};
    const json& dt = member(e, "dtype", where);
    if (!dt.is_string()) fail(where + ": dtype is not a string");
    std::optional<DType> dtype = safetensors_dtype(dt.get_ref<const std::string&>());
    if (!dtype)
      fail(fmt::format("{}: dtype '{}' is not one Kiln reads (F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL)", where,
                       dt.get_ref<const std::string&>()));
    entry.dtype = *dtype;
    entry.shape = parse_shape(member(e, "shape", where), where + ": shape", /*allow_unknown=*/false);
    const json& off = member(e, "data_offsets", where);
    if (!off.is_array() || off.size() != 2) fail(where + ": data_offsets is not a [begin, end] pair");
    entry.begin = parse_uint(off[0], where + ": data_offsets[0]");
    entry.end = parse_uint(off[1], where + ": data_offsets[1]");
    if (entry.begin > entry.end)
      fail(fmt::format("{}: data_offsets [{}, {}] end before they begin", where, entry.begin, entry.end));
    if (entry.end > data.size())
      fail(fmt::format("{}: data_offsets [{}, {}] run past the {} bytes of data (truncated file?)", where,
                       entry.begin, entry.end, data.size()));
    uint64_t count = checked_num_elements(entry.shape, where);
    uint64_t want = 0;
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dtype_size(entry.dtype)), &want) ||
        want != entry.end - entry.begin)
      fail(fmt::format("{}: {} {} needs {} bytes but data_offsets [{}, {}] hold {}", where, dtype_name(entry.dtype),
                       entry.shape.to_string(), count * dtype_size(entry.dtype), entry.begin, entry.end,
                       entry.end - entry.begin));
    entries.push_back(std::move(entry));
  }
  // The tensors must tile the data exactly: no overlap, no hole, nothing after.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const Entry* a, const Entry* b) { return a->begin != b->begin ? a->begin < b->begin : a->end < b->end; });
  uint64_t pos = 0;
  for (const Entry* e : by_offset) {
    if (e->begin != pos)
      fail(fmt::format("tensor '{}' starts at byte {} but the previous tensor ends at byte {} ({})", e->name, e->begin,
                       pos, e->begin < pos ? "they overlap" : "a hole"));
    pos = e->end;
  }
  if (pos != data.size())
    fail(fmt::format("the tensors end at byte {} of the data but the file holds {} bytes of data", pos, data.size()));

  std::vector<NamedTensor> out;
  out.reserve(entries.size());
  for (const Entry& e : entries) {
    Tensor t = core::make_tensor(e.dtype, e.shape);
    std::size_t size = e.end - e.begin;
    if (size) std::memcpy(core::raw_data(t), data.data() + e.begin, size);
    if (e.dtype == DType::Bool) {
      // A bool byte other than 0 or 1 is undefined behaviour once read as bool.
      const auto* b = reinterpret_cast<const unsigned char*>(data.data() + e.begin);
      for (std::size_t i = 0; i < size; ++i)
        if (b[i] > 1) fail(fmt::format("tensor '{}': bool element {} is byte {}, not 0 or 1", e.name, i, b[i]));
    }
    out.push_back({e.name, std::move(t)});
  }
  return out;
}

}  // namespace kiln::io
