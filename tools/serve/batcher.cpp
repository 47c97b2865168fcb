#include "batcher.h"

#include <fmt/format.h>

#include <cstring>

#include "core/tensor_impl.h"
#include "status.h"

namespace kiln::serve {

namespace {

int64_t row_elements(const Shape& s) {
  int64_t n = 1;
  for (int i = 1; i < s.rank(); ++i) n *= s[i];
  return n;
}

bool same_inner_dims(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int i = 1; i < a.rank(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Rows [begin, end) of elements of `from` into `to` at row `at`.
void copy_rows(const Tensor& from, int64_t begin, int64_t end, const Tensor& to, int64_t at) {
  const int64_t row = row_elements(from.shape());
  if (from.dtype() == DType::String) {
    const std::string* src = core::data_of<std::string>(from);
    std::string* dst = core::data_of<std::string>(to);
    std::copy(src + begin * row, src + end * row, dst + at * row);
    return;
  }
  const std::size_t bytes = static_cast<std::size_t>(row) * dtype_size(from.dtype());
  std::memcpy(static_cast<char*>(core::raw_data(to)) + at * bytes,
              static_cast<const char*>(core::raw_data(from)) + begin * bytes,
              static_cast<std::size_t>(end - begin) * bytes);
}

Shape with_rows(const Shape& s, int64_t rows) {
  std::vector<int64_t> dims(s.begin(), s.end());
  dims[0] = rows;
  return Shape(dims);
}

}  // namespace

int64_t common_rows(const TensorMap& inputs) {
  int64_t rows = -1;
  for (const auto& [name, t] : inputs) {
    if (t.rank() < 1) return -1;
    if (rows >= 0 && t.shape()[0] != rows) return -1;
    rows = t.shape()[0];
  }
  return rows;
}

Batcher::Batcher(RunFn run, const BatchingOptions& options, Metrics& metrics, std::string model_name)
    : run_(std::move(run)), options_(options), metrics_(metrics), model_name_(std::move(model_name)) {
  for (int i = 0; i < options_.num_batch_threads; ++i) threads_.emplace_back([this] { loop(); });
}

Batcher::~Batcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

TensorMap Batcher::run(TensorMap inputs, Clock::time_point deadline) {
  auto task = std::make_shared<Task>();
  task->rows = common_rows(inputs);
  if (task->rows < 0)
    fail(Code::InvalidArgument, "Batching session Run() input tensors must have equal 0th-dimension size");
  if (task->rows > options_.max_batch_size)
    fail(Code::InvalidArgument, fmt::format("Task size {} is larger than maximum input batch size {}", task->rows,
                                            options_.max_batch_size));
  task->inputs = std::move(inputs);
  task->enqueued = Clock::now();
  task->deadline = deadline;
  std::future<TensorMap> result = task->result.get_future();
  {
    std::lock_guard lock(mutex_);
    // The queue holds at most max_enqueued_batches full batches.
    if (queued_rows_ + task->rows > options_.max_enqueued_batches * options_.max_batch_size)
      fail(Code::Unavailable, "The batch scheduling queue to which this task was submitted is full");
    if (stopping_) fail(Code::Unavailable, "The server is shutting down");
    queue_.push_back(task);
    queued_rows_ += task->rows;
  }
  ready_.notify_all();  // the thread filling a batch, or one to open it
  if (result.wait_until(deadline) != std::future_status::ready)
    fail(Code::DeadlineExceeded, "Deadline exceeded while waiting for the batched call");
  return result.get();
}

// Waits for a first task, then for more until the batch is full or the first
// task has waited batch_timeout_micros. Tasks whose inner dims differ from
// the first's wait for a later batch.
std::vector<std::shared_ptr<Batcher::Task>> Batcher::next_batch(std::unique_lock<std::mutex>& lock) {
  // One batch is open at a time (as TF's): two threads each filling their
  // own would split concurrent requests into half-empty batches.
  ready_.wait(lock, [&] { return stopping_ || (!queue_.empty() && !collecting_); });
  std::vector<std::shared_ptr<Task>> batch;
  if (queue_.empty() || collecting_) return batch;
  collecting_ = true;
  const auto close_at = queue_.front()->enqueued + std::chrono::microseconds(options_.batch_timeout_micros);
  auto fill = [&] {
    int64_t rows = 0;
    for (const auto& t : batch) rows += t->rows;
    for (auto it = queue_.begin(); it != queue_.end();) {
      bool fits = rows + (*it)->rows <= options_.max_batch_size;
      if (fits && !batch.empty())
        for (const auto& [name, t] : (*it)->inputs)
          fits = fits && same_inner_dims(t.shape(), batch.front()->inputs.at(name).shape());
      if (!fits) {
        ++it;
        continue;
      }
      rows += (*it)->rows;
      queued_rows_ -= (*it)->rows;
      batch.push_back(*it);
      it = queue_.erase(it);
    }
    return rows;
  };
  int64_t rows = fill();
  while (rows < options_.max_batch_size && !stopping_ && Clock::now() < close_at) {
    ready_.wait_until(lock, close_at);
    rows = fill();
  }
  collecting_ = false;
  ready_.notify_all();  // the next thread may open a batch
  return batch;
}

void Batcher::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    std::vector<std::shared_ptr<Task>> batch = next_batch(lock);
    if (batch.empty()) {
      if (stopping_ && queue_.empty() && !collecting_) return;
      continue;
    }
    lock.unlock();
    run_batch(batch);
    lock.lock();
  }
}

void Batcher::run_batch(std::vector<std::shared_ptr<Task>>& batch) {
  // Tasks past their deadline are not run: their callers have given up.
  const auto now = Clock::now();
  std::erase_if(batch, [&](const std::shared_ptr<Task>& t) {
    if (t->deadline > now) return false;
    t->result.set_exception(std::make_exception_ptr(
        ServeError(Code::DeadlineExceeded, "Deadline exceeded while waiting in the batch queue")));
    return true;
  });
  if (batch.empty()) return;
  std::vector<double> queued_micros;
  for (const auto& t : batch)
    queued_micros.push_back(std::chrono::duration<double, std::micro>(now - t->enqueued).count());
  try {
    int64_t rows = 0;
    for (const auto& t : batch) rows += t->rows;
    TensorMap joined;
    if (batch.size() == 1) {
      joined = batch[0]->inputs;
    } else {
      for (const auto& [name, first] : batch[0]->inputs) {
        Tensor all = core::make_tensor(first.dtype(), with_rows(first.shape(), rows));
        int64_t at = 0;
        for (const auto& t : batch) {
          const Tensor& part = t->inputs.at(name);
          copy_rows(part, 0, t->rows, all, at);
          at += t->rows;
        }
        joined.emplace(name, all);
      }
    }
    TensorMap outputs = run_(joined);
    metrics_.record_batch(model_name_, rows, queued_micros);
    if (batch.size() == 1) {
      batch[0]->result.set_value(std::move(outputs));  // the last statement that can throw
      return;
    }
    for (const auto& [name, out] : outputs)
      if (out.rank() < 1 || out.shape()[0] != rows)
        fail(Code::FailedPrecondition, fmt::format("Batched output tensor '{}' has shape {}: its 0th dimension does "
                                                   "not equal the sum of the 0th dimension sizes of the input "
                                                   "tensors ({})", name, out.shape().to_string(), rows));
    std::vector<TensorMap> parts(batch.size());
    int64_t at = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      for (const auto& [name, out] : outputs) {
        Tensor part = core::make_tensor(out.dtype(), with_rows(out.shape(), batch[i]->rows));
        copy_rows(out, at, at + batch[i]->rows, part, 0);
        parts[i].emplace(name, part);
      }
      at += batch[i]->rows;
    }
    // Only now, when nothing can throw: a promise is kept once.
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i]->result.set_value(std::move(parts[i]));
  } catch (...) {
    for (const auto& t : batch) t->result.set_exception(std::current_exception());
  }
}

}  // namespace kiln::serve
