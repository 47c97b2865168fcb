#pragma once
// Shared by the benchmark programs: thread setup, default flags, interleaved
// timing, and the closing summary table that puts each Kiln figure beside the
// PyTorch figure of the team's peer report, quoted in bench/README.md (same
// kind of machine).
#include <benchmark/benchmark.h>
#include <omp.h>

#include "kiln/threading.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

// Calls `a`, then `b`, once each per iteration (both see the same load) and
// sets the counters `a_us` and `b_us`, the fastest call of each in µs, and
// `ratio`, a's over b's. A call's result (if any) is kept from the optimizer
// and destroyed after its time is taken.
template <class A, class B>
void fastest_of_alternating(benchmark::State& st, const char* a_us, A&& a, const char* b_us, B&& b,
                            const char* ratio = "speedup") {
  double best[2] = {1e300, 1e300};
  auto time = [](auto& call, double& fastest) {
    const auto t0 = Clock::now();
    if constexpr (std::is_void_v<decltype(call())>) {
      call();
      fastest = std::min(fastest, seconds_since(t0));
    } else {
      auto result = call();
      benchmark::DoNotOptimize(result);
      fastest = std::min(fastest, seconds_since(t0));
    }
  };
  for (auto _ : st) {
    time(a, best[0]);
    time(b, best[1]);
  }
  st.counters[a_us] = best[0] * 1e6;
  st.counters[b_us] = best[1] * 1e6;
  st.counters[ratio] = best[0] / best[1];
}

// Threads for oneDNN and Kiln's parallel_for (one OpenMP pool). The peer
// figures were taken with torch.set_num_threads(2); KILN_BENCH_THREADS
// changes it.
inline int configure_threads() {
  int threads = 2;
  if (const char* env = std::getenv("KILN_BENCH_THREADS")) threads = std::max(1, std::atoi(env));
  omp_set_num_threads(threads);
  return threads;
}

// ---- Memory-bandwidth references -----------------------------------------

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;
inline AlignedFloats aligned_floats(int64_t n) {
  return AlignedFloats(static_cast<float*>(std::aligned_alloc(64, static_cast<std::size_t>(n) * sizeof(float))));
}

// A plain parallel copy loop over n floats, compiled like Kiln's kernels: the
// bandwidth an elementwise op can hope for. Buffers are first touched by the
// threads that copy them.
inline void copy_loop(benchmark::State& st, int64_t n) {
  AlignedFloats src = aligned_floats(n), dst = aligned_floats(n);
  float* out = dst.get();
  const float* in = src.get();
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) src[i] = 1, out[i] = 0;
  for (auto _ : st) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) out[i] = in[i];
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(st.iterations() * n * 8);
}

// ---- Results --------------------------------------------------------------

// One measured figure: real time per iteration in ns and the counters.
struct Measured {
  double real_ns = NAN;
  std::map<std::string, double> counters;
};

// Figures are looked up by the benchmark's name and arguments only
// ("BM_MatMul/256"): the "/iterations:N", "/real_time" and "/manual_time"
// parts that options add to a run's name are dropped.
class Results {
 public:
  void add(const std::string& run_name, Measured m) { runs_[base_name(run_name)] = std::move(m); }
  static std::string base_name(std::string name) {
    for (const char* part : {"/iterations:", "/real_time", "/manual_time"}) {
      std::size_t at = name.find(part);
      if (at == std::string::npos) continue;
      std::size_t end = name.find('/', at + 1);
      name.erase(at, end == std::string::npos ? std::string::npos : end - at);
    }
    return name;
  }
  const Measured* find(const std::string& name) const {
    auto it = runs_.find(name);
    return it == runs_.end() ? nullptr : &it->second;
  }
  double time_ns(const std::string& name) const {
    const Measured* m = find(name);
    return m ? m->real_ns : NAN;
  }
  double counter(const std::string& name, const std::string& key) const {
    const Measured* m = find(name);
    if (!m) return NAN;
    auto it = m->counters.find(key);
    return it == m->counters.end() ? NAN : it->second;
  }
  bool empty() const { return runs_.empty(); }

 private:
  std::map<std::string, Measured> runs_;
};

// Prints as the console reporter does and keeps every figure for the summary.
// With --benchmark_repetitions the median aggregate wins over single runs.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& reports) override {
    for (const Run& r : reports) {
      if (r.error_occurred) continue;
      bool is_median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.run_type == Run::RT_Aggregate && !is_median) continue;
      std::string name = r.run_name.str();
      if (!is_median && medians_.count(name)) continue;
      if (is_median) medians_.insert({name, true});  // the median outranks single runs
      Measured m;
      m.real_ns = r.GetAdjustedRealTime() * 1e9 / benchmark::GetTimeUnitMultiplier(r.time_unit);
      for (const auto& [key, c] : r.counters) m.counters[key] = c.value;
      results.add(name, std::move(m));
    }
    ConsoleReporter::ReportRuns(reports);
  }
  Results results;

 private:
  std::map<std::string, bool> medians_;
};

// ---- Summary --------------------------------------------------------------

struct Row {
  std::string figure;
  std::function<double(const Results&)> value;  // NaN: not measured in this run
  std::string unit;
  bool higher_is_better = false;
  double peer = NAN;  // NaN: no peer figure
  std::string peer_label;
};

inline void print_summary(const std::string& title, const std::vector<Row>& rows, const Results& r,
                          int threads) {
  std::printf("\n==== %s: summary (%d threads; peer = PyTorch 1.13.1 on a 2-core Zen 4, "
              "figures in bench/README.md) ====\n",
              title.c_str(), threads);
  std::printf("%-46s %12s %-8s | %12s %-46s %s\n", "figure", "Kiln", "unit", "peer", "peer figure",
              "Kiln vs peer");
  for (const Row& row : rows) {
    double v = row.value(r);
    char value[32], peer[32], ratio[48];
    if (std::isnan(v)) std::snprintf(value, sizeof value, "n/a");
    else std::snprintf(value, sizeof value, "%.4g", v);
    if (std::isnan(row.peer)) std::snprintf(peer, sizeof peer, "-");
    else std::snprintf(peer, sizeof peer, "%.4g", row.peer);
    if (std::isnan(v) || std::isnan(row.peer) || v <= 0 || row.peer <= 0) {
      std::snprintf(ratio, sizeof ratio, "-");
    } else {
      double better = row.higher_is_better ? v / row.peer : row.peer / v;
      std::snprintf(ratio, sizeof ratio, "%.2fx %s", better >= 1 ? better : 1 / better,
                    better >= 1 ? "better" : "worse");
    }
    std::printf("%-46s %12s %-8s | %12s %-46s %s\n", row.figure.c_str(), value, row.unit.c_str(), peer,
                row.peer_label.c_str(), ratio);
  }
  std::fflush(stdout);
}

// Runs the registered benchmarks with `defaults` appended for flags the
// command line does not set, then prints the summary (rows may pick their
// peer figure by thread count).
inline int run_main(int argc, char** argv, const std::string& title,
                    const std::vector<std::string>& defaults,
                    const std::function<std::vector<Row>(int threads)>& make_rows) {
  // What a user's program gets: Kiln's wait policy unless the environment sets one.
  kiln::config::adopt_fair_wait_policy(argc, argv);
  std::vector<std::string> extra;
  for (const std::string& d : defaults) {
    std::string flag = d.substr(0, d.find('='));
    bool given = false;
    for (int i = 1; i < argc; ++i)
      if (std::strncmp(argv[i], flag.c_str(), flag.size()) == 0) given = true;
    if (!given) extra.push_back(d);
  }
  std::vector<char*> args(argv, argv + argc);
  for (std::string& e : extra) args.push_back(e.data());
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  int threads = configure_threads();
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (!reporter.results.empty()) print_summary(title, make_rows(threads), reporter.results, threads);
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench
