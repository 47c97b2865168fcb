// Recording for kiln::profiler: per-thread event buffers, self time by a
// per-thread stack of open events, start/stop.
#include "runtime/profiler.h"

#include <fmt/format.h>

#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <chrono>
#include <mutex>
#include <vector>

#include "core/allocator.h"
#include "kiln/detail/small_vector.h"
#include "kiln/error.h"
#include "kiln/profiler.h"

namespace kiln::runtime::profiling {

std::atomic<bool> enabled{false};

namespace {

struct RawEvent {
  Kind kind;
  std::string_view op;
  const std::string* node;
  const std::string* function;
  SourceLocation loc;
  detail::SmallVector<Shape, 2> shapes;
  int64_t start, duration, self, bytes;
};

// One thread's events. Only its thread appends; stop() takes them under the
// mutex, which is therefore never contended while recording.
struct ThreadBuffer {
  std::mutex mutex;
  std::vector<RawEvent> events;
  std::vector<std::shared_ptr<const void>> keep_alive;
  // What the children of each open event on this thread took, innermost last.
  struct Open {
    int64_t start_bytes = 0, child_ns = 0, child_bytes = 0;
  };
  std::vector<Open> open;
};

struct Registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  std::atomic<int64_t> origin_ns{0};
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: threads may record during exit
  return *r;
}

// Set by start() from KILN_PROFILER_CLOCK: the process's CPU time instead of
// the wall clock.
std::atomic<bool> cpu_clock{false};

int64_t clock_ns() {
  if (cpu_clock.load(std::memory_order_relaxed)) {
    timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ThreadBuffer& thread_buffer() {
  thread_local std::shared_ptr<ThreadBuffer> buffer = [] {
    auto b = std::make_shared<ThreadBuffer>();
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.buffers.push_back(b);
    return b;
  }();
  return *buffer;
}

// Closes the innermost open event: its duration, self time and the tensor
// bytes it allocated itself (its children's not counted).
void close(int64_t start, int64_t& duration, int64_t& self, int64_t& self_bytes) {
  ThreadBuffer& b = thread_buffer();
  duration = clock_ns() - start;
  int64_t bytes = core::bytes_allocated_by_this_thread() - b.open.back().start_bytes;
  self = duration - b.open.back().child_ns;
  self_bytes = bytes - b.open.back().child_bytes;
  b.open.pop_back();
  if (!b.open.empty()) {
    b.open.back().child_ns += duration;
    b.open.back().child_bytes += bytes;
  }
}

void append(RawEvent&& e, std::shared_ptr<const void> keep) {
  ThreadBuffer& b = thread_buffer();
  e.start -= registry().origin_ns.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(b.mutex);
  if (keep && (b.keep_alive.empty() || b.keep_alive.back() != keep)) b.keep_alive.push_back(std::move(keep));
  b.events.push_back(std::move(e));
}

}  // namespace

EventScope::EventScope() {
  thread_buffer().open.push_back({core::bytes_allocated_by_this_thread(), 0, 0});
  start_ = clock_ns();
}

EventScope::~EventScope() {
  if (ended_) return;
  auto& open = thread_buffer().open;
  if (!open.empty()) open.pop_back();
}

void EventScope::end_op(Kind kind, std::string_view op, const std::string* node, const std::string* function,
                        const SourceLocation& loc, std::span<const Tensor> outputs) {
  ended_ = true;
  RawEvent e{kind, op, node, function, loc, {}, start_, 0, 0, 0};
  close(start_, e.duration, e.self, e.bytes);
  for (const Tensor& t : outputs)
    if (t.defined()) e.shapes.push_back(t.shape());
  append(std::move(e), nullptr);
}

void EventScope::end_function(const std::string* function, std::shared_ptr<const void> keep_alive) {
  ended_ = true;
  RawEvent e{Kind::Function, *function, nullptr, function, SourceLocation(), {}, start_, 0, 0, 0};
  close(start_, e.duration, e.self, e.bytes);
  append(std::move(e), std::move(keep_alive));
}

}  // namespace kiln::runtime::profiling

namespace kiln::profiler {

namespace {
using runtime::profiling::enabled;
using runtime::profiling::registry;
std::mutex session_mutex;  // start and stop, one at a time

Event public_event(const runtime::profiling::RawEvent& raw) {
  Event e;
  e.kind = static_cast<Event::Kind>(raw.kind);
  e.op = std::string(raw.op);
  if (raw.node) e.node = *raw.node;
  if (raw.function) e.function = *raw.function;
  if (raw.loc.line() > 0) {
    e.file = raw.loc.file_name();
    e.line = static_cast<int>(raw.loc.line());
  }
  e.output_shapes.assign(raw.shapes.begin(), raw.shapes.end());
  e.start_ns = raw.start;
  e.duration_ns = raw.duration;
  e.self_ns = raw.self;
  e.bytes_allocated = raw.bytes;
  return e;
}

}  // namespace

bool active() { return enabled.load(std::memory_order_relaxed); }

void start() {
  std::lock_guard<std::mutex> session(session_mutex);
  if (enabled.load()) throw FailedPrecondition("kiln::profiler::start: the profiler is already on");
  const char* clock = std::getenv("KILN_PROFILER_CLOCK");
  const std::string_view clock_name = clock ? clock : "";
  if (clock_name != "" && clock_name != "wall" && clock_name != "cpu")
    throw InvalidArgument(fmt::format(
        "kiln::profiler::start: KILN_PROFILER_CLOCK must be \"wall\" or \"cpu\", got \"{}\"", clock_name));
  runtime::profiling::cpu_clock.store(clock_name == "cpu");
  auto& r = registry();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    // Buffers of threads that have exited (only the registry holds them) go.
    std::erase_if(r.buffers,
                  [](const std::shared_ptr<runtime::profiling::ThreadBuffer>& b) { return b.use_count() == 1; });
    for (auto& b : r.buffers) {
      std::lock_guard<std::mutex> buffer_lock(b->mutex);
      b->events.clear();
      b->keep_alive.clear();
    }
  }
  r.origin_ns.store(runtime::profiling::clock_ns());
  enabled.store(true);
}

Profile stop() {
  std::lock_guard<std::mutex> session(session_mutex);
  if (!enabled.load()) throw FailedPrecondition("kiln::profiler::stop: the profiler is not on (call start() first)");
  enabled.store(false);
  auto& r = registry();
  // Converted under each buffer's lock and cleared, so a buffer keeps its
  // capacity for the next session (no page faults while recording).
  std::vector<std::vector<Event>> per_thread;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    for (auto& b : r.buffers) {
      std::lock_guard<std::mutex> buffer_lock(b->mutex);
      if (b->events.empty()) continue;
      std::vector<Event>& out = per_thread.emplace_back();
      out.reserve(b->events.size());
      for (const auto& raw : b->events) out.push_back(public_event(raw));
      b->events.clear();
      b->keep_alive.clear();
    }
  }
  // Threads are numbered in order of their first event.
  std::sort(per_thread.begin(), per_thread.end(),
            [](const auto& a, const auto& b) { return a.front().start_ns < b.front().start_ns; });
  std::vector<Event> events;
  for (std::size_t t = 0; t < per_thread.size(); ++t) {
    for (Event& e : per_thread[t]) {
      e.thread = static_cast<int>(t);
      events.push_back(std::move(e));
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.start_ns < b.start_ns; });
  return Profile(std::move(events));
}

Session::~Session() {
  if (!stopped_ && active()) stop();
}

Profile Session::stop() {
  stopped_ = true;
  return profiler::stop();
}

}  // namespace kiln::profiler
