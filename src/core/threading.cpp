// kiln/threading.h: the OpenMP pool's size and wait policy.
#include "kiln/threading.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <omp.h>
#include <unistd.h>

namespace kiln {

namespace {
thread_local int intra_op_threads = 0;
}

void config::set_intra_op_parallelism_threads(int num_threads) {
  if (num_threads < 0)
    throw std::invalid_argument("set_intra_op_parallelism_threads: num_threads must not be negative, got " +
                                std::to_string(num_threads));
  // The pool's size before any call changed it: every core, or OMP_NUM_THREADS.
  static const int default_threads = omp_get_max_threads();
  intra_op_threads = num_threads;
  omp_set_num_threads(num_threads > 0 ? num_threads : default_threads);
}

int config::get_intra_op_parallelism_threads() { return intra_op_threads; }

bool config::wait_policy_is_set() { return std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"); }

void config::adopt_fair_wait_policy(int argc, char** argv) {
  if (config::wait_policy_is_set() || argc < 1) return;
  if (setenv("GOMP_SPINCOUNT", kFairSpinCount, 1) != 0) return;
  std::vector<char*> args(argv, argv + argc);
  args.push_back(nullptr);
  execv("/proc/self/exe", args.data());
  // Not executed again (no /proc, say): go on with libgomp's default, and do
  // not leave a setting in the environment that this process does not have.
  unsetenv("GOMP_SPINCOUNT");
}

}  // namespace kiln
