// tf.image's engine op (resize) and its codecs: PNG through libpng's
// simplified API, JPEG through libjpeg(-turbo) with an error manager that
// unwinds by longjmp. The codecs work on bytes and NumPy arrays; kiln.image
// runs them directly when eager and as host functions inside traces, as
// tf.strings does. A damaged or hostile file is an InvalidArgument, never a
// crash: libpng and libjpeg report every error to us, and sizes are checked
// before anything is allocated.
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <png.h>

#include "bindings.h"
#include "kiln/error.h"
#include "kiln/image_ops.h"

namespace kiln::python {

namespace {

// Decoded images are at most 2^29 pixels per side and 2^31 bytes, as TF's.
constexpr int64_t kMaxSide = int64_t{1} << 29;
constexpr int64_t kMaxBytes = int64_t{1} << 31;

void check_size(int64_t h, int64_t w, int64_t channels, const char* op) {
  if (h <= 0 || w <= 0 || h > kMaxSide || w > kMaxSide || h * w * channels > kMaxBytes)
    throw InvalidArgument(std::string(op) + ": image of " + std::to_string(h) + " x " + std::to_string(w) + " x " +
                          std::to_string(channels) + " is empty or too large");
}

py::array_t<uint8_t> new_image(int64_t h, int64_t w, int64_t c) {
  return py::array_t<uint8_t>(std::vector<py::ssize_t>{h, w, c});
}

// --- PNG -------------------------------------------------------------------

py::array_t<uint8_t> decode_png(const py::bytes& contents, int channels) {
  std::string data = contents;
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data.data(), data.size()))
    throw InvalidArgument("decode_png: invalid PNG data: " + std::string(image.message));
  if (channels == 0) channels = static_cast<int>(PNG_IMAGE_SAMPLE_CHANNELS(image.format));
  static constexpr png_uint_32 kFormats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
  image.format = kFormats[channels];
  const int64_t h = image.height, w = image.width;
  try {
    check_size(h, w, channels, "decode_png");
  } catch (...) {
    png_image_free(&image);
    throw;
  }
  py::array_t<uint8_t> out = new_image(h, w, channels);
  // The background for dropped alpha: black, as TF's decoder composes.
  png_color background{0, 0, 0};
  if (!png_image_finish_read(&image, &background, out.mutable_data(), 0, nullptr)) {
    std::string message = image.message;
    png_image_free(&image);
    throw InvalidArgument("decode_png: invalid PNG data: " + message);
  }
  return out;
}

py::bytes encode_png(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& pixels) {
  const int64_t h = pixels.shape(0), w = pixels.shape(1), c = pixels.shape(2);
  static constexpr png_uint_32 kFormats[] = {0, PNG_FORMAT_GRAY, PNG_FORMAT_GA, PNG_FORMAT_RGB, PNG_FORMAT_RGBA};
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = kFormats[c];
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr))
    throw InvalidArgument("encode_png: " + std::string(image.message));
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, pixels.data(), 0, nullptr))
    throw InvalidArgument("encode_png: " + std::string(image.message));
  out.resize(size);
  return py::bytes(out);
}

// --- JPEG ------------------------------------------------------------------

struct JpegError {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_fail(j_common_ptr info) {
  auto* error = reinterpret_cast<JpegError*>(info->err);
  info->err->format_message(info, error->message);
  std::longjmp(error->jump, 1);
}
void jpeg_quiet(j_common_ptr, int) {}  // warnings (corrupt data libjpeg recovers from) are not errors

// libjpeg's error manager, reporting through `error` (its caller sets the jump).
jpeg_error_mgr* error_manager(JpegError& error) {
  jpeg_error_mgr* manager = jpeg_std_error(&error.manager);
  manager->error_exit = jpeg_fail;
  manager->emit_message = jpeg_quiet;
  return manager;
}

// Decodes into a vector first: nothing with a destructor lives across the
// setjmp, so a longjmp skips no destructor.
bool decode_jpeg_raw(const std::string& data, int channels, int ratio, bool fancy, std::vector<uint8_t>& pixels,
                     int64_t& h, int64_t& w, int& c, char* message) {
  jpeg_decompress_struct info;
  JpegError error;
  info.err = error_manager(error);
  if (setjmp(error.jump)) {
    std::strcpy(message, error.message);
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(data.data()), data.size());
  jpeg_read_header(&info, TRUE);
  c = channels == 0 ? (info.num_components == 1 ? 1 : 3) : channels;
  info.out_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  info.scale_num = 1;
  info.scale_denom = static_cast<unsigned>(ratio);
  info.do_fancy_upsampling = fancy ? TRUE : FALSE;
  info.dct_method = JDCT_ISLOW;
  jpeg_calc_output_dimensions(&info);
  h = info.output_height;
  w = info.output_width;
  if (h <= 0 || w <= 0 || h > kMaxSide || w > kMaxSide || h * w * c > kMaxBytes) {
    std::snprintf(message, JMSG_LENGTH_MAX, "image of %lld x %lld is empty or too large", static_cast<long long>(h),
                  static_cast<long long>(w));
    jpeg_destroy_decompress(&info);
    return false;
  }
  pixels.resize(static_cast<size_t>(h * w * c));
  jpeg_start_decompress(&info);
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = pixels.data() + static_cast<size_t>(info.output_scanline) * static_cast<size_t>(w * c);
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

py::array_t<uint8_t> decode_jpeg(const py::bytes& contents, int channels, int ratio, bool fancy_upscaling) {
  std::string data = contents;
  std::vector<uint8_t> pixels;
  int64_t h = 0, w = 0;
  int c = 0;
  char message[JMSG_LENGTH_MAX] = "";
  if (!decode_jpeg_raw(data, channels, ratio, fancy_upscaling, pixels, h, w, c, message))
    throw InvalidArgument("decode_jpeg: invalid JPEG data or crop window: " + std::string(message));
  py::array_t<uint8_t> out = new_image(h, w, c);
  std::memcpy(out.mutable_data(), pixels.data(), pixels.size());
  return out;
}

bool encode_jpeg_raw(const uint8_t* pixels, int64_t h, int64_t w, int c, int quality, bool progressive,
                     bool optimize, bool chroma_downsampling, int density_unit, int x_density, int y_density,
                     unsigned char*& buffer, unsigned long& size, char* message) {
  jpeg_compress_struct info;
  JpegError error;
  info.err = error_manager(error);
  if (setjmp(error.jump)) {
    std::strcpy(message, error.message);
    jpeg_destroy_compress(&info);
    return false;
  }
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(w);
  info.image_height = static_cast<JDIMENSION>(h);
  info.input_components = c;
  info.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  if (progressive) jpeg_simple_progression(&info);
  info.optimize_coding = optimize ? TRUE : FALSE;
  info.density_unit = static_cast<UINT8>(density_unit);
  info.X_density = static_cast<UINT16>(x_density);
  info.Y_density = static_cast<UINT16>(y_density);
  if (c == 3 && !chroma_downsampling) {
    info.comp_info[0].h_samp_factor = info.comp_info[0].v_samp_factor = 1;
  }
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<uint8_t*>(pixels) + static_cast<size_t>(info.next_scanline) * static_cast<size_t>(w * c);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  return true;
}

py::bytes encode_jpeg(const py::array_t<uint8_t, py::array::c_style | py::array::forcecast>& pixels, int quality,
                      bool progressive, bool optimize_size, bool chroma_downsampling, int density_unit,
                      int x_density, int y_density) {
  const int64_t h = pixels.shape(0), w = pixels.shape(1);
  const int c = static_cast<int>(pixels.shape(2));
  if (h <= 0 || w <= 0 || h > 65500 || w > 65500)
    throw InvalidArgument("encode_jpeg: image must be between 1 and 65500 pixels per side, got " + std::to_string(h) + " x " +
                          std::to_string(w));
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  char message[JMSG_LENGTH_MAX] = "";
  const bool ok = encode_jpeg_raw(pixels.data(), h, w, c, quality, progressive, optimize_size, chroma_downsampling,
                                  density_unit, x_density, y_density, buffer, size, message);
  std::string out = ok ? std::string(reinterpret_cast<char*>(buffer), size) : std::string();
  std::free(buffer);
  if (!ok) throw InvalidArgument("encode_jpeg: " + std::string(message));
  return py::bytes(out);
}

}  // namespace

void bind_image(py::module_& m) {
  m.def("resize_image", [](py::handle images, std::vector<int64_t> size, const std::string& method, bool antialias) {
    return kiln::resize_image(to_tensor(images), size, method, antialias, user_location());
  });
  m.def("decode_png", &decode_png);
  m.def("encode_png", &encode_png);
  m.def("decode_jpeg", &decode_jpeg);
  m.def("encode_jpeg", &encode_jpeg);
}

}  // namespace kiln::python
