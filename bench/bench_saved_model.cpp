// Saving and loading the seeds' MNIST CNN (3.27M parameters, 13 MB of
// float32 weights) with a traced serving signature, and one call of the
// loaded signature against the original function.
#include "bench_util.h"

#include <filesystem>
#include <unistd.h>

#include "kiln/kiln.h"
#include "mnist_cnn.h"

namespace {

struct Model {
  kiln::nn::Sequential net{"cnn"};
  kiln::Function<std::function<kiln::Tensor(const kiln::Tensor&)>> serve;
  std::string dir;
  kiln::Tensor images = kiln::random::uniform({50, 28, 28, 1}, 0.f, 1.f);

  Model()
      : serve(kiln::function(std::function<kiln::Tensor(const kiln::Tensor&)>([this](const kiln::Tensor& x) { return net(x); }),
                             {.input_signature = std::vector<kiln::TensorSpec>{kiln::TensorSpec({kiln::None, 28, 28, 1})}})),
        dir((std::filesystem::temp_directory_path() / ("kiln_bench_saved_model_" + std::to_string(::getpid()))).string()) {
    bench::add_mnist_cnn(net);
    serve(images);
  }
  ~Model() { std::filesystem::remove_all(dir); }
  void save() { kiln::saved_model::save(net, dir, {{"serving_default", {serve, {"images"}}}}); }
  int64_t parameters() const {
    int64_t n = 0;
    for (const kiln::Variable& v : net.variables()) n += v.shape().num_elements();
    return n;
  }
};

Model& model() {
  static Model m;
  return m;
}

void BM_Save(benchmark::State& state) {
  for (auto _ : state) model().save();
  state.counters["params"] = static_cast<double>(model().parameters());
  state.counters["bytes"] = static_cast<double>(std::filesystem::file_size(model().dir + "/variables.safetensors") +
                                                std::filesystem::file_size(model().dir + "/saved_model.json"));
}

void BM_Load(benchmark::State& state) {
  model().save();
  for (auto _ : state) benchmark::DoNotOptimize(kiln::saved_model::load(model().dir).variables().size());
}

void BM_CallOriginal(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(model().serve(model().images).impl());
}

void BM_CallLoaded(benchmark::State& state) {
  model().save();
  kiln::saved_model::Loaded loaded = kiln::saved_model::load(model().dir);
  const auto& sig = loaded.signature("serving_default");
  for (auto _ : state) benchmark::DoNotOptimize(sig({{"images", model().images}}).at("output_0").impl());
}

}  // namespace

BENCHMARK(BM_Save)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CallOriginal)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CallLoaded)->Unit(benchmark::kMillisecond)->UseRealTime();

namespace {
std::vector<bench::Row> rows(int) {
  auto ms = [](const char* name) { return [name](const bench::Results& r) { return r.time_ns(name) / 1e6; }; };
  return {
      {"save MNIST CNN (3.27M params)", ms("BM_Save"), "ms"},
      {"load MNIST CNN (3.27M params)", ms("BM_Load"), "ms"},
      {"serve b=50, original function", ms("BM_CallOriginal"), "ms"},
      {"serve b=50, loaded signature", ms("BM_CallLoaded"), "ms"},
  };
}
}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "bench_saved_model", {"--benchmark_min_time=1"}, rows);
}
