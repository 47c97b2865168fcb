// The seeds' MNIST CNN training step (forward, loss, gradients, Adam update)
// at batch 50 and 256, traced (one graph) and eager, on random data like the
// PyTorch peer's bench_mnist.py. Ratios are taken in the same run.
#include "bench_util.h"

#include <memory>

#include "exec/plan.h"
#include "function/traced_graph.h"
#include "kiln/kiln.h"
#include "mnist_cnn.h"

namespace {

struct Trainer {
  kiln::nn::Sequential model{"cnn"};
  kiln::nn::Adam optimizer{1e-3};
  kiln::nn::SparseCategoricalCrossentropy loss_fn;
  kiln::Tensor images, labels;
  std::function<kiln::Tensor(const kiln::Tensor&, const kiln::Tensor&)> eager;
  kiln::Function<std::function<kiln::Tensor(const kiln::Tensor&, const kiln::Tensor&)>> traced;

  explicit Trainer(int64_t batch) : traced(make_traced()) {
    bench::add_mnist_cnn(model);
    images = kiln::random::uniform({batch, 28, 28, 1}, 0.f, 1.f);
    labels = kiln::cast(kiln::random::uniform({batch}, 0.f, 10.f), kiln::DType::Int32);
  }

  kiln::Tensor step(const kiln::Tensor& x, const kiln::Tensor& y) {
    kiln::GradientTape tape;
    kiln::Tensor loss = loss_fn(y, model(x, true));
    std::vector<kiln::Variable> vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    return loss;
  }

  kiln::Function<std::function<kiln::Tensor(const kiln::Tensor&, const kiln::Tensor&)>> make_traced() {
    return kiln::function(std::function<kiln::Tensor(const kiln::Tensor&, const kiln::Tensor&)>(
        [this](const kiln::Tensor& x, const kiln::Tensor& y) { return step(x, y); }));
  }
};

void BM_MnistStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  const bool traced = state.range(1) != 0;
  Trainer t(batch);
  auto run = [&] {
    kiln::Tensor loss = traced ? t.traced(t.images, t.labels) : t.step(t.images, t.labels);
    benchmark::DoNotOptimize(loss.item<float>());
  };
  run();  // builds the layers (and traces)
  for (auto _ : state) run();
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  if (traced) {
    // The memory plan of the step: the arena against the same values unshared.
    const kiln::exec::MemoryPlan& m = t.traced.get_concrete_function(t.images, t.labels).impl()->plan->memory_plan();
    state.counters["arena_MB"] = static_cast<double>(m.arena_bytes) / 1e6;
    state.counters["unshared_MB"] = static_cast<double>(m.total_bytes) / 1e6;
  }
}
BENCHMARK(BM_MnistStep)->ArgsProduct({{50, 256}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

std::vector<bench::Row> rows(int) {
  auto ms = [](const char* name) { return [name](const bench::Results& r) { return r.time_ns(name) / 1e6; }; };
  auto ratio = [](const char* eager, const char* traced) {
    return [=](const bench::Results& r) { return r.time_ns(eager) / r.time_ns(traced); };
  };
  return {
      {"MNIST step b=50, traced", ms("BM_MnistStep/50/1"), "ms", false, 49.7, "torch eager b=50 (OpenBLAS 1 thread)"},
      {"MNIST step b=50, eager", ms("BM_MnistStep/50/0"), "ms", false, 49.7, "torch eager b=50 (OpenBLAS 1 thread)"},
      {"MNIST step b=50, eager / traced", ratio("BM_MnistStep/50/0", "BM_MnistStep/50/1"), "x", true},
      {"MNIST step b=256, traced", ms("BM_MnistStep/256/1"), "ms", false, 207, "torch eager b=256 (OpenBLAS 1 thread)"},
      {"MNIST step b=256, eager", ms("BM_MnistStep/256/0"), "ms", false, 207, "torch eager b=256 (OpenBLAS 1 thread)"},
      {"MNIST step b=256, eager / traced", ratio("BM_MnistStep/256/0", "BM_MnistStep/256/1"), "x", true},
  };
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "bench_mnist", {"--benchmark_min_time=2"}, rows);
}
