// Eager-mode figures (bench/README.md): per-op dispatch overhead, elementwise
// bandwidth beside memcpy and a hand-fused loop, matmul and the seeds' conv
// through oneDNN. Each figure is printed again at the end beside PyTorch's
// figure for the same workload on the same kind of machine.
//
//   ./build-bench/bench/bench_eager                       # everything, ~1 min
//   ./build-bench/bench/bench_eager --benchmark_filter=Dispatch
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "bench_util.h"
#include "core/allocator.h"
#include "kiln/kiln.h"
#include "ops/adam_update.h"
#include "ops/known_ops.h"
#include "ops/variable_ops.h"
#include "ops/vector_math.h"
#include "ops/matmul_layout.h"
#include "ops/nn_internal.h"
#include "runtime/dispatch.h"

namespace {

using kiln::Tensor;
using kiln::DType;

// ---- 1. Eager dispatch overhead (1-element float32) -----------------------

void BM_Dispatch_Add(benchmark::State& st) {
  Tensor a = kiln::constant({1.f});
  Tensor b = kiln::constant({2.f});
  for (auto _ : st) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_Dispatch_Add);

// The same with kiln::profiler on: what recording one op costs. The profile
// is dropped every 2^16 ops (outside the timing) so it does not grow.
void BM_Dispatch_Add_Profiled(benchmark::State& st) {
  Tensor a = kiln::constant({1.f});
  Tensor b = kiln::constant({2.f});
  kiln::profiler::start();
  int64_t n = 0;
  for (auto _ : st) {
    Tensor c = a + b;
    benchmark::DoNotOptimize(c.impl());
    if (++n % 65536 == 0) {
      st.PauseTiming();
      kiln::profiler::stop();
      kiln::profiler::start();
      st.ResumeTiming();
    }
  }
  kiln::profiler::stop();
}
BENCHMARK(BM_Dispatch_Add_Profiled);

// x = x + b: the old x is still held while the op runs, so the output gets a
// fresh buffer (from the allocator's cache) and the old one is freed after.
void BM_Dispatch_AddChain(benchmark::State& st) {
  Tensor x = kiln::constant({0.f});
  Tensor b = kiln::constant({1e-7f});
  for (auto _ : st) {
    x = x + b;
    benchmark::DoNotOptimize(x.impl());
  }
}
BENCHMARK(BM_Dispatch_AddChain);

// x = std::move(x) + b: x is donated, so Add writes over its buffer (LibTorch's
// x.add_(b) is the comparable in-place figure).
void BM_Dispatch_AddChainMoved(benchmark::State& st) {
  Tensor x = kiln::constant({0.f});
  Tensor b = kiln::constant({1e-7f});
  for (auto _ : st) {
    x = std::move(x) + b;
    benchmark::DoNotOptimize(x.impl());
  }
}
BENCHMARK(BM_Dispatch_AddChainMoved);

// a * 2: the C++ number is weakly typed and becomes a float32 scalar tensor.
void BM_Dispatch_MulScalar(benchmark::State& st) {
  Tensor a = kiln::constant({1.f});
  for (auto _ : st) {
    Tensor c = a * 2;
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_Dispatch_MulScalar);

void BM_Dispatch_Tanh(benchmark::State& st) {
  Tensor a = kiln::constant({0.5f});
  for (auto _ : st) {
    Tensor c = kiln::tanh(a);
    benchmark::DoNotOptimize(c.impl());
  }
}
BENCHMARK(BM_Dispatch_Tanh);

// tanh's contiguous float32 loop (the eager kernel's and the fused tiles')
// on an L1-resident tile of 512 values, by input range: all below 0.625 in
// magnitude (the [1M] chain's values after its first tanh ops), normal(0, 0.3),
// normal(0, 1) and uniform [-3, 3] (mixed: most blocks of 32 have a value on
// the formula's large branch). ns per element.
void BM_TanhLoop(benchmark::State& st) {
  const int64_t n = 512;
  Tensor x;
  switch (st.range(0)) {
    case 0: x = kiln::random::uniform(kiln::Shape{n}, 0.0, 0.56, DType::Float32, 3); break;
    case 1: x = kiln::random::normal(kiln::Shape{n}, 0.0, 0.3, DType::Float32, 3); break;
    case 2: x = kiln::random::normal(kiln::Shape{n}, 0.0, 1.0, DType::Float32, 3); break;
    default: x = kiln::random::uniform(kiln::Shape{n}, -3.0, 3.0, DType::Float32, 3); break;
  }
  const std::vector<float> in = x.to_vector<float>();
  std::vector<float> out(n);
  for (auto _ : st) {
    kiln::ops::vmath::tanh_f32(in.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  st.SetLabel(std::array<const char*, 4>{"|x|<0.56", "normal(0,0.3)", "normal(0,1)", "uniform[-3,3]"}[st.range(0)]);
  st.counters["time_per_value"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TanhLoop)->DenseRange(0, 3);

// The floor: a plain float add through the same loop.
void BM_Dispatch_RawFloatAdd(benchmark::State& st) {
  float x = 0, b = 1e-7f;
  for (auto _ : st) {
    benchmark::DoNotOptimize(b);
    x += b;
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_Dispatch_RawFloatAdd);

// ---- 2. Elementwise bandwidth: a*b+c on 16M float32 ------------------------

constexpr int64_t kBig = int64_t(1) << 24;  // 16M elements, 64 MiB per array

Tensor big_input(uint64_t seed) {
  return kiln::random::uniform(kiln::Shape{kBig}, -1.0, 1.0, DType::Float32, seed);
}

void set_system_allocs(benchmark::State& st, int64_t before) {
  st.counters["sys_allocs/iter"] = benchmark::Counter(
      static_cast<double>(kiln::core::allocator_stats().system_allocations - before),
      benchmark::Counter::kAvgIterations);
}

// Useful traffic: 3 reads + 1 write = 16 bytes per element.
void BM_Elementwise_EagerMulAdd(benchmark::State& st) {
  Tensor a = big_input(1), b = big_input(2), c = big_input(3);
  { Tensor warm = a * b + c; }
  int64_t allocs = kiln::core::allocator_stats().system_allocations;
  for (auto _ : st) {
    Tensor y = a * b + c;
    benchmark::DoNotOptimize(y.impl());
  }
  set_system_allocs(st, allocs);
  st.SetBytesProcessed(st.iterations() * kBig * 16);
}
BENCHMARK(BM_Elementwise_EagerMulAdd)->Unit(benchmark::kMillisecond)->UseRealTime();

using bench::aligned_floats;
using Buffer = bench::AlignedFloats;

// What a fusing compiler would emit: one pass, no temporaries, output
// preallocated, over the same OpenMP threads Kiln uses.
void BM_Elementwise_HandFusedLoop(benchmark::State& st) {
  Tensor ta = big_input(1), tb = big_input(2), tc = big_input(3);
  const float* a = ta.data<float>();
  const float* b = tb.data<float>();
  const float* c = tc.data<float>();
  Buffer y = aligned_floats(kBig);
  float* out = y.get();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < kBig; ++i) out[i] = 0;
  for (auto _ : st) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < kBig; ++i) out[i] = a[i] * b[i] + c[i];
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * kBig * 16);
}
BENCHMARK(BM_Elementwise_HandFusedLoop)->Unit(benchmark::kMillisecond)->UseRealTime();

// The practical memory limit: 64 MiB copied (8 bytes per element), split
// over the threads (as torch's y.copy_(a)) or on one thread.
void memcpy_bench(benchmark::State& st, bool parallel) {
  Buffer src = aligned_floats(kBig), dst = aligned_floats(kBig);
  std::memset(src.get(), 1, kBig * sizeof(float));
  std::memset(dst.get(), 0, kBig * sizeof(float));
  for (auto _ : st) {
    if (parallel) {
#pragma omp parallel
      {
        int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        int64_t chunk = (kBig + nt - 1) / nt, begin = t * chunk;
        int64_t end = std::min<int64_t>(kBig, begin + chunk);
        if (begin < end) std::memcpy(dst.get() + begin, src.get() + begin, (end - begin) * sizeof(float));
      }
    } else {
      std::memcpy(dst.get(), src.get(), kBig * sizeof(float));
    }
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * kBig * 8);
}
void BM_Elementwise_Memcpy(benchmark::State& st) { memcpy_bench(st, true); }

// A plain copy loop over the threads (as torch's copy_ kernel): unlike
// glibc's memcpy for large sizes it uses ordinary stores, as Kiln's kernels do.
void BM_Elementwise_CopyLoop(benchmark::State& st) { bench::copy_loop(st, kBig); }
BENCHMARK(BM_Elementwise_CopyLoop)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_Elementwise_Memcpy1Thread(benchmark::State& st) { memcpy_bench(st, false); }
BENCHMARK(BM_Elementwise_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Elementwise_Memcpy1Thread)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- 3. matmul, n x n float32 ---------------------------------------------

void BM_MatMul(benchmark::State& st) {
  int64_t n = st.range(0);
  Tensor a = kiln::random::uniform(kiln::Shape{n, n}, -1.0, 1.0, DType::Float32, 1);
  Tensor b = kiln::random::uniform(kiln::Shape{n, n}, -1.0, 1.0, DType::Float32, 2);
  { Tensor warm = kiln::matmul(a, b); }  // oneDNN primitive creation
  for (auto _ : st) {
    Tensor c = kiln::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  st.counters["FLOPS"] = benchmark::Counter(2.0 * n * n * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMul)->Arg(256)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// A few rows times the MNIST CNN's first Dense kernel, [M, 3136] x [3136,
// 1024]: reading the 12.8 MB of weights is the work. M <= 4 runs gemv_f32
// (ops/gemv.h), M = 8 oneDNN; bytes_per_second counts the weights.
void BM_MatMul_FewRows(benchmark::State& st) {
  const int64_t m = st.range(0), k = 3136, n = 1024;
  Tensor a = kiln::random::uniform(kiln::Shape{m, k}, -1.0, 1.0, DType::Float32, 1);
  Tensor b = kiln::random::uniform(kiln::Shape{k, n}, -1.0, 1.0, DType::Float32, 2);
  { Tensor warm = kiln::matmul(a, b); }
  for (auto _ : st) {
    Tensor c = kiln::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  st.counters["bytes_per_second"] = benchmark::Counter(4.0 * k * n, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_MatMul_FewRows)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMicrosecond)->UseRealTime();

// [M, K] x [K, N] with MatMul reading b in place (A) and by its rule (B,
// ops/matmul_layout.h: on CPUs without AVX-512, b copied into longer rows where
// oneDNN's no-copy sgemm would read rows 4 KB apart), alternated call by
// call; the counters are each side's fastest call and their ratio. Shapes
// the rule leaves alone read 1.00x.
void BM_MatMul_PaddedB(benchmark::State& st) {
  using kiln::ops::MatmulBPadding;
  const int64_t m = st.range(0), k = st.range(1), n = st.range(2);
  Tensor a = kiln::random::uniform(kiln::Shape{m, k}, -1.0, 1.0, DType::Float32, 1);
  Tensor b = kiln::random::uniform(kiln::Shape{k, n}, -1.0, 1.0, DType::Float32, 2);
  auto product = [&](MatmulBPadding mode) {
    kiln::ops::set_matmul_b_padding(mode);
    return kiln::matmul(a, b);
  };
  bench::fastest_of_alternating(
      st, "in_place_us", [&] { return product(MatmulBPadding::kNever); }, "rule_us",
      [&] { return product(MatmulBPadding::kByRule); });
  kiln::ops::set_matmul_b_padding(MatmulBPadding::kByRule);
  st.counters["pads"] = kiln::ops::matmul_pads_b(m, k, n);
}
BENCHMARK(BM_MatMul_PaddedB)
    ->Args({50, 3136, 1024})
    ->Args({256, 3136, 1024})
    ->Args({32, 3136, 1024})
    ->Args({64, 512, 1024})
    ->Args({100, 1024, 2048})
    ->Args({64, 50, 1024})
    ->Args({16, 3136, 1024})
    ->Args({50, 3136, 512})
    ->Args({128, 128, 512})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// [m, k] x b, b [k, n] dense against b packed in the layout MatMul reads it
// fastest in (MatMul b_layout: a served weight, ops/matmul_layout.h); with a
// fourth arg 1, b is an [n, k] matrix read transposed against its transpose
// packed. Alternated call by call; the fastest of each. Empty where this
// CPU's oneDNN wants no layout.
void BM_MatMul_BPacked(benchmark::State& st) {
  const int64_t m = st.range(0), k = st.range(1), n = st.range(2);
  const bool tb = st.range(3) != 0;
  const kiln::ops::MatmulLayout* layout = kiln::ops::preferred_layout(m, k, n);
  if (!layout) {
    for (auto _ : st) {
    }
    st.SetLabel("this CPU's matmul wants no layout");
    return;
  }
  Tensor a = kiln::random::uniform(kiln::Shape{m, k}, -1.0, 1.0, DType::Float32, 1);
  Tensor b = kiln::random::uniform(tb ? kiln::Shape{n, k} : kiln::Shape{k, n}, -1.0, 1.0, DType::Float32, 2);
  const Tensor in[] = {a, kiln::ops::pack(*layout, b, tb)};
  const kiln::schema::Attrs attrs{
      {"transpose_a", false}, {"transpose_b", false}, {kiln::ops::kMatmulBLayout, std::string(layout->name)}};
  bench::fastest_of_alternating(
      st, "dense_us", [&] { return kiln::matmul(a, b, false, tb); }, "packed_us",
      [&] { return kiln::runtime::run_eager(kiln::ops::matmul_op(), in, attrs)[0]; });
  st.SetLabel(std::string(layout->name));
}
BENCHMARK(BM_MatMul_BPacked)
    ->Args({50, 3136, 1024, 0})
    ->Args({256, 3136, 1024, 0})
    ->Args({64, 1024, 1024, 0})
    ->Args({50, 1024, 3136, 1})
    ->Args({256, 1024, 3136, 1})
    ->Args({64, 768, 8192, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Batched [32,64,64] x [32,64,64]: one MatMul over the batch (oneDNN's
// batched primitive) against the loop a user would write without it, 32
// slices and 2-D matmuls and a stack.
constexpr int64_t kBatch = 32, kSide = 64;
constexpr double kBatchedFlops = 2.0 * kBatch * kSide * kSide * kSide;

void BM_BatchMatMul(benchmark::State& st) {
  Tensor a = kiln::random::uniform(kiln::Shape{kBatch, kSide, kSide}, -1.0, 1.0, DType::Float32, 1);
  Tensor b = kiln::random::uniform(kiln::Shape{kBatch, kSide, kSide}, -1.0, 1.0, DType::Float32, 2);
  { Tensor warm = kiln::matmul(a, b); }
  for (auto _ : st) {
    Tensor c = kiln::matmul(a, b);
    benchmark::DoNotOptimize(c.impl());
  }
  st.counters["FLOPS"] = benchmark::Counter(kBatchedFlops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BatchMatMul)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_BatchMatMul_LoopOf2D(benchmark::State& st) {
  Tensor a = kiln::random::uniform(kiln::Shape{kBatch, kSide, kSide}, -1.0, 1.0, DType::Float32, 1);
  Tensor b = kiln::random::uniform(kiln::Shape{kBatch, kSide, kSide}, -1.0, 1.0, DType::Float32, 2);
  std::vector<Tensor> as = kiln::unstack(a), bs = kiln::unstack(b);
  auto loop = [&] {
    std::vector<Tensor> cs;
    for (int64_t i = 0; i < kBatch; ++i) cs.push_back(kiln::matmul(as[i], bs[i]));
    return kiln::stack(cs);
  };
  { Tensor warm = loop(); }
  for (auto _ : st) {
    Tensor c = loop();
    benchmark::DoNotOptimize(c.impl());
  }
  st.counters["FLOPS"] = benchmark::Counter(kBatchedFlops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_BatchMatMul_LoopOf2D)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---- 4. The seeds' conv: NHWC [1,200,200,100] * [3,3,100,100], VALID -------

constexpr double kConvFlops = 2.0 * 198 * 198 * 100 * 100 * 9;  // 7.06 GFLOP

void BM_Conv2D_Seed(benchmark::State& st) {
  Tensor x = kiln::random::uniform(kiln::Shape{1, 200, 200, 100}, -1.0, 1.0, DType::Float32, 1);
  Tensor w = kiln::random::uniform(kiln::Shape{3, 3, 100, 100}, -0.1, 0.1, DType::Float32, 2);
  for (int i = 0; i < 2; ++i) { Tensor warm = kiln::nn::conv2d(x, w, 1, "VALID"); }
  for (auto _ : st) {
    Tensor y = kiln::nn::conv2d(x, w, 1, "VALID");
    benchmark::DoNotOptimize(y.impl());
  }
  st.counters["FLOPS"] = benchmark::Counter(kConvFlops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Conv2D_Seed)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same conv traced into a graph (the seeds: no speedup expected when one
// expensive op dominates).
void BM_Conv2D_Seed_Traced(benchmark::State& st) {
  Tensor x = kiln::random::uniform(kiln::Shape{1, 200, 200, 100}, -1.0, 1.0, DType::Float32, 1);
  Tensor w = kiln::random::uniform(kiln::Shape{3, 3, 100, 100}, -0.1, 0.1, DType::Float32, 2);
  auto conv = kiln::function([](const Tensor& a, const Tensor& b) { return kiln::nn::conv2d(a, b, 1, "VALID"); });
  for (int i = 0; i < 2; ++i) { Tensor warm = conv(x, w); }
  for (auto _ : st) {
    Tensor y = conv(x, w);
    benchmark::DoNotOptimize(y.impl());
  }
  st.counters["FLOPS"] = benchmark::Counter(kConvFlops, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Conv2D_Seed_Traced)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- Summary ---------------------------------------------------------------

std::vector<bench::Row> rows(int threads) {
  using R = const bench::Results&;
  auto ns = [](const char* name) { return [name](R r) { return r.time_ns(name); }; };
  auto gbps = [](const char* name) {
    return [name](R r) { return r.counter(name, "bytes_per_second") / 1e9; };
  };
  auto gflops = [](std::string name) {
    return [name](R r) { return r.counter(name, "FLOPS") / 1e9; };
  };
  std::vector<bench::Row> out = {
      {"dispatch: a + b, [1] float32", ns("BM_Dispatch_Add"), "ns/op", false, 637,
       "LibTorch `a + b` (C++)"},
      {"dispatch: a + b, profiler on", ns("BM_Dispatch_Add_Profiled"), "ns/op", false, NAN, ""},
      {"dispatch: x = x + b chain", ns("BM_Dispatch_AddChain"), "ns/op", false, 648,
       "LibTorch `x = x + b` chain"},
      {"dispatch: x = std::move(x) + b (in place)", ns("BM_Dispatch_AddChainMoved"), "ns/op", false, 329,
       "LibTorch `x.add_(b)`"},
      {"dispatch: a * 2 (weak scalar)", ns("BM_Dispatch_MulScalar"), "ns/op", false, 637,
       "LibTorch `a + b` (no C++ scalar figure)"},
      {"dispatch: tanh(a), [1]", ns("BM_Dispatch_Tanh"), "ns/op", false, 918,
       "Python torch x.tanh() on [16]"},
      {"dispatch: raw float add (loop floor)", ns("BM_Dispatch_RawFloatAdd"), "ns/op", false, NAN,
       "(0.8 ns in the peer's own loop)"},
      {"a*b+c 16M f32, eager", gbps("BM_Elementwise_EagerMulAdd"), "GB/s", true, 5.5,
       "torch eager a*b+c"},
      {"a*b+c 16M f32, hand-fused C++ loop", gbps("BM_Elementwise_HandFusedLoop"), "GB/s", true, 31.5,
       "torch addcmul(out=) (fused, no alloc)"},
      {"memcpy 64 MiB, all threads", gbps("BM_Elementwise_Memcpy"), "GB/s", true,
       threads == 1 ? 23.9 : 36.9, threads == 1 ? "torch y.copy_(a), 1 thread" : "torch y.copy_(a), 2 threads"},
      {"copy loop 64 MiB, all threads", gbps("BM_Elementwise_CopyLoop"), "GB/s", true,
       threads == 1 ? 23.9 : 36.9, threads == 1 ? "torch y.copy_(a), 1 thread" : "torch y.copy_(a), 2 threads"},
      {"memcpy 64 MiB, 1 thread", gbps("BM_Elementwise_Memcpy1Thread"), "GB/s", true, 20.9,
       "numpy np.copyto (1 thread)"},
      {"a*b+c eager time / hand-fused time",
       [](R r) {
         return r.time_ns("BM_Elementwise_EagerMulAdd") / r.time_ns("BM_Elementwise_HandFusedLoop");
       },
       "x", false, 5.7, "torch eager / addcmul(out=)"},
      {"a*b+c eager, share of copy-loop bandwidth",
       [](R r) {
         return 100 * r.counter("BM_Elementwise_EagerMulAdd", "bytes_per_second") /
                r.counter("BM_Elementwise_CopyLoop", "bytes_per_second");
       },
       "%", true, 15, "torch eager (share of its copy BW)"},
  };
  const std::pair<int, double> matmul_peers[] = {{256, 101}, {512, 104}, {1024, 201}, {2048, 207}};
  for (auto [n, peer] : matmul_peers) {
    std::string name = "BM_MatMul/" + std::to_string(n) + "";
    out.push_back({"matmul " + std::to_string(n) + "^2 float32", gflops(name), "GFLOP/s", true, peer,
                   "torch.mm, OpenBLAS 2 threads"});
  }
  out.push_back({"matmul [1,3136]x[3136,1024] (gemv), weights read", gbps("BM_MatMul_FewRows/1"), "GB/s", true});
  out.push_back({"matmul: 8 rows (oneDNN) time / 4 rows (gemv)",
                 [](R r) { return r.time_ns("BM_MatMul_FewRows/8") / r.time_ns("BM_MatMul_FewRows/4"); }, "x", true});
  out.push_back({"batch matmul [32,64,64]^2 float32", gflops("BM_BatchMatMul"), "GFLOP/s", true, NAN, ""});
  out.push_back({"batch matmul: loop of 2-D matmuls / one batched",
                 [](R r) { return r.time_ns("BM_BatchMatMul_LoopOf2D") / r.time_ns("BM_BatchMatMul"); }, "x", true});
  out.push_back({"conv2d seed (NHWC, VALID)",
                 [](R r) { return r.time_ns("BM_Conv2D_Seed") / 1e6; }, "ms", false, 39.5,
                 "torch eager channels_last, 2 threads"});
  out.push_back({"conv2d seed throughput", gflops("BM_Conv2D_Seed"), "GFLOP/s", true, 179,
                 "torch eager channels_last, 2 threads"});
  out.push_back({"conv2d seed, traced",
                 [](R r) { return r.time_ns("BM_Conv2D_Seed_Traced") / 1e6; }, "ms", false, 39.5,
                 "torch eager channels_last, 2 threads"});
  out.push_back({"conv2d seed, traced / eager",
                 [](R r) { return r.time_ns("BM_Conv2D_Seed_Traced") / r.time_ns("BM_Conv2D_Seed"); }, "x", false});
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "bench_eager", {"--benchmark_min_time=0.3"}, rows);
}
