#include "distributed/comm.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <future>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "core/dtype_switch.h"
#include "core/tensor_impl.h"

namespace kiln::distributed {

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Allreduce: return "allreduce";
    case Kind::Broadcast: return "broadcast";
    case Kind::Reduce: return "reduce";
    case Kind::Allgather: return "allgather";
    case Kind::Barrier: return "barrier";
    case Kind::Finalize: return "finalize";
    case Kind::Call: return "call";
  }
  return "?";
}

namespace {

int64_t elements(const detail::SmallVector<Tensor, 4>& ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += t.size();
  return n;
}

std::size_t bytes_of(const Tensor& t) { return static_cast<std::size_t>(t.size()) * dtype_size(t.dtype()); }

void copy_into(const Tensor& from, const Tensor& to) {
  if (std::size_t n = bytes_of(from)) std::memcpy(core::raw_data(to), core::raw_data(from), n);
}

// The mean: the sum divided by the number of ranks, in the tensor's type
// (integers truncate toward zero, as kiln::mean's do).
void divide(void* data, int64_t n, DType dtype, int size) {
  core::visit_numeric(dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      T* p = static_cast<T*>(data);
      const T k = static_cast<T>(size);
      for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(p[i] / k);
    }
  });
}

// "allreduce(mean) float32 (3, 4)": a lone collective, as ranks compare it.
std::string describe_lone(const Work& w) {
  std::string s = kind_name(w.kind);
  if (w.kind == Kind::Allreduce) s += fmt::format("({})", distributed::reduction_name(w.op));
  if (w.kind == Kind::Broadcast || w.kind == Kind::Reduce) s += fmt::format("(root {})", w.root);
  for (const Tensor& t : w.inputs) s += fmt::format(" {} {}", dtype_name(t.dtype()), t.shape().to_string());
  return s;
}

uint64_t fingerprint_of(const Work& w) {
  if (w.fingerprint) return w.fingerprint;
  std::string s = describe_lone(w);
  return fnv1a(s.data(), s.size());
}

// The first entry ("; "-separated) where two descriptions differ.
std::string first_difference(std::string_view a, std::string_view b, int rank_a, int rank_b) {
  for (int entry = 0;; ++entry) {
    std::size_t ea = a.find("; "), eb = b.find("; ");
    std::string_view ha = a.substr(0, ea), hb = b.substr(0, eb);
    if (ha != hb || ea == std::string_view::npos || eb == std::string_view::npos)
      return fmt::format("rank {} has '{}' where rank {} has '{}'", rank_a, ha.empty() ? "nothing" : ha, rank_b,
                         hb.empty() ? "nothing" : hb);
    a.remove_prefix(ea + 2);
    b.remove_prefix(eb + 2);
  }
}

std::string clip(const std::string& s) { return s.size() <= 600 ? s : s.substr(0, 600) + "..."; }

// The communication thread's own state.
class Worker {
 public:
  Worker(const transport::World& world, double timeout) : world_(world), timeout_(timeout) {}

  // Arrived work goes to `ready_` in the order every rank agrees on: a
  // group's buckets by index (held until their turn), other work in arrival
  // order, after the group in progress.
  void accept(Work* w) {
    if (w->bucket < 0) {
      (group_open() ? deferred_ : ready_).push_back(w);
      return;
    }
    // The buckets of a run whose bucket 0 was refused fail at once, out of
    // turn (a traced plan started them before the refusal was known); a
    // bucket 0 begins a new run, checked anew.
    if (w->bucket == 0) refused_plan_ = 0;
    if (w->bucket > 0 && w->fingerprint == refused_plan_) {
      ready_.push_back(w);
      return;
    }
    if (parked_.empty()) parked_since_ = std::chrono::steady_clock::now();
    parked_.push_back(w);
    group_size_ = w->num_buckets;
    for (bool moved = true; moved;) {
      moved = false;
      for (std::size_t i = 0; i < parked_.size(); ++i) {
        if (parked_[i]->bucket != next_bucket_) continue;
        ready_.push_back(parked_[i]);
        parked_.erase(parked_.begin() + static_cast<std::ptrdiff_t>(i));
        parked_since_ = std::chrono::steady_clock::now();  // progress
        moved = true;
        if (++next_bucket_ == group_size_) {
          next_bucket_ = 0;
          for (Work* d : deferred_) ready_.push_back(d);
          deferred_.clear();
        }
        break;
      }
    }
  }
  Work* next_ready() {
    if (ready_at_ == ready_.size()) {
      ready_.clear();
      ready_at_ = 0;
      return nullptr;
    }
    return ready_[ready_at_++];
  }

  void run(Work& w) {
    ++seq_;
    current_ = &w;
    try {
      if (w.kind == Kind::Finalize) {
        transport::finalize(waiting());
      } else if (agree(w)) {
        execute(w);
      } else if (w.bucket >= 0) {
        abandon_group();
      }
    } catch (const std::exception& e) {
      w.error = e.what();
    }
  }

 private:
  bool group_open() const { return next_bucket_ > 0 || !parked_.empty(); }

  // A refused plan's other buckets may never come (the caller stopped at
  // the error): the group is closed, and what waited behind it goes on.
  void abandon_group() {
    next_bucket_ = group_size_ = 0;
    for (Work* p : parked_) ready_.push_back(p);
    parked_.clear();
    for (Work* d : deferred_) ready_.push_back(d);
    deferred_.clear();
  }

 public:
  // A bucket waiting for an earlier one that this rank never started (a
  // graph that issues part of a bucket plan) would wait forever: past the
  // timeout the job is aborted, naming it.
  void check_parked() const {
    if (parked_.empty()) return;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - parked_since_).count();
    if (waited <= timeout_) return;
    transport::abort_job(fmt::format(
        "kiln.distributed: rank {}: bucket {} of {} waited {:.0f} s for bucket {}, which this rank never started. "
        "Aborting the job.",
        world_.rank, parked_.front()->bucket, parked_.front()->num_buckets, waited, next_bucket_));
  }

 private:

  static std::string describe(const void* self) {
    const Worker& me = *static_cast<const Worker*>(self);
    const Work& w = *me.current_;
    std::string what = w.bucket >= 0 ? fmt::format("{}({}) of bucket {} of {} ({} {} elements)", kind_name(w.kind),
                                                   distributed::reduction_name(w.op), w.bucket, w.num_buckets,
                                                   w.inputs.empty() ? "" : dtype_name(w.inputs[0].dtype()),
                                                   elements(w.inputs))
                                     : describe_lone(w);
    return fmt::format("collective #{} ({})", me.seq_, what);
  }
  transport::Waiting waiting() const { return {timeout_, &Worker::describe, this}; }

  // Whether every rank runs the same collective here, before any data moves.
  // A bucket plan is checked at its bucket 0 on every run (8 bytes per rank
  // on the control communicator, on this thread, so it overlaps the backward
  // pass as the buckets do); its other buckets follow that verdict. Checking
  // every run, not once per process, keeps the ranks symmetric: a rank that
  // switches to another plan while the others reuse one they checked before
  // is still caught. A lone collective is checked the first time this process
  // sees its kind, dtype and shape (a mismatch with one checked before ends
  // in the timeout). Disagreement is refused on every rank, with the same
  // message.
  bool agree(Work& w) {
    if (w.kind == Kind::Barrier || w.kind == Kind::Call || world_.size == 1) return true;
    if (w.bucket > 0) {
      if (w.fingerprint != refused_plan_) return true;
      w.error = refusal_;
      return false;
    }
    const uint64_t fp = fingerprint_of(w);
    if (w.bucket < 0 && verified_.count(fp)) return true;
    std::vector<uint64_t> all = transport::gather_fingerprints(fp, waiting());
    int differs = -1;
    for (int r = 1; r < static_cast<int>(all.size()) && differs < 0; ++r)
      if (all[static_cast<std::size_t>(r)] != all[0]) differs = r;
    if (differs < 0) {
      if (w.bucket < 0) verified_.insert(fp);
      else refused_plan_ = 0;
      return true;
    }
    std::vector<std::string> texts = transport::gather_texts(w.layout ? *w.layout : describe_lone(w), waiting());
    const std::string& a = texts[0];
    const std::string& b = texts[static_cast<std::size_t>(differs)];
    std::string message = fmt::format(
        "kiln.distributed: the ranks run different collectives here (refused; nothing was exchanged): {}.\n"
        "  rank 0: {}\n  rank {}: {}\nEvery rank must run the same graphs, with gradients of the same "
        "dtypes and shapes in the same order.",
        first_difference(a, b, 0, differs), clip(a), differs, clip(b));
    if (w.bucket == 0) {
      refused_plan_ = fp;
      refusal_ = message;
    }
    w.error = std::move(message);
    return false;
  }

  void execute(Work& w) {
    const transport::Waiting wait = waiting();
    switch (w.kind) {
      case Kind::Allreduce: {
        const DType dtype = w.inputs[0].dtype();
        const int64_t n = elements(w.inputs);
        if (n == 0) return;
        if (w.inputs.size() == 1) {
          void* out = core::raw_data(w.outputs[0]);
          transport::allreduce(core::raw_data(w.inputs[0]), out, n, dtype, w.op, wait);
          if (w.op == Reduction::Mean) divide(out, n, dtype, world_.size);
          return;
        }
        // A bucket: packed into one buffer, reduced in place, unpacked.
        const std::size_t esize = dtype_size(dtype);
        if (staging_.size() < static_cast<std::size_t>(n) * esize) staging_.resize(static_cast<std::size_t>(n) * esize);
        char* p = staging_.data();
        for (const Tensor& t : w.inputs) {
          if (std::size_t b = bytes_of(t)) std::memcpy(p, core::raw_data(t), b);
          p += bytes_of(t);
        }
        transport::allreduce(staging_.data(), staging_.data(), n, dtype, w.op, wait);
        if (w.op == Reduction::Mean) divide(staging_.data(), n, dtype, world_.size);
        p = staging_.data();
        for (const Tensor& t : w.outputs) {
          if (std::size_t b = bytes_of(t)) std::memcpy(core::raw_data(t), p, b);
          p += bytes_of(t);
        }
        return;
      }
      case Kind::Broadcast: {
        const Tensor &in = w.inputs[0], &out = w.outputs[0];
        if (world_.rank == w.root) copy_into(in, out);
        if (out.size()) transport::broadcast(core::raw_data(out), out.size(), out.dtype(), w.root, wait);
        return;
      }
      case Kind::Reduce: {
        const Tensor &in = w.inputs[0], &out = w.outputs[0];
        if (world_.rank != w.root && bytes_of(out)) std::memset(core::raw_data(out), 0, bytes_of(out));
        if (in.size())
          transport::reduce(core::raw_data(in), core::raw_data(out), in.size(), in.dtype(), w.root, wait);
        return;
      }
      case Kind::Allgather: {
        const Tensor &in = w.inputs[0], &out = w.outputs[0];
        if (in.size()) transport::allgather(core::raw_data(in), core::raw_data(out), in.size(), in.dtype(), wait);
        return;
      }
      case Kind::Barrier: transport::barrier(wait); return;
      case Kind::Call: w.call(w.argument); return;
      case Kind::Finalize: return;
    }
  }

  const transport::World& world_;
  double timeout_;
  uint64_t seq_ = 0;
  const Work* current_ = nullptr;
  std::vector<Work*> ready_, parked_, deferred_;
  std::size_t ready_at_ = 0;
  int next_bucket_ = 0, group_size_ = 0;
  std::chrono::steady_clock::time_point parked_since_;
  std::unordered_set<uint64_t> verified_;  // lone collectives every rank agreed on
  uint64_t refused_plan_ = 0;              // the bucket plan refused last (0: none)
  std::string refusal_;
  std::vector<char> staging_;  // grows to the largest bucket, then stays
};

void complete(Work& w) {
  w.done.store(1, std::memory_order_release);
  w.done.notify_one();
}

// A world of one: every collective is a copy.
void run_local(Work& w) {
  if (w.kind == Kind::Call) w.call(w.argument);
  for (std::size_t i = 0; i < w.outputs.size() && i < w.inputs.size(); ++i) copy_into(w.inputs[i], w.outputs[i]);
}

double timeout_from_env(double given) {
  if (given > 0) return given;
  if (const char* v = std::getenv("KILN_DISTRIBUTED_TIMEOUT")) {
    double t = std::atof(v);
    if (t > 0) return t;
  }
  return 300;
}

}  // namespace

Comm& Comm::get() {
  // Never destroyed: the exit handler below may still use it.
  static Comm* comm = new Comm();
  return *comm;
}

void Comm::init(const distributed::InitOptions& options) {
  std::lock_guard<std::mutex> guard(init_mutex_);
  if (state_.load() == State::Finalized)
    throw FailedPrecondition("kiln.distributed: init() after finalize(): MPI cannot be initialized twice");
  if (state_.load() == State::Running) return;
  timeout_ = timeout_from_env(options.timeout_seconds);
  initialized_.store(true, std::memory_order_release);
  if (!transport::built()) return;  // a world of one
  // Shared: the thread may still be inside set_value when init() returns.
  auto ready = std::make_shared<std::promise<void>>();
  std::future<void> started = ready->get_future();
  thread_ = std::thread([this, ready] {
    world_ = transport::init();
    ready->set_value();
    loop();
  });
  started.wait();
  state_.store(State::Running, std::memory_order_release);
  // A program that returns from main without finalize() still shuts MPI
  // down in order (and joins the thread, which std::thread requires).
  std::atexit([] {
    try {
      Comm::get().finalize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
    }
  });
}

void Comm::finalize() {
  std::lock_guard<std::mutex> guard(init_mutex_);
  if (state_.load() != State::Running) {
    if (initialized_.exchange(false)) state_.store(State::Finalized);
    return;
  }
  initialized_.store(false, std::memory_order_release);
  Work* w = acquire();
  w->kind = Kind::Finalize;
  submit(w);
  while (w->done.load(std::memory_order_acquire) == 0) w->done.wait(0, std::memory_order_acquire);
  std::string error = std::move(w->error);
  release(w);
  thread_.join();
  state_.store(State::Finalized, std::memory_order_release);
  if (!error.empty()) throw FailedPrecondition(error);
}

Work* Comm::acquire() {
  {
    std::lock_guard<std::mutex> guard(mutex_);
    if (Work* w = free_) {
      free_ = w->next;
      w->next = nullptr;
      return w;
    }
  }
  return new Work();
}

void Comm::release(Work* w) {
  // Drops the tensors; the vectors and the string keep their capacity.
  w->inputs.clear();
  w->outputs.clear();
  w->error.clear();
  w->kind = Kind::Allreduce;
  w->op = Reduction::Sum;
  w->root = 0;
  w->bucket = -1;
  w->num_buckets = 0;
  w->fingerprint = 0;
  w->layout = nullptr;
  w->call = nullptr;
  w->argument = nullptr;
  w->done.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> guard(mutex_);
  w->next = free_;
  free_ = w;
}

void Comm::submit(Work* w) {
  switch (state_.load(std::memory_order_acquire)) {
    case State::Local:
      run_local(*w);
      complete(*w);
      return;
    case State::Finalized:
      w->error = fmt::format("kiln.distributed: {} after finalize()", kind_name(w->kind));
      complete(*w);
      return;
    case State::Running: break;
  }
  int64_t bytes = 0;
  for (const Tensor& t : w->inputs) bytes += static_cast<int64_t>(bytes_of(t));
  collectives_.fetch_add(1, std::memory_order_relaxed);
  bytes_.fetch_add(bytes, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> guard(mutex_);
    w->next = nullptr;
    if (tail_) tail_->next = w;
    else head_ = w;
    tail_ = w;
  }
  wake_.notify_one();
}

void Comm::wait_and_release(Work* w) {
  if (w->done.load(std::memory_order_acquire) == 0) {
    // Blocked: the part of the collective nothing overlapped.
    auto t0 = std::chrono::steady_clock::now();
    while (w->done.load(std::memory_order_acquire) == 0) w->done.wait(0, std::memory_order_acquire);
    wait_nanoseconds_.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
        std::memory_order_relaxed);
  }
  if (w->error.empty()) [[likely]] {
    release(w);
    return;
  }
  std::string error = std::move(w->error);
  release(w);
  throw FailedPrecondition(error);
}

distributed::Stats Comm::stats() const {
  return {collectives_.load(std::memory_order_relaxed), bytes_.load(std::memory_order_relaxed),
          static_cast<double>(wait_nanoseconds_.load(std::memory_order_relaxed)) * 1e-9};
}

Work* Comm::take(bool wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Wakes up now and then even when idle, to check on parked buckets.
  if (wait) wake_.wait_for(lock, std::chrono::seconds(1), [&] { return head_ != nullptr; });
  Work* chain = head_;
  head_ = tail_ = nullptr;
  return chain;
}

void Comm::loop() {
  Worker worker(world_, timeout_);
  for (;;) {
    worker.check_parked();
    for (Work* w = take(true); w;) {
      Work* next = w->next;
      worker.accept(w);
      w = next;
    }
    while (Work* w = worker.next_ready()) {
      worker.run(*w);
      const bool last = w->kind == Kind::Finalize;
      complete(*w);
      if (last) return;
    }
  }
}

}  // namespace kiln::distributed
