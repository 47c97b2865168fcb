#pragma once
// Other processes that take cores, for the contention benchmarks: N children
// that spin, stopped (SIGSTOP) and resumed (SIGCONT) between samples, so that
// one run alternates quiet and busy steps under the same machine load.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <vector>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {

class BusyCores {
 public:
  explicit BusyCores(int n) {
    for (int i = 0; i < n; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        // The child spins on one core; it does nothing that is unsafe after
        // fork() in a process with threads.
        volatile unsigned long spin = 0;
        for (;;) spin = spin + 1;
      }
      if (pid > 0) {
        kill(pid, SIGSTOP);
        children_.push_back(pid);
      }
    }
  }
  ~BusyCores() {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  BusyCores(const BusyCores&) = delete;
  BusyCores& operator=(const BusyCores&) = delete;

  // Starts or stops the spinning; a start waits a scheduler tick so that the
  // children hold their cores when the caller's next sample begins.
  void set_busy(bool busy) {
    for (pid_t pid : children_) kill(pid, busy ? SIGCONT : SIGSTOP);
    if (busy) std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  int size() const { return static_cast<int>(children_.size()); }

 private:
  std::vector<pid_t> children_;
};

// The busy processes a contention benchmark starts: KILN_BENCH_BUSY, else half
// the cores (one on two cores).
inline int busy_core_count() {
  if (const char* env = std::getenv("KILN_BENCH_BUSY")) return std::max(0, std::atoi(env));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / 2);
}

}  // namespace bench
