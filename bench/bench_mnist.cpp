// The seeds' MNIST CNN training step (forward, loss, gradients, Adam update)
// at batch 50 and 256, traced (one graph) and eager, on random data like the
// PyTorch peer's bench_mnist.py. Ratios are taken in the same run.
#include "bench_util.h"
#include "busy_cores.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <immintrin.h>
#include <omp.h>
#include <memory>
#include <vector>

#include "exec/plan.h"
#include "function/traced_graph.h"
#include "kiln/kiln.h"
#include "mnist_cnn.h"
#include "ops/matmul_layout.h"
#include "ops/vector_math.h"

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

// Calls run_a and run_b alternately in one process, so that both see the same
// machine load; the counters give each side's min and median ms of wall-clock
// time and the median ms of the process's CPU time (all threads; on a busy
// machine run with OMP_WAIT_POLICY=passive so that waiting threads sleep
// instead of spinning), and B's speedup: A / B of the wall-clock medians, and
// pair_A/B, the median of each pair's A / B (two calls in a row see the same
// load, so this one moves less when the machine's speed drifts during the run).
template <class RunA, class RunB>
void alternate(benchmark::State& state, RunA&& run_a, RunB&& run_b) {
  std::vector<double> wall_a, wall_b, cpu_a, cpu_b;
  auto cpu_ms = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  };
  auto time = [&](auto&& fn, std::vector<double>& wall, std::vector<double>& cpu) {
    const double c0 = cpu_ms();
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(fn().template item<float>());
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpu_ms() - c0);
  };
  for (auto _ : state) {
    time(run_a, wall_a, cpu_a);
    time(run_b, wall_b, cpu_b);
  }
  state.counters["A_min_ms"] = *std::min_element(wall_a.begin(), wall_a.end());
  state.counters["B_min_ms"] = *std::min_element(wall_b.begin(), wall_b.end());
  state.counters["A_med_ms"] = bench::median(wall_a);
  state.counters["B_med_ms"] = bench::median(wall_b);
  state.counters["A_cpu_ms"] = bench::median(cpu_a);
  state.counters["B_cpu_ms"] = bench::median(cpu_b);
  state.counters["A/B"] = bench::median(wall_a) / bench::median(wall_b);
  std::vector<double> pairs(wall_a.size());
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = wall_a[i] / wall_b[i];
  state.counters["pair_A/B"] = bench::median(pairs);
}

// The traced step with the graph passes named in `off` disabled (A) against
// the default pipeline (B), alternated. Without a name to turn off, A is the
// eager step. KILN_DISABLE_PASSES is read when a trace is optimized (each
// Trainer's first call).
void BM_MnistStepAlternating(benchmark::State& state, const char* off) {
  const int64_t batch = state.range(0);
  Trainer a(batch), b(batch);
  const bool eager = *off == 0;
  if (!eager) setenv("KILN_DISABLE_PASSES", off, 1);
  auto run_a = [&] { return eager ? a.step(a.images, a.labels) : a.traced(a.images, a.labels); };
  run_a();
  unsetenv("KILN_DISABLE_PASSES");
  b.traced(b.images, b.labels);
  alternate(state, run_a, [&] { return b.traced(b.images, b.labels); });
}
BENCHMARK_CAPTURE(BM_MnistStepAlternating, adam_pass, "adam")
    ->Arg(50)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_MnistStepAlternating, conv_pool_pass, "convpool")
    ->Arg(50)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_MnistStepAlternating, layouts_pass, "layouts")
    ->Arg(50)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_MnistStepAlternating, eager, "")
    ->Arg(50)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The step under contention: quiet, then with bench::busy_core_count() other
// processes spinning (one on two cores), alternated in one run (phases of
// several steps), traced and eager. Counters: the medians in ms, busy/quiet for the traced step (fair
// share on 2 cores with 1 taken: 2x) and eager/traced while busy (the graph
// must stay ahead when cores are taken).
void BM_MnistStepContended(benchmark::State& state) {
  const int64_t batch = state.range(0);
  Trainer traced(batch), eager(batch);
  auto run_traced = [&] { return traced.traced(traced.images, traced.labels); };
  auto run_eager = [&] { return eager.step(eager.images, eager.labels); };
  run_traced();
  run_eager();
  bench::BusyCores busy(bench::busy_core_count());
  std::vector<double> traced_quiet, eager_quiet, traced_busy, eager_busy;
  auto time = [](auto&& fn, std::vector<double>& out) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(fn().template item<float>());
    out.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  };
  // Each phase lasts several steps: a process resumed for one step is a
  // sleeper to the scheduler, which favours it, and understates the cost of
  // cores taken for good (measured: the order of the policies reversed).
  constexpr int kStepsPerPhase = 6;
  for (auto _ : state) {
    busy.set_busy(false);
    for (int i = 0; i < kStepsPerPhase; ++i) {
      time(run_traced, traced_quiet);
      time(run_eager, eager_quiet);
    }
    busy.set_busy(true);
    for (int i = 0; i < kStepsPerPhase; ++i) {
      time(run_traced, traced_busy);
      time(run_eager, eager_busy);
    }
  }
  busy.set_busy(false);
  state.counters["busy_procs"] = busy.size();
  state.counters["traced_quiet_ms"] = bench::median(traced_quiet);
  state.counters["traced_busy_ms"] = bench::median(traced_busy);
  state.counters["eager_quiet_ms"] = bench::median(eager_quiet);
  state.counters["eager_busy_ms"] = bench::median(eager_busy);
  state.counters["busy/quiet"] = bench::median(traced_busy) / bench::median(traced_quiet);
  state.counters["eager/traced_busy"] = bench::median(eager_busy) / bench::median(traced_busy);
}
BENCHMARK(BM_MnistStepContended)->Arg(50)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(4);

// The cores' float32 peak, measured: each thread runs chains of independent
// FMAs (enough of them to cover the FMA units' latency) on the widest
// registers the CPU has, so the step's convolutions can be read as a share of
// what the machine can do at all (counter GFLOP/s; 2 flops per lane per FMA).
constexpr int kFmaChains = 12;
constexpr int64_t kFmaRounds = 1 << 22;

// One thread's chains, 8 lanes (AVX2) or 16 (AVX-512); returns a lane of
// their sum so that the compiler keeps the work. A macro: a template taking
// the intrinsics as parameters did not inline them into the AVX-512
// function (36 against 575 GFLOP/s).
#define KILN_FMA_CHAINS(Vec, fma, splat)                                              \
  Vec acc[kFmaChains];                                                                \
  _Pragma("GCC unroll 12") for (int i = 0; i < kFmaChains; ++i) acc[i] =              \
      splat(1.0f + static_cast<float>(i) * 1e-7f);                                    \
  const Vec scale = splat(0.999999f), shift = splat(1e-7f);                           \
  for (int64_t r = 0; r < rounds; ++r) {                                              \
    _Pragma("GCC unroll 12") for (int i = 0; i < kFmaChains; ++i) acc[i] =            \
        fma(acc[i], scale, shift);                                                    \
  }                                                                                   \
  float sum = 0;                                                                      \
  for (const Vec& v : acc) sum += reinterpret_cast<const float*>(&v)[0];              \
  return sum;

float fma_chains8(int64_t rounds) { KILN_FMA_CHAINS(__m256, _mm256_fmadd_ps, _mm256_set1_ps) }
__attribute__((target("avx512f"))) float fma_chains16(int64_t rounds) {
  KILN_FMA_CHAINS(__m512, _mm512_fmadd_ps, _mm512_set1_ps)
}
#undef KILN_FMA_CHAINS

void BM_Float32FmaPeak(benchmark::State& state) {
  const bool wide = kiln::ops::vmath::has_avx512();
  const int lanes = wide ? 16 : 8;
  const int threads = omp_get_max_threads();
  for (auto _ : state) {
    float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += wide ? fma_chains16(kFmaRounds) : fma_chains8(kFmaRounds);
    benchmark::DoNotOptimize(sink);
  }
  const double flops = 2.0 * lanes * kFmaChains * static_cast<double>(kFmaRounds) * threads;
  state.counters["GFLOP/s"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["lanes"] = lanes;
}
BENCHMARK(BM_Float32FmaPeak)->Unit(benchmark::kMillisecond)->UseRealTime();

// One step (eager or traced) with MatMul reading b in place (A) against
// MatMul's padded copy of b where its rule says so (B, the default), alternated
// (ops/matmul_layout.h: on CPUs without AVX-512, dense1's forward at these
// batches). The mode is read when a MatMul primitive is made, and is part of
// its cache key, so each side keeps its own.
void BM_MnistStepMatmulPadding(benchmark::State& state, bool traced) {
  using kiln::ops::MatmulBPadding;
  const int64_t batch = state.range(0);
  Trainer t(batch);
  auto run = [&](MatmulBPadding mode) {
    kiln::ops::set_matmul_b_padding(mode);
    return traced ? t.traced(t.images, t.labels) : t.step(t.images, t.labels);
  };
  run(MatmulBPadding::kNever);
  run(MatmulBPadding::kByRule);
  alternate(state, [&] { return run(MatmulBPadding::kNever); }, [&] { return run(MatmulBPadding::kByRule); });
  kiln::ops::set_matmul_b_padding(MatmulBPadding::kByRule);
}
BENCHMARK_CAPTURE(BM_MnistStepMatmulPadding, eager, false)
    ->Arg(50)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_MnistStepMatmulPadding, traced, true)
    ->Arg(50)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

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
      {"MNIST step b=50, eager / traced, alternated",
       [](const bench::Results& r) { return r.counter("BM_MnistStepAlternating/eager/50", "pair_A/B"); }, "x", true},
      {"float32 FMA peak of the cores", [](const bench::Results& r) { return r.counter("BM_Float32FmaPeak", "GFLOP/s"); },
       "GFLOP/s", true},
  };
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "bench_mnist", {"--benchmark_min_time=2"}, rows);
}
