// The allreduce inside a traced step against a bare MPI_Allreduce of the
// same bytes, in the same run (target: at least 90%; docs/design-notes.md, "Data-parallel training over MPI").
//
//   mpirun -np 2 ./build/bench/bench_allreduce [--runs N]
//
// In-step: a kiln::function whose graph is average_gradients (sum) of one
// float32 gradient: the op hands the tensor to the communication thread,
// which reduces it with MPI_Iallreduce, polling, and the caller waits on it;
// timed on the calling thread, so it includes dispatch, the hand-off and the
// copy out. Bare: MPI_Allreduce from a send to a receive buffer, timed around
// the call alone on the communication thread (the only thread that may call
// MPI). Each size alternates the two after a barrier; medians of rank 0.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "distributed/comm.h"
#include "kiln/distributed.h"
#include "kiln/kiln.h"

namespace dist = kiln::distributed;
namespace dd = kiln::distributed;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Bare {
  const float* send;
  float* recv;
  int count;
  double ms;
};

// On the communication thread.
void bare_allreduce(void* argument) {
  auto* b = static_cast<Bare*>(argument);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = now_ms();
  MPI_Allreduce(b->send, b->recv, b->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  b->ms = now_ms() - t0;
}

double run_bare(Bare& b) {
  dd::Comm& comm = dd::Comm::get();
  dd::Work* w = comm.acquire();
  w->kind = dd::Kind::Call;
  w->call = bare_allreduce;
  w->argument = &b;
  comm.submit(w);
  comm.wait_and_release(w);
  return b.ms;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 21;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--runs") runs = std::max(1, std::atoi(argv[i + 1]));
  dist::init();
  const bool root = dist::rank() == 0;
  if (root)
    fmt::print("allreduce of float32, {} ranks, median of {} runs (rank 0)\n{:>10} {:>12} {:>12} {:>10} {:>10}\n",
               dist::size(), runs, "bytes", "bare ms", "in-step ms", "bare GB/s", "in-step %");
  auto step = kiln::function([](const kiln::Tensor& g) {
    return dist::average_gradients({g}, {.op = dist::Reduction::Sum})[0];
  });
  for (int64_t bytes : {int64_t(4) << 10, int64_t(256) << 10, int64_t(4) << 20, int64_t(25) << 20, int64_t(100) << 20}) {
    const int64_t n = bytes / 4;
    kiln::Tensor x = kiln::fill(kiln::Shape{n}, 1.f);
    std::vector<float> recv(static_cast<std::size_t>(n));
    Bare bare{x.data<float>(), recv.data(), static_cast<int>(n), 0};
    (void)step(x).data<float>();  // trace, warm up
    run_bare(bare);
    std::vector<double> bare_ms, step_ms;
    for (int r = 0; r < runs; ++r) {
      bare_ms.push_back(run_bare(bare));
      dist::barrier();
      double t0 = now_ms();
      kiln::Tensor y = step(x);
      step_ms.push_back(now_ms() - t0);
      if (y.data<float>()[n - 1] != static_cast<float>(dist::size())) {
        fmt::print(stderr, "wrong sum\n");
        return 1;
      }
    }
    double b = median(bare_ms), s = median(step_ms);
    if (root) fmt::print("{:>10} {:>12.3f} {:>12.3f} {:>10.2f} {:>9.0f}%\n", bytes, b, s, bytes / b / 1e6, 100 * b / s);
  }
  dist::finalize();
  return 0;
}
