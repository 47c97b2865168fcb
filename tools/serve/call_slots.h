#pragma once
// At most N model calls at once, granted in arrival order. Dozens of request
// threads calling the model together on a few cores (each call with its own
// OpenMP team) starve some of them for seconds; queued in order, each waits
// its turn (p99 at concurrency 64 on 2 cores: ~2.7 s unlimited).
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kiln::serve {

class CallSlots {
 public:
  explicit CallSlots(int slots) : free_(slots) {}

  class Hold {
   public:
    explicit Hold(CallSlots& slots) : slots_(slots) {
      std::unique_lock lock(slots_.mutex_);
      const uint64_t ticket = slots_.next_ticket_++;
      slots_.cv_.wait(lock, [&] { return ticket == slots_.now_serving_ && slots_.free_ > 0; });
      ++slots_.now_serving_;
      --slots_.free_;
      slots_.cv_.notify_all();  // the next ticket may take another free slot
    }
    ~Hold() {
      {
        std::lock_guard lock(slots_.mutex_);
        ++slots_.free_;
      }
      slots_.cv_.notify_all();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    CallSlots& slots_;
  };

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int free_;
  uint64_t next_ticket_ = 0, now_serving_ = 0;
};

}  // namespace kiln::serve
