#pragma once
// At most N model calls at once, granted in arrival order. Dozens of request
// threads calling the model together on a few cores (each call with its own
// OpenMP team) slow each other down; queued in order, each waits its turn.
// A freed slot is handed to the first waiter alone (no thundering herd).
#include <condition_variable>
#include <deque>
#include <mutex>

namespace kiln::serve {

class CallSlots {
 public:
  explicit CallSlots(int slots) : free_(slots) {}

  class Hold {
   public:
    explicit Hold(CallSlots& slots) : slots_(slots) {
      std::unique_lock lock(slots_.mutex_);
      if (slots_.free_ > 0 && slots_.waiters_.empty()) {
        --slots_.free_;
        return;
      }
      Waiter me;
      slots_.waiters_.push_back(&me);
      me.cv.wait(lock, [&] { return me.granted; });
    }
    ~Hold() {
      std::lock_guard lock(slots_.mutex_);
      if (slots_.waiters_.empty()) {
        ++slots_.free_;
        return;
      }
      Waiter* next = slots_.waiters_.front();
      slots_.waiters_.pop_front();
      next->granted = true;  // the slot passes to it directly
      next->cv.notify_one();
    }
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;

   private:
    CallSlots& slots_;
  };

 private:
  struct Waiter {
    std::condition_variable cv;
    bool granted = false;
  };
  std::mutex mutex_;
  int free_;
  std::deque<Waiter*> waiters_;
};

}  // namespace kiln::serve
