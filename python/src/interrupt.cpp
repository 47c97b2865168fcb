// Ctrl-C during a graph call (bindings.h: GraphCall). Python only notices a
// SIGINT between bytecodes, and a graph call runs none until it returns, so
// a handler of Kiln's sits in front of Python's: it sets a flag, which the
// main thread's graph calls read between ops, then calls Python's handler,
// which records the signal as always. It is installed once and stays.
// Python's signal.signal() replaces it (Jupyter does so for every cell), and
// Kiln puts it back while SIGINT has Python's default handler again. Looking
// costs a syscall (sigaction, as much as a small graph call), so a call
// looks only when 50 ms have passed since the last look: a
// long call begun within 50 ms of a handler change after another call is not
// cancelled, and raises its KeyboardInterrupt when it returns, as before.
#include <signal.h>

#include <atomic>
#include <chrono>

#include "bindings.h"

namespace kiln::python {

namespace {

static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
std::atomic<bool> interrupted{false};
// The handler ours calls after setting the flag: Python's.
struct sigaction python_handler {};
unsigned long main_thread = 0;
// Graph calls of the main thread in progress (a py_function's Python code
// may call another function inside one): only the outermost checks.
int main_depth = 0;
PyObject* default_int_handler = nullptr;  // signal.default_int_handler
PyObject* getsignal = nullptr;            // signal.getsignal
constexpr std::chrono::milliseconds kLookEvery{50};
std::chrono::steady_clock::time_point next_look{};
bool in_place = false;  // what the last look found

void on_sigint(int sig, siginfo_t* info, void* context) {
  interrupted.store(true, std::memory_order_relaxed);
  if (python_handler.sa_flags & SA_SIGINFO) python_handler.sa_sigaction(sig, info, context);
  else python_handler.sa_handler(sig);
}

// Whether SIGINT raises KeyboardInterrupt now. A handler of the user's own
// (a "stop after this epoch" flag) is left alone: it runs when the call
// returns, as after any long C call, and nothing is cancelled under it.
bool sigint_raises() {
  PyObject* h = PyObject_CallFunction(getsignal, "i", SIGINT);
  if (!h) throw py::error_already_set();
  const bool raises = h == default_int_handler;
  Py_DECREF(h);
  return raises;
}

// Whether Kiln's handler is in place, putting it there when SIGINT has
// Python's default handler.
bool handler_in_place() {
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) != 0) return false;
  if ((current.sa_flags & SA_SIGINFO) && current.sa_sigaction == on_sigint) return true;
  if (current.sa_handler == SIG_DFL || current.sa_handler == SIG_IGN || !sigint_raises()) return false;
  python_handler = current;
  struct sigaction ours {};
  ours.sa_sigaction = on_sigint;
  ours.sa_mask = current.sa_mask;
  ours.sa_flags = (current.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
  return sigaction(SIGINT, &ours, nullptr) == 0;
}

}  // namespace

GraphCall::GraphCall(std::optional<double> timeout) {
  // CancellationScope refuses a negative or NaN timeout (InvalidArgument).
  if (timeout) cancellation_.timeout = std::chrono::duration<double>(*timeout);
  if (PyThread_get_thread_ident() != main_thread) return;
  counted_ = true;
  outermost_ = main_depth == 0;
  if (outermost_) {
    // A Ctrl-C from before the call is Python's to raise, now rather than
    // after the call; one from now on cancels it.
    interrupted.store(false, std::memory_order_relaxed);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (const auto now = std::chrono::steady_clock::now(); now >= next_look) {
      in_place = handler_in_place();
      next_look = now + kLookEvery;
    }
    if (in_place) cancellation_.cancel = &interrupted;
  }
  ++main_depth;
}

GraphCall::~GraphCall() {
  if (counted_) --main_depth;
}

void GraphCall::raise_pending() {
  // Python has recorded the Ctrl-C (our handler called its, or a
  // py_function's KeyboardInterrupt set it again): its handler raises
  // KeyboardInterrupt here, in place of the call's CancelledError.
  if (outermost_ && PyErr_CheckSignals() != 0) throw py::error_already_set();
}

void bind_interrupt(py::module_&) {
  py::module_ signal = py::module_::import("signal");
  // Kept for the life of the process: the module outlives any call.
  default_int_handler = py::object(signal.attr("default_int_handler")).release().ptr();
  getsignal = py::object(signal.attr("getsignal")).release().ptr();
  main_thread = py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
}

}  // namespace kiln::python
