// ReadFile (tf.io.read_file): a file's bytes as a string scalar, so a graph
// that reads files by name (a dataset map, an exported module taking a path)
// runs and saves without a host callback. Stateful: the file may change
// between runs, and a folded constant would freeze its bytes into the graph.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "kiln/file_io.h"
#include "ops/creation.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

void read_file_infer(schema::InferContext& c) {
  if (c.dtype(0) != DType::String) c.fail("filename must be a string tensor, got {}", dtype_name(c.dtype(0)));
  if (c.shape(0).has_known_rank() && c.shape(0).rank() != 0)
    c.fail("Input filename tensor must be scalar, but had shape: {}", c.shape(0).to_string());
  c.add_output(DType::String, Shape{});
}

void read_file_kernel(schema::KernelContext& c) {
  const std::string& path = core::data_of<std::string>(c.inputs[0])[0];
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw FailedPrecondition(fmt::format("{}; Is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NotFound(fmt::format("{}; No such file or directory", path));
  core::data_of<std::string>(c.outputs[0])[0].assign(std::istreambuf_iterator<char>(in), {});
}

// A small file written when the samples are made, read back.
std::vector<schema::OpSample> read_file_samples() {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "kiln_read_file_sample.bin";
  { std::ofstream(path, std::ios::binary) << std::string("bytes\0and more", 14); }
  return {{{constant(path.string())}, {}, false, {constant(std::string("bytes\0and more", 14))}}};
}

constexpr detail::OpDef kReadFile{.name = "ReadFile", .infer = read_file_infer, .kernel = read_file_kernel,
                                  .flags = schema::kStateful | schema::kNotDifferentiable,
                                  .samples = read_file_samples};

}  // namespace

void register_file_ops(schema::OpRegistry& r) { r.add(kReadFile); }

}  // namespace ops

Tensor read_file(const Tensor& filename, SourceLocation loc) {
  const Tensor in[] = {filename};
  return runtime::dispatch1(ops::kReadFile, in, schema::Attrs{}, loc);
}

}  // namespace kiln
