// gzip-compressed IDX files and load_mnist, on small files made here (no
// network, no real MNIST).
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "test_util.h"

namespace kiln {
namespace {

using Bytes = std::vector<unsigned char>;
using testing::expect_error;
using testing::expect_tensor;

// One gzip member holding `plain`.
Bytes gzip(const Bytes& plain) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&z, static_cast<uLong>(plain.size())) + 32);
  z.next_in = const_cast<unsigned char*>(plain.data());
  z.avail_in = static_cast<uInt>(plain.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Bytes concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

class MnistData : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kiln_mnist_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_bytes(const std::string& name, const Bytes& bytes) const {
    std::ofstream(path(name), std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  Bytes read_bytes(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
  }
  // `tensor` as an IDX file, gzip-compressed, named `name`.
  void write_idx_gz(const std::string& name, const Tensor& tensor) const {
    data::write_idx(path(name + ".plain"), tensor);
    write_bytes(name, gzip(read_bytes(name + ".plain")));
    std::filesystem::remove(path(name + ".plain"));
  }
  std::filesystem::path dir_;
};

// An MNIST-style labels file: magic 0x00000801, 3 items 5 0 4.
const Bytes kLabels = {0, 0, 8, 1, 0, 0, 0, 3, 5, 0, 4};

TEST_F(MnistData, GzipRoundTrips) {
  write_idx_gz("u8.gz", constant(std::vector<uint8_t>{0, 1, 255, 7, 8, 9}, Shape{2, 3}));
  expect_tensor<uint8_t>(data::read_idx(path("u8.gz")), {2, 3}, {0, 1, 255, 7, 8, 9});
  write_idx_gz("i32.gz", constant({-1, 2, -70000}));
  expect_tensor<int32_t>(data::read_idx(path("i32.gz")), {3}, {-1, 2, -70000});
  write_idx_gz("f32.gz", constant({{1.5f}, {-2.25f}}));
  expect_tensor<float>(data::read_idx(path("f32.gz")), {2, 1}, {1.5f, -2.25f});
  write_idx_gz("empty.gz", zeros({0, 4}, DType::UInt8));
  expect_tensor<uint8_t>(data::read_idx(path("empty.gz")), {0, 4}, {});
  // Detected by the magic bytes, not the name.
  write_bytes("labels_no_suffix", gzip(kLabels));
  expect_tensor<uint8_t>(data::read_idx(path("labels_no_suffix")), {3}, {5, 0, 4});
}

TEST_F(MnistData, GzipLargerThanOneReadStep) {
  // 3 MiB of a pattern: several 1 MiB growth steps and many 64 KiB inputs.
  const int64_t n = 3 << 20;
  std::vector<uint8_t> values(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = static_cast<uint8_t>((i * 7) ^ (i >> 11));
  write_idx_gz("big.gz", constant(values, Shape{n / 1024, 1024}));
  Tensor got = data::read_idx(path("big.gz"));
  ASSERT_EQ(got.shape(), (Shape{n / 1024, 1024}));
  EXPECT_EQ(got.to_vector<uint8_t>(), values);
}

TEST_F(MnistData, GzipOfSeveralMembersIsOneStream) {
  // As `cat a.gz b.gz`: gzip -d gives the concatenation.
  Bytes head(kLabels.begin(), kLabels.begin() + 6), tail(kLabels.begin() + 6, kLabels.end());
  write_bytes("members", concat(gzip(head), gzip(tail)));
  expect_tensor<uint8_t>(data::read_idx(path("members")), {3}, {5, 0, 4});
}

TEST_F(MnistData, RejectsTruncatedGzip) {
  Bytes gz = gzip(kLabels);
  // Cut in the gzip header, in the deflate data, and in the 8-byte trailer.
  for (std::size_t keep : {std::size_t{2}, std::size_t{5}, gz.size() / 2, gz.size() - 4, gz.size() - 1}) {
    SCOPED_TRACE(keep);
    write_bytes("cut.gz", Bytes(gz.begin(), gz.begin() + static_cast<std::ptrdiff_t>(keep)));
    expect_error<InvalidArgument>([&] { data::read_idx(path("cut.gz")); },
                                  {"read_idx", "cut.gz", "not a valid gzip file", "truncated"});
  }
}

TEST_F(MnistData, RejectsCorruptGzip) {
  Bytes gz = gzip(kLabels);
  Bytes bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 0x01;  // the trailer's CRC-32 of the data
  write_bytes("crc.gz", bad_crc);
  expect_error<InvalidArgument>([&] { data::read_idx(path("crc.gz")); },
                                {"crc.gz", "corrupt gzip data", "incorrect data check"});
  Bytes bad_size = gz;
  bad_size[bad_size.size() - 4] ^= 0x01;  // the trailer's length of the data
  write_bytes("size.gz", bad_size);
  expect_error<InvalidArgument>([&] { data::read_idx(path("size.gz")); },
                                {"size.gz", "corrupt gzip data", "incorrect length check"});
  Bytes bad_block = gz;
  bad_block[10] = 0xFF;  // the first deflate block header: block type 3 does not exist
  write_bytes("block.gz", bad_block);
  expect_error<InvalidArgument>([&] { data::read_idx(path("block.gz")); },
                                {"block.gz", "corrupt gzip data", "invalid block type"});
  Bytes bad_method = gz;
  bad_method[2] = 7;  // only method 8 (deflate) exists
  write_bytes("method.gz", bad_method);
  expect_error<InvalidArgument>([&] { data::read_idx(path("method.gz")); },
                                {"method.gz", "corrupt gzip data", "unknown compression method"});
  write_bytes("garbage.gz", concat(gz, {'x', 'y', 'z'}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("garbage.gz")); },
                                {"garbage.gz", "corrupt gzip data"});
}

TEST_F(MnistData, RejectsIdxThatDisagreesWithItsGzipPayload) {
  write_bytes("short.gz", gzip({0, 0}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("short.gz")); },
                                {"short.gz", "decompressed data has 2 bytes", "magic"});
  write_bytes("header.gz", gzip({0, 0, 8, 3, 0, 0, 0, 1}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("header.gz")); },
                                {"header.gz", "truncated header", "needs 16", "decompressed data has 8"});
  write_bytes("trunc.gz", gzip({0, 0, 8, 1, 0, 0, 0, 5, 1, 2}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("trunc.gz")); },
                                {"trunc.gz", "(5)", "need 5 bytes", "decompressed data has 2", "truncated"});
  write_bytes("trailing.gz", gzip({0, 0, 8, 1, 0, 0, 0, 1, 1, 2}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("trailing.gz")); },
                                {"trailing.gz", "need 1 bytes", "trailing bytes"});
  expect_error<InvalidArgument>([&] { data::read_idx(dir_.string()); }, {"is a directory"});
  write_bytes("type.gz", gzip({0, 0, 0x0A, 1, 0, 0, 0, 1, 0}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("type.gz")); }, {"element type byte 10"});
  // Dims whose product overflows int64 must not wrap.
  write_bytes("overflow.gz", gzip({0, 0, 0x0E, 4, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                   0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 1, 2}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("overflow.gz")); },
                                {"overflow.gz", "4294967295", "more than 9223372036854775807"});
  // A few compressed bytes claiming 2^48 bytes: the reader allocates as
  // data arrives, so this fails as truncated instead of allocating 256 TiB.
  write_bytes("hostile.gz", gzip({0, 0, 8, 3, 0, 0, 0xFF, 0xFF, 0, 0, 0xFF, 0xFF, 0, 1, 0, 0, 1, 2, 3}));
  expect_error<InvalidArgument>([&] { data::read_idx(path("hostile.gz")); },
                                {"hostile.gz", "need 281466386841600 bytes", "decompressed data has 3",
                                 "truncated"});
}

// ---- load_mnist ---------------------------------------------------------------

TEST_F(MnistData, LoadsTheFourFiles) {
  // Train compressed (as distributed), test uncompressed: both are found.
  write_idx_gz("train-images-idx3-ubyte.gz",
               constant(std::vector<uint8_t>{0, 255, 51, 102, 1, 2, 3, 4, 254, 0, 0, 0}, Shape{3, 2, 2}));
  write_idx_gz("train-labels-idx1-ubyte.gz", constant(std::vector<uint8_t>{7, 0, 9}, Shape{3}));
  data::write_idx(path("t10k-images-idx3-ubyte"), constant(std::vector<uint8_t>{10, 20, 30, 40}, Shape{1, 2, 2}));
  data::write_idx(path("t10k-labels-idx1-ubyte"), constant(std::vector<uint8_t>{3}, Shape{1}));
  data::Mnist m = data::load_mnist(dir_.string());
  expect_tensor<float>(m.train_images, {3, 2, 2, 1},
                       {0.f, 1.f, 51 / 255.f, 102 / 255.f, 1 / 255.f, 2 / 255.f, 3 / 255.f, 4 / 255.f,
                        254 / 255.f, 0.f, 0.f, 0.f});
  expect_tensor<int32_t>(m.train_labels, {3}, {7, 0, 9});
  expect_tensor<float>(m.test_images, {1, 2, 2, 1}, {10 / 255.f, 20 / 255.f, 30 / 255.f, 40 / 255.f});
  expect_tensor<int32_t>(m.test_labels, {1}, {3});
}

TEST_F(MnistData, MissingFilesSayHowToMakeThem) {
  expect_error<NotFound>([&] { data::load_mnist(dir_.string()); },
                         {"load_mnist", "train-images-idx3-ubyte.gz", "does not exist", "scripts/mnist_data.sh"});
  write_idx_gz("train-images-idx3-ubyte.gz", zeros({2, 2, 2}, DType::UInt8));
  write_idx_gz("train-labels-idx1-ubyte.gz", zeros({2}, DType::UInt8));
  write_idx_gz("t10k-images-idx3-ubyte.gz", zeros({1, 2, 2}, DType::UInt8));
  expect_error<NotFound>([&] { data::load_mnist(dir_.string()); },
                         {"t10k-labels-idx1-ubyte.gz", "scripts/mnist_data.sh"});
  expect_error<NotFound>([&] { data::load_mnist(path("nowhere")); },
                         {"nowhere", "train-images-idx3-ubyte.gz"});
}

TEST_F(MnistData, RejectsFilesThatAreNotMnist) {
  write_idx_gz("train-images-idx3-ubyte.gz", zeros({2, 4}, DType::UInt8));
  write_idx_gz("train-labels-idx1-ubyte.gz", zeros({2}, DType::UInt8));
  write_idx_gz("t10k-images-idx3-ubyte.gz", zeros({1, 2, 2}, DType::UInt8));
  write_idx_gz("t10k-labels-idx1-ubyte.gz", zeros({1}, DType::UInt8));
  expect_error<InvalidArgument>([&] { data::load_mnist(dir_.string()); },
                                {"train-images-idx3-ubyte.gz", "uint8 images [N, rows, cols]", "(2, 4)"});
  write_idx_gz("train-images-idx3-ubyte.gz", zeros({2, 2, 2}, DType::UInt8));
  write_idx_gz("train-labels-idx1-ubyte.gz", zeros({3}, DType::UInt8));
  expect_error<InvalidArgument>([&] { data::load_mnist(dir_.string()); },
                                {"train-labels-idx1-ubyte.gz", "3 labels for 2 images"});
  write_idx_gz("train-labels-idx1-ubyte.gz", zeros({2}, DType::Int32));
  expect_error<InvalidArgument>([&] { data::load_mnist(dir_.string()); },
                                {"train-labels-idx1-ubyte.gz", "uint8 labels", "int32"});
  write_idx_gz("train-labels-idx1-ubyte.gz", zeros({2}, DType::UInt8));
  write_idx_gz("t10k-images-idx3-ubyte.gz", zeros({1, 3, 3}, DType::UInt8));
  expect_error<InvalidArgument>([&] { data::load_mnist(dir_.string()); }, {"image sizes differ"});
  // A damaged file inside: read_idx's error, naming the file.
  write_bytes("t10k-images-idx3-ubyte.gz", Bytes{0x1f, 0x8b, 8});
  expect_error<InvalidArgument>([&] { data::load_mnist(dir_.string()); },
                                {"t10k-images-idx3-ubyte.gz", "truncated gzip"});
}

}  // namespace
}  // namespace kiln
