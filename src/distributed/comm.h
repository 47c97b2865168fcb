#pragma once
// The process's communicator: the world (rank, size) and the communication
// thread, the only thread that calls MPI (MPI_THREAD_FUNNELED: it also calls
// MPI_Init_thread). Ops hand it Work and wait for it where their result is
// needed (OpDef::start / finish). Before init() (and without MPI) the world
// is one process and Work runs at once on the caller's thread.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "distributed/transport.h"
#include "distributed/work.h"

namespace kiln::distributed {

class Comm {
 public:
  static Comm& get();

  void init(const distributed::InitOptions& options);
  void finalize();
  // init() was called, finalize() not yet (true in a build without MPI too).
  bool initialized() const { return initialized_.load(std::memory_order_acquire); }
  const transport::World& world() const { return world_; }
  double timeout_seconds() const { return timeout_; }

  // Work objects are recycled (a warm step allocates none).
  Work* acquire();
  // Hands `w` to the communication thread, or runs it now in a world of one.
  void submit(Work* w);
  // Waits for `w`, recycles it, and throws its error (FailedPrecondition).
  void wait_and_release(Work* w);
  distributed::Stats stats() const;

 private:
  enum class State { Local, Running, Finalized };
  void release(Work* w);
  void loop();
  // The queued work, in arrival order (empty when `wait` is false and none).
  Work* take(bool wait);

  std::atomic<State> state_{State::Local};
  std::atomic<bool> initialized_{false};
  transport::World world_;
  double timeout_ = 300;
  std::thread thread_;
  std::mutex init_mutex_;

  // The queue (a FIFO through Work::next) and the free list.
  std::mutex mutex_;
  std::condition_variable wake_;
  Work* head_ = nullptr;
  Work* tail_ = nullptr;
  Work* free_ = nullptr;

  std::atomic<int64_t> collectives_{0}, bytes_{0}, wait_nanoseconds_{0};
};

}  // namespace kiln::distributed
