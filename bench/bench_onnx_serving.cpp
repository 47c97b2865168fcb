// Serving the seeds' MNIST CNN: Kiln's loaded saved model, timed here, and
// the same model exported to ONNX for onnxruntime, timed by
// bench/onnx_serving.js on the same inputs in the same run
// (bench/onnx_serving.sh prints both and their ratios).
//   bench_onnx_serving DIR   writes DIR/mnist.onnx, DIR/images_b{1,256}.bin, DIR/kiln.json
//   bench_onnx_serving DIR --profile   prints where 200 batch-1 calls go
//     (kiln::profiler; KILN_PROFILER_CLOCK=cpu for CPU time)
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string_view>

#include <fmt/format.h>

#include "core/tensor_impl.h"
#include "kiln/kiln.h"
#include "kiln/onnx.h"
#include "mnist_cnn.h"

namespace fs = std::filesystem;
using namespace kiln;

namespace {

// Milliseconds per call over `runs` calls after `warmup` calls: the minimum
// (the figure a loaded machine disturbs least), median and 90th percentile.
struct CallTimes {
  double min, median, p90;
};
CallTimes time_calls(const std::function<void()>& call, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) call();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2], ms[ms.size() * 9 / 10]};
}

}  // namespace

int main(int argc, char** argv) {
  const bool profile = argc == 3 && std::string_view(argv[2]) == "--profile";
  if (argc != 2 && !profile) {
    std::cerr << "usage: bench_onnx_serving DIR [--profile]\n";
    return 2;
  }
  fs::path dir = argv[1];
  fs::create_directories(dir);
  nn::Sequential net("cnn");
  bench::add_mnist_cnn(net);
  auto serve = kiln::function([&](const Tensor& x) { return net(x); },
                              {.input_signature = std::vector<TensorSpec>{TensorSpec({None, 28, 28, 1})}});
  saved_model::save(net, (dir / "saved").string(), {{"serving_default", {serve, {"images"}}}});
  saved_model::Loaded loaded = saved_model::load((dir / "saved").string());
  const saved_model::LoadedSignature& sig = loaded.signature("serving_default");
  onnx::export_(sig, (dir / "mnist.onnx").string());
  if (profile) {
    Tensor image = random::uniform({1, 28, 28, 1}, 0.f, 1.f, DType::Float32, 11);
    for (int i = 0; i < 20; ++i) sig({{"images", image}});
    profiler::Session session;
    for (int i = 0; i < 200; ++i) sig({{"images", image}});
    std::cout << session.stop().table();
    return 0;
  }

  std::ofstream json(dir / "kiln.json");
  json << "{";
  for (int64_t batch : {1, 256}) {
    Tensor images = random::uniform({batch, 28, 28, 1}, 0.f, 1.f, DType::Float32, 11);
    std::ofstream(dir / fmt::format("images_b{}.bin", batch), std::ios::binary)
        .write(static_cast<const char*>(core::raw_data(images)), images.size() * 4);
    Tensor probs;
    CallTimes t = time_calls([&] { probs = sig({{"images", images}}).at("output_0"); }, batch == 1 ? 50 : 3,
                                    batch == 1 ? 500 : 30);
    std::ofstream(dir / fmt::format("probs_b{}.bin", batch), std::ios::binary)
        .write(static_cast<const char*>(core::raw_data(probs)), probs.size() * 4);
    json << fmt::format("{}\"b{}\": {{\"min_ms\": {:.4f}, \"median_ms\": {:.4f}, \"p90_ms\": {:.4f}}}",
                        batch == 1 ? "" : ", ", batch, t.min, t.median, t.p90);
  }
  json << "}\n";
  return 0;
}
