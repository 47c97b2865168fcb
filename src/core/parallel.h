#pragma once
// One thread pool for everything: oneDNN's OpenMP runtime. Our kernels share
// it through parallel_for; small ranges stay on the calling thread.
#include <algorithm>
#include <cstdint>

#include <omp.h>

namespace kiln::core {

inline constexpr int64_t kParallelGrain = 32768;

// Calls fn(begin, end) over [0, n) in chunks of at least `grain` elements.
template <class F>
void parallel_for(int64_t n, F&& fn, int64_t grain = kParallelGrain) {
  if (n <= grain || omp_in_parallel() || omp_get_max_threads() == 1) {
    if (n > 0) fn(int64_t(0), n);
    return;
  }
  int64_t max_chunks = (n + grain - 1) / grain;
  int threads = static_cast<int>(std::min<int64_t>(omp_get_max_threads(), max_chunks));
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num();
    int nt = omp_get_num_threads();
    int64_t chunk = (n + nt - 1) / nt;
    int64_t begin = t * chunk;
    int64_t end = std::min<int64_t>(n, begin + chunk);
    if (begin < end) fn(begin, end);
  }
}

// Runs fn(thread, threads) once on each thread of a team of up to
// `max_threads` (the calling thread alone when nested or single-threaded),
// for kernels whose threads meet at `#pragma omp barrier` between phases.
// With threads == 1 fn must not reach a barrier: inside another region it
// would bind to that region's team.
template <class F>
void parallel_team(int max_threads, F&& fn) {
  const int threads = std::min(max_threads, omp_in_parallel() ? 1 : omp_get_max_threads());
  if (threads <= 1) {
    fn(0, 1);
    return;
  }
#pragma omp parallel num_threads(threads)
  fn(omp_get_thread_num(), omp_get_num_threads());
}

}  // namespace kiln::core
