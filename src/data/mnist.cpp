// load_mnist: the four IDX files of MNIST as float images and int32 labels.
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/data.h"
#include "kiln/dtype.h"
#include "kiln/error.h"

namespace kiln::data {
namespace {

// `dir`/`name`.gz, else `dir`/`name` uncompressed: the path to read.
std::string find_part(const std::string& dir, const std::string& name) {
  std::filesystem::path base = std::filesystem::path(dir) / name;
  std::filesystem::path gz = base;
  gz += ".gz";
  std::error_code ec;
  if (std::filesystem::is_regular_file(gz, ec)) return gz.string();
  if (std::filesystem::is_regular_file(base, ec)) return base.string();
  throw NotFound("load_mnist: " + gz.string() + " does not exist (nor " + name +
                 " uncompressed); run scripts/mnist_data.sh " + dir + " to make the MNIST files");
}

std::string describe(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + " " + t.shape().to_string();
}

// Images uint8 [N, rows, cols] -> float32 [N, rows, cols, 1] in [0, 1].
Tensor read_images(const std::string& dir, const std::string& name) {
  std::string path = find_part(dir, name);
  Tensor raw = read_idx(path);
  if (raw.dtype() != DType::UInt8 || raw.rank() != 3)
    throw InvalidArgument("load_mnist: " + path + " must hold uint8 images [N, rows, cols], it holds " +
                          describe(raw));
  const uint8_t* bytes = raw.data<uint8_t>();
  std::vector<float> pixels(static_cast<std::size_t>(raw.size()));
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>(bytes[i]) / 255.0f;
  return constant(pixels, Shape{raw.shape()[0], raw.shape()[1], raw.shape()[2], 1});
}

// Labels uint8 [count] -> int32 [count].
Tensor read_labels(const std::string& dir, const std::string& name, int64_t count) {
  std::string path = find_part(dir, name);
  Tensor raw = read_idx(path);
  if (raw.dtype() != DType::UInt8 || raw.rank() != 1)
    throw InvalidArgument("load_mnist: " + path + " must hold uint8 labels [N], it holds " + describe(raw));
  if (raw.shape()[0] != count)
    throw InvalidArgument("load_mnist: " + path + " has " + std::to_string(raw.shape()[0]) +
                          " labels for " + std::to_string(count) + " images");
  const uint8_t* bytes = raw.data<uint8_t>();
  return constant(std::vector<int32_t>(bytes, bytes + raw.size()), Shape{count});
}

}  // namespace

Mnist load_mnist(const std::string& dir) {
  Mnist m;
  m.train_images = read_images(dir, "train-images-idx3-ubyte");
  m.train_labels = read_labels(dir, "train-labels-idx1-ubyte", m.train_images.shape()[0]);
  m.test_images = read_images(dir, "t10k-images-idx3-ubyte");
  m.test_labels = read_labels(dir, "t10k-labels-idx1-ubyte", m.test_images.shape()[0]);
  if (m.train_images.shape()[1] != m.test_images.shape()[1] ||
      m.train_images.shape()[2] != m.test_images.shape()[2])
    throw InvalidArgument("load_mnist: train images are " + m.train_images.shape().to_string() +
                          ", test images " + m.test_images.shape().to_string() + ": the image sizes differ");
  return m;
}

}  // namespace kiln::data
