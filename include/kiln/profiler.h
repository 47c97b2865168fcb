#pragma once
// kiln::profiler: where the time goes, op by op, in eager code and inside
// graphs (docs/design-notes.md, "The profiler").
//
//   kiln::profiler::start();
//   for (int i = 0; i < 20; ++i) train_step(x, y);
//   kiln::profiler::Profile p = kiln::profiler::stop();
//   std::cout << p.table();                 // ops sorted by self time
//   p.write_chrome_trace("step.trace.json");  // open in Perfetto or chrome://tracing
//
// Every op run while the profiler is on is recorded: its name, the graph node
// and function it ran in (or eager), the user's source line, its output
// shapes, its start and duration, the tensor bytes it allocated, and its
// thread. Each run of a traced function is an event too, so a trace viewer
// shows ops nested in the calls that ran them. When off, an op pays one
// relaxed atomic load.
//
// Times are wall-clock time, or with KILN_PROFILER_CLOCK=cpu (read by start())
// the process's CPU time, all threads together: on a machine shared with other
// work, one thread's ops then cost what they compute, not what the scheduler
// made them wait (run with one thread, OMP_NUM_THREADS=1, to read it per op).
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/shape.h"

namespace kiln::profiler {

struct Event {
  enum class Kind { Eager, GraphOp, Function };
  Kind kind = Kind::Eager;
  std::string op;        // "Conv2D"; for Kind::Function the function's name
  std::string node;      // the graph node ("conv2d_1"); empty when eager
  std::string function;  // the graph the op ran in; empty when eager
  std::string file;      // the user's source line that made the op (or node), when known
  int line = 0;
  std::vector<Shape> output_shapes;
  int64_t start_ns = 0;     // since start()
  int64_t duration_ns = 0;  // wall time, including ops run inside (If, While, Call)
  int64_t self_ns = 0;      // duration minus the events nested in it on the same thread
  // Tensor bytes (buffer headers included) this op asked Kiln's allocator for,
  // outputs and temporaries, not counting events nested in it; 0 for an
  // output written in place or into a graph's preplanned arena.
  int64_t bytes_allocated = 0;
  int thread = 0;           // 0, 1, ... in order of first event
};

class Profile {
 public:
  Profile() = default;
  explicit Profile(std::vector<Event> events) : events_(std::move(events)) {}
  // In start order.
  const std::vector<Event>& events() const { return events_; }
  // One row per op name (eager and in graphs apart), sorted by total self
  // time: calls, self ms, share, mean us, bytes allocated. Functions are
  // rows of their own (their self time is the executor's overhead).
  std::string table(int max_rows = 25) const;
  // Chrome's trace-event JSON ("X" events, microseconds), which Perfetto and
  // chrome://tracing open. Throws NotFound / Internal when it cannot write.
  void write_chrome_trace(const std::string& path) const;
  std::string chrome_trace_json() const;

 private:
  std::vector<Event> events_;
};

// Starts recording (clearing what an earlier start recorded). Throws
// FailedPrecondition when already on.
void start();
// Stops recording and returns what was recorded. Throws FailedPrecondition
// when not on.
Profile stop();
bool active();

// start() for its lifetime; stop() gives the profile (else the destructor stops).
class Session {
 public:
  Session() { start(); }
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Profile stop();

 private:
  bool stopped_ = false;
};

}  // namespace kiln::profiler
