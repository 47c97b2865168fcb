#pragma once
// Dynamic batching, as TF Serving's --enable_batching: concurrent predict
// calls to one signature wait up to batch_timeout_micros in a queue, are
// joined along their first (batch) dim into one call of at most
// max_batch_size rows, and each gets its own rows of the outputs back.
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "metrics.h"
#include "options.h"
#include "tensor_json.h"

namespace kiln::serve {

using Clock = std::chrono::steady_clock;

// Calls the signature; kiln::Error becomes a ServeError with TF's code.
using RunFn = std::function<TensorMap(const TensorMap&)>;

class Batcher {
 public:
  Batcher(RunFn run, const BatchingOptions& options, Metrics& metrics, std::string model_name);
  // Runs what is queued, then stops the threads.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues the request's rows (every input's first dim is `rows`) and waits
  // for its outputs. Throws Unavailable when the queue is full,
  // DeadlineExceeded past `deadline`.
  TensorMap run(TensorMap inputs, Clock::time_point deadline);

 private:
  struct Task {
    TensorMap inputs;
    int64_t rows = 0;
    Clock::time_point enqueued, deadline;
    std::promise<TensorMap> result;
  };
  void loop();
  std::vector<std::shared_ptr<Task>> next_batch(std::unique_lock<std::mutex>& lock);
  void run_batch(std::vector<std::shared_ptr<Task>>& batch);

  RunFn run_;
  BatchingOptions options_;
  Metrics& metrics_;
  std::string model_name_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::shared_ptr<Task>> queue_;
  int64_t queued_rows_ = 0;
  bool stopping_ = false;
  bool collecting_ = false;  // a thread is filling a batch
  std::vector<std::thread> threads_;
};

// Every input's first dim, if all inputs share one (the rows of a request);
// -1 otherwise.
int64_t common_rows(const TensorMap& inputs);

}  // namespace kiln::serve
