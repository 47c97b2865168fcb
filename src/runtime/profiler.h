#pragma once
// The profiler's recording side (the public API is include/kiln/profiler.h).
// Dispatch records eager ops, the executor records graph steps and function
// runs; each thread appends to a buffer of its own, so recording takes no
// shared lock. When off, a caller pays `on()`: one relaxed load.
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "kiln/tensor.h"

namespace kiln::runtime::profiling {

extern std::atomic<bool> enabled;
inline bool on() { return enabled.load(std::memory_order_relaxed); }

enum class Kind : uint8_t { Eager, GraphOp, Function };

// One event from begin() to its end_*(); events begun before it ends are its
// children (their time is not its self time). An event abandoned by an
// exception is dropped by the destructor.
class EventScope {
 public:
  EventScope();
  ~EventScope();
  EventScope(const EventScope&) = delete;
  EventScope& operator=(const EventScope&) = delete;

  // `node` and `function` must stay alive while the profile is recorded:
  // the executor passes the graph that owns them as `keep_alive` once per run.
  void end_op(Kind kind, std::string_view op, const std::string* node, const std::string* function,
              const SourceLocation& loc, std::span<const Tensor> outputs);
  void end_function(const std::string* function, std::shared_ptr<const void> keep_alive);

 private:
  int64_t start_;
  bool ended_ = false;
};

}  // namespace kiln::runtime::profiling
