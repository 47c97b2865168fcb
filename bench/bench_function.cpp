// kiln::function figures (bench/README.md): the overhead of a traced call and
// of each plan step, the "many small ops" chain eager vs traced (interleaved
// in one benchmark, so the ratio comes from the same run), and what tracing
// costs. Each figure is printed again at the end beside PyTorch's.
//
//   ./build-bench/bench/bench_function                    # everything, ~1 min
//   ./build-bench/bench/bench_function --benchmark_filter=SmallOps
#include <algorithm>
#include <vector>

#include <cstdlib>
#include <ctime>

#include "bench_util.h"
#include "trace/tracing_context.h"
#include "kiln/kiln.h"
#include "passes/passes.h"

namespace {

using kiln::DType;
using kiln::Tensor;

Tensor uniform(int64_t n, uint64_t seed) {
  return kiln::random::uniform(kiln::Shape{n}, -1.0, 1.0, DType::Float32, seed);
}

bool same_values(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.to_vector<float>() == b.to_vector<float>();
}

// ---- 5. A traced 1-op function against the same op eagerly ----------------

auto add_one = [](const Tensor& x) { return x + 1; };

void BM_Call_OneOp_Eager(benchmark::State& st) {
  Tensor x = kiln::constant({1.f});
  for (auto _ : st) {
    Tensor y = add_one(x);
    benchmark::DoNotOptimize(y.impl());
  }
}
BENCHMARK(BM_Call_OneOp_Eager);

void BM_Call_OneOp_Traced(benchmark::State& st) {
  Tensor x = kiln::constant({1.f});
  auto f = kiln::function(add_one);
  { Tensor warm = f(x); }
  for (auto _ : st) {
    Tensor y = f(x);
    benchmark::DoNotOptimize(y.impl());
  }
  if (f.tracing_count() != 1) st.SkipWithError("the function traced more than once");
}
BENCHMARK(BM_Call_OneOp_Traced);

// The fixed part of a call, without any op: the function returns its input.
void BM_Call_Identity_Traced(benchmark::State& st) {
  Tensor x = kiln::constant({1.f});
  auto f = kiln::function([](const Tensor& x) { return x; });
  { Tensor warm = f(x); }
  for (auto _ : st) {
    Tensor y = f(x);
    benchmark::DoNotOptimize(y.impl());
  }
}
BENCHMARK(BM_Call_Identity_Traced);

// ---- 6. Per-step overhead: N sequential 1-element Adds ---------------------

// Tensor-tensor Adds, so there are no Const nodes: exactly N steps.
Tensor add_chain(const Tensor& x, const Tensor& y, int n) {
  Tensor z = x;
  for (int i = 0; i < n; ++i) z = z + y;
  return z;
}

// Runs `first_call` (which traces) with the passes `disabled` off (all on
// when null); the user's KILN_DISABLE_PASSES, if any, applies again after.
template <class F> Tensor traced_without(const char* disabled, F&& first_call) {
  const char* user = std::getenv("KILN_DISABLE_PASSES");
  const std::string saved = user ? user : "";
  if (disabled) setenv("KILN_DISABLE_PASSES", disabled, 1);
  Tensor traced = first_call();
  if (user) setenv("KILN_DISABLE_PASSES", saved.c_str(), 1);
  else unsetenv("KILN_DISABLE_PASSES");
  return traced;
}

// Fusion would make the chain one step: it is turned off while tracing, so
// this keeps measuring the executor's cost per step (BM_Steps_Fused has it on).
void steps_traced(benchmark::State& st, bool fused) {
  int n = static_cast<int>(st.range(0));
  Tensor x = kiln::constant({0.f}), y = kiln::constant({1e-3f});
  auto f = kiln::function([n](const Tensor& x, const Tensor& y) { return add_chain(x, y, n); });
  Tensor traced = traced_without(fused ? nullptr : "fuse", [&] { return f(x, y); });
  if (!same_values(traced, add_chain(x, y, n))) st.SetLabel("traced result differs from eager!");
  for (auto _ : st) {
    Tensor z = f(x, y);
    benchmark::DoNotOptimize(z.impl());
  }
  st.counters["ns/step"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                              benchmark::Counter::kIsIterationInvariantRate |
                                                  benchmark::Counter::kInvert);
}
void BM_Steps_Traced(benchmark::State& st) { steps_traced(st, false); }
void BM_Steps_Fused(benchmark::State& st) { steps_traced(st, true); }
BENCHMARK(BM_Steps_Traced)->Arg(1)->Arg(100)->Arg(1000);
BENCHMARK(BM_Steps_Fused)->Arg(100);

void BM_Steps_Eager(benchmark::State& st) {
  int n = static_cast<int>(st.range(0));
  Tensor x = kiln::constant({0.f}), y = kiln::constant({1e-3f});
  for (auto _ : st) {
    Tensor z = add_chain(x, y, n);
    benchmark::DoNotOptimize(z.impl());
  }
  st.counters["ns/op"] = benchmark::Counter(static_cast<double>(n) * 1e-9,
                                            benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
}
BENCHMARK(BM_Steps_Eager)->Arg(100);

// ---- 6a. A dense layer on captured weights, packed and not -----------------

// relu(x W + b) with W and b eager tensors the function captures (a served
// model's weights), [m, 3136] x [3136, 1024]: traced with the layouts pass
// (W packed once, when the plan is built, where oneDNN reads it faster so:
// ops/matmul_layout.h) and without it, called alternately; the fastest of
// each and their ratio.
void BM_CapturedDense_Layouts(benchmark::State& st) {
  const int64_t m = st.range(0), k = 3136, n = 1024;
  Tensor x = kiln::random::uniform(kiln::Shape{m, k}, -1.0, 1.0, DType::Float32, 6);
  Tensor w = kiln::random::uniform(kiln::Shape{k, n}, -0.02, 0.02, DType::Float32, 7);
  Tensor b = kiln::random::uniform(kiln::Shape{n}, -1.0, 1.0, DType::Float32, 8);
  auto layer = [&](const Tensor& x) { return kiln::relu(kiln::nn::bias_add(kiln::matmul(x, w), b)); };
  auto packed = kiln::function(layer), without = kiln::function(layer);
  Tensor a = traced_without(nullptr, [&] { return packed(x); });
  Tensor c = traced_without("layouts", [&] { return without(x); });
  if (!same_values(a, c)) st.SetLabel("results differ!");
  bench::fastest_of_alternating(
      st, "without_us", [&] { return without(x); }, "packed_us", [&] { return packed(x); });
}
BENCHMARK(BM_CapturedDense_Layouts)->Arg(50)->Arg(256)->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---- 6b. Depthwise convolution + bias + relu, fused and not ---------------

// MobileNet v1's depthwise layer (3x3, SAME) at batch 16, args: size,
// channels, stride. The same function traced twice, with the contraction
// pass and without it, called alternately (A B, B A, ...); the counters are
// the medians of each, and the speedup their ratio, in real time and in the
// process's CPU time (which a loaded machine's waits do not inflate).
void BM_DepthwiseBiasRelu(benchmark::State& st) {
  const int64_t size = st.range(0), channels = st.range(1), stride = st.range(2);
  Tensor x = kiln::random::uniform(kiln::Shape{16, size, size, channels}, -1.0, 1.0, DType::Float32, 3);
  Tensor w = kiln::random::uniform(kiln::Shape{3, 3, channels, 1}, -1.0, 1.0, DType::Float32, 4);
  Tensor b = kiln::random::uniform(kiln::Shape{channels}, -1.0, 1.0, DType::Float32, 5);
  auto layer = [stride](const Tensor& x, const Tensor& w, const Tensor& b) {
    return kiln::relu(kiln::nn::bias_add(kiln::nn::depthwise_conv2d(x, w, stride, kiln::nn::Padding::Same), b));
  };
  auto fused = kiln::function(layer), unfused = kiln::function(layer);
  Tensor a = traced_without(nullptr, [&] { return fused(x, w, b); });
  Tensor c = traced_without("contract", [&] { return unfused(x, w, b); });
  if (!same_values(a, c)) st.SetLabel("fused result differs from unfused!");
  auto cpu_seconds = [] {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  };
  std::vector<double> tf, tu, cf, cu;
  bool fused_first = true;
  for (auto _ : st) {
    for (int k = 0; k < 2; ++k) {
      const bool run_fused = fused_first == (k == 0);
      auto t0 = bench::Clock::now();
      const double c0 = cpu_seconds();
      Tensor y = run_fused ? fused(x, w, b) : unfused(x, w, b);
      benchmark::DoNotOptimize(y.impl());
      y = Tensor();
      (run_fused ? cf : cu).push_back(cpu_seconds() - c0);
      (run_fused ? tf : tu).push_back(bench::seconds_since(t0));
    }
    fused_first = !fused_first;
  }
  const double f = bench::median(tf), u = bench::median(tu);
  st.counters["fused_ms"] = f * 1e3;
  st.counters["unfused_ms"] = u * 1e3;
  st.counters["speedup"] = u / f;
  st.counters["cpu_speedup"] = bench::median(cu) / bench::median(cf);
}
BENCHMARK(BM_DepthwiseBiasRelu)
    ->Args({112, 32, 1})
    ->Args({56, 128, 1})
    ->Args({28, 256, 2})
    ->Args({14, 512, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// ---- 7. Many small ops: the peer report's workload.py ---------------------

// 250 x [x*1.0001, x+0.001, tanh(x), x*0.9999] = 1000 ops, written as a
// user would (x stays held across each op, as in the Python original).
Tensor small_ops(const Tensor& input) {
  Tensor x = input;
  for (int i = 0; i < 250; ++i) {
    x = x * 1.0001f;
    x = x + 0.001f;
    x = kiln::tanh(x);
    x = x * 0.9999f;
  }
  return x;
}

// The same with every intermediate handed over (std::move), so eager ops can
// write in place as the traced plan does at each value's last use.
Tensor small_ops_moved(const Tensor& input) {
  Tensor x = input;
  for (int i = 0; i < 250; ++i) {
    x = std::move(x) * 1.0001f;
    x = std::move(x) + 0.001f;
    x = kiln::tanh(std::move(x));
    x = std::move(x) * 0.9999f;
  }
  return x;
}

// Eager and traced alternate (A B, B A, ...) inside one benchmark; the
// counters are the medians of each, and the speedup their ratio.
template <Tensor (*Workload)(const Tensor&)>
void small_ops_interleaved(benchmark::State& st) {
  int64_t n = st.range(0);
  Tensor x = uniform(n, 7);
  auto f = kiln::function(Workload);
  Tensor traced = f(x);
  Tensor eager = Workload(x);
  if (!same_values(traced, eager)) st.SetLabel("traced result differs from eager!");
  std::vector<double> te, tt;
  bool eager_first = true;
  for (auto _ : st) {
    for (int k = 0; k < 2; ++k) {
      auto t0 = bench::Clock::now();
      if (eager_first == (k == 0)) {
        Tensor y = Workload(x);
        benchmark::DoNotOptimize(y.impl());
        y = Tensor();
        te.push_back(bench::seconds_since(t0));
      } else {
        Tensor y = f(x);
        benchmark::DoNotOptimize(y.impl());
        y = Tensor();
        tt.push_back(bench::seconds_since(t0));
      }
    }
    eager_first = !eager_first;
  }
  if (f.tracing_count() != 1) st.SkipWithError("the function traced more than once");
  double e = bench::median(te), t = bench::median(tt);
  st.counters["eager_ms"] = e * 1e3;
  st.counters["traced_ms"] = t * 1e3;
  st.counters["eager_us/op"] = e * 1e6 / 1000;
  st.counters["traced_us/op"] = t * 1e6 / 1000;
  st.counters["speedup"] = e / t;
  // Bytes per op: one read and one write of the tensor.
  st.counters["traced_GB/s"] = 1000.0 * 8 * n / t / 1e9;
}
void BM_SmallOps(benchmark::State& st) { small_ops_interleaved<small_ops>(st); }
void BM_SmallOpsMoved(benchmark::State& st) { small_ops_interleaved<small_ops_moved>(st); }
BENCHMARK(BM_SmallOps)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SmallOps)->Arg(1000000)->Iterations(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SmallOpsMoved)->Arg(16)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SmallOpsMoved)->Arg(1000000)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- 8. Tracing cost of the 1000-op function -------------------------------

// A fresh function each iteration; the iteration time is wrapping plus the
// first call (trace, plan, run). The second call, already traced, gives the
// steady cost, so first - second is what tracing adds.
void BM_TraceCost(benchmark::State& st) {
  Tensor x = uniform(16, 7);
  std::vector<double> first, second, eager;
  for (auto _ : st) {
    auto t0 = bench::Clock::now();
    auto f = kiln::function(small_ops);
    Tensor y = f(x);
    double t_first = bench::seconds_since(t0);
    st.SetIterationTime(t_first);
    first.push_back(t_first);
    auto t1 = bench::Clock::now();
    y = f(x);
    second.push_back(bench::seconds_since(t1));
    auto t2 = bench::Clock::now();
    y = small_ops(x);
    eager.push_back(bench::seconds_since(t2));
  }
  double a = bench::median(first), b = bench::median(second), e = bench::median(eager);
  st.counters["first_call_ms"] = a * 1e3;
  st.counters["second_call_ms"] = b * 1e3;
  st.counters["trace_us/op"] = (a - b) * 1e6 / 1000;
  st.counters["eager_ms"] = e * 1e3;
  // Calls until tracing pays for itself: first-call cost over the saving per call.
  st.counters["break_even_calls"] = e > b ? (a - e) / (e - b) : NAN;
}
BENCHMARK(BM_TraceCost)->Unit(benchmark::kMillisecond)->UseManualTime();

// The graph passes alone on the traced 1000-op graph (inline, fold,
// simplify, CSE, DCE, fusion into one node).
void BM_OptimizeCost(benchmark::State& st) {
  auto g = std::make_shared<kiln::graph::Graph>("small_ops");
  kiln::trace::TracingContext ctx(g);
  Tensor x = ctx.add_parameter({DType::Float32, kiln::Shape{16}}, "x");
  {
    kiln::runtime::DispatchHandlerGuard guard(&ctx);
    g->results().push_back(ctx.value_of(small_ops(x)));
  }
  kiln::passes::PassOptions o;
  for (auto _ : st) {
    auto opt = kiln::passes::optimize(*g, o);
    benchmark::DoNotOptimize(opt.get());
  }
}
BENCHMARK(BM_OptimizeCost)->Unit(benchmark::kMillisecond);

// ---- a*b+c on 16M float32, traced (one fused pass) vs a copy ---------------

constexpr int64_t kBig = int64_t(1) << 24;

void BM_MulAdd16M_Traced(benchmark::State& st) {
  Tensor a = uniform(kBig, 1), b = uniform(kBig, 2), c = uniform(kBig, 3);
  auto f = kiln::function([](const Tensor& a, const Tensor& b, const Tensor& c) { return a * b + c; });
  { Tensor warm = f(a, b, c); }
  for (auto _ : st) {
    Tensor y = f(a, b, c);
    benchmark::DoNotOptimize(y.impl());
  }
  st.SetBytesProcessed(st.iterations() * kBig * 16);
}
BENCHMARK(BM_MulAdd16M_Traced)->Unit(benchmark::kMillisecond)->UseRealTime();

// The practical memory limit in the same run: a 64 MiB copy loop over the
// threads (ordinary stores, like the fused kernel), 8 B per element.
void BM_CopyLoop16M(benchmark::State& st) { bench::copy_loop(st, kBig); }
BENCHMARK(BM_CopyLoop16M)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- Summary ---------------------------------------------------------------

std::vector<bench::Row> rows(int) {
  using R = const bench::Results&;
  auto c = [](std::string name, std::string key) { return [=](R r) { return r.counter(name, key); }; };
  auto us = [](std::string name) { return [=](R r) { return r.time_ns(name) / 1e3; }; };
  constexpr double nan = NAN;
  return {
      {"1-op function call (x + 1 on [1]), traced", us("BM_Call_OneOp_Traced"), "us/call", false, 2.0,
       "DESIGN target (no torch figure)"},
      {"same op eagerly", us("BM_Call_OneOp_Eager"), "us/call", false, 2.803,
       "Python torch a + 1.0"},
      {"identity function call, traced", us("BM_Call_Identity_Traced"), "us/call", false, nan, ""},
      {"traced 1-op call / eager op",
       [](R r) { return r.time_ns("BM_Call_OneOp_Traced") / r.time_ns("BM_Call_OneOp_Eager"); }, "x",
       false, nan, ""},
      {"plan step, N=100 Adds: time/N", c("BM_Steps_Traced/100", "ns/step"), "ns/step", false, 1800,
       "TorchScript graph, per op (1.8 ms/1000)"},
      {"plan step, N=1000 Adds: time/N", c("BM_Steps_Traced/1000", "ns/step"), "ns/step", false, 1800,
       "TorchScript graph, per op (1.8 ms/1000)"},
      {"plan step, marginal (T(100)-T(1))/99",
       [](R r) { return (r.time_ns("BM_Steps_Traced/100") - r.time_ns("BM_Steps_Traced/1")) / 99; },
       "ns/step", false, 1800, "TorchScript graph, per op"},
      {"same 100 Adds eagerly, per op", c("BM_Steps_Eager/100", "ns/op"), "ns/op", false, 648,
       "LibTorch `x = x + b` chain"},
      {"1000 small ops [16], eager", c("BM_SmallOps/16", "eager_ms"), "ms/call", false, 2.74,
       "Python torch eager"},
      {"1000 small ops [16], traced", c("BM_SmallOps/16", "traced_ms"), "ms/call", false, 1.97,
       "torch.jit.script (best graph variant)"},
      {"1000 small ops [16], eager/traced", c("BM_SmallOps/16", "speedup"), "x", true, 1.39,
       "jit.script speedup over eager"},
      {"  same, eager with std::move, eager", c("BM_SmallOpsMoved/16", "eager_ms"), "ms/call", false,
       2.74, "Python torch eager"},
      {"  same, eager with std::move, eager/traced", c("BM_SmallOpsMoved/16", "speedup"), "x", true,
       1.39, "jit.script speedup over eager"},
      {"1000 small ops [1M], eager", c("BM_SmallOps/1000000", "eager_ms"), "ms/call", false,
       325, "Python torch eager"},
      {"1000 small ops [1M], traced", c("BM_SmallOps/1000000", "traced_ms"), "ms/call",
       false, 328, "torch.jit.script (0.99x)"},
      {"1000 small ops [1M], eager/traced", c("BM_SmallOps/1000000", "speedup"), "x", true,
       0.99, "jit.script speedup over eager"},
      {"  same, eager with std::move, eager", c("BM_SmallOpsMoved/1000000", "eager_ms"),
       "ms/call", false, 325, "Python torch eager"},
      {"  same, eager with std::move, eager/traced",
       c("BM_SmallOpsMoved/1000000", "speedup"), "x", true, 0.99,
       "jit.script speedup over eager"},
      {"tracing 1000 ops: wrap + 1st call", c("BM_TraceCost", "first_call_ms"), "ms", false,
       71.7, "jit.trace(check_trace=False) build+1st call"},
      {"tracing cost per op (1st - 2nd call)/1000", c("BM_TraceCost", "trace_us/op"), "us/op",
       false, 31, "jit.trace(check_trace=False) build, per op"},
      {"break-even calls (trace cost / saving)", c("BM_TraceCost", "break_even_calls"),
       "calls", false, 169, "jit.trace(check_trace=False)"},
      {"a*b+c 16M f32, traced (fused)", [](R r) { return r.counter("BM_MulAdd16M_Traced", "bytes_per_second") / 1e9; },
       "GB/s", true, 5.7, "torch.jit.script a*b+c"},
      {"copy loop 64 MiB (same run)", [](R r) { return r.counter("BM_CopyLoop16M", "bytes_per_second") / 1e9; },
       "GB/s", true, 36.9, "torch y.copy_(a), 2 threads"},
      {"a*b+c traced, share of copy bandwidth",
       [](R r) {
         return 100 * r.counter("BM_MulAdd16M_Traced", "bytes_per_second") / r.counter("BM_CopyLoop16M", "bytes_per_second");
       },
       "%", true, 80, "DESIGN target (>= 80%)"},
      {"graph passes on the 1000-op graph", [](R r) { return r.time_ns("BM_OptimizeCost") / 1e6; }, "ms", false, nan,
       ""},
      {"depthwise 3x3 + bias + relu [16,112,112,32], fused", c("BM_DepthwiseBiasRelu/112/32/1", "fused_ms"),
       "ms/call", false, nan, ""},
      {"  same, unfused/fused", c("BM_DepthwiseBiasRelu/112/32/1", "speedup"), "x", true, nan, ""},
      {"depthwise 3x3 + bias + relu [16,14,14,512], unfused/fused",
       c("BM_DepthwiseBiasRelu/14/512/1", "speedup"), "x", true, nan, ""},
      {"plan step with fusion, N=100 Adds: time/N", c("BM_Steps_Fused/100", "ns/step"), "ns/step", false, 1800,
       "TorchScript graph, per op"},
  };
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "bench_function", {"--benchmark_min_time=0.3"}, rows);
}
