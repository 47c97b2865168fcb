#pragma once
// Bounding a graph call: a deadline, or a flag another thread sets. A hostile
// model (an ONNX Loop with no trip count, or 2^62 of them) would otherwise
// run forever.
//
//   auto model = kiln::onnx::import_model("m.onnx");
//   model(inputs, {.timeout = std::chrono::seconds(2)});  // or, for any calls:
//   {
//     kiln::CancellationScope scope({.timeout = std::chrono::milliseconds(500)});
//     f(x);  // a kiln::function, a loaded signature...
//   }
//
// Graph calls made on this thread while a scope lives check it between ops
// (nested graphs included) and between While iterations, and throw
// DeadlineExceeded once the timeout has passed, or Cancelled once `*cancel`
// is true. An op already running finishes first (a check never interrupts a
// kernel), so a call overruns by at most one op. Eager ops and graphs that
// other threads run (a dataset's parallel map) are not checked. Without a
// scope a check costs one thread-local load; with one, a clock read per op.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "kiln/error.h"

namespace kiln {

// A call ran past its deadline: TF's DeadlineExceededError.
class DeadlineExceeded : public Error { public: using Error::Error; };
// A call was stopped on request (the flag): TF's CancelledError.
class Cancelled : public Error { public: using Error::Error; };

struct Cancellation {
  // How long the calls may run, from when the scope starts (none: no limit).
  std::optional<std::chrono::duration<double>> timeout;
  // Set to true from any thread to stop the calls (read relaxed, once per op).
  const std::atomic<bool>* cancel = nullptr;
};

// Applies `Cancellation` to the graph calls of this thread for the scope's
// lifetime. Scopes nest: an inner one cannot extend an outer one's deadline,
// and every enclosing flag still counts.
class CancellationScope {
 public:
  explicit CancellationScope(const Cancellation& cancellation);
  ~CancellationScope();
  CancellationScope(const CancellationScope&) = delete;
  CancellationScope& operator=(const CancellationScope&) = delete;

  // Whether this scope or an enclosing one says stop (the executor asks
  // before each op), and the error that says why, naming `where` (the op
  // that was about to run).
  bool should_stop() const;
  [[noreturn]] void throw_stop(const std::string& where) const;

 private:
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  std::chrono::duration<double> timeout_{};
  const std::atomic<bool>* cancel_;
  const CancellationScope* outer_;
};

namespace detail {
// The innermost scope of this thread, or nullptr.
inline thread_local const CancellationScope* current_cancellation = nullptr;
}  // namespace detail

}  // namespace kiln
