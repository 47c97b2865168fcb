// The transformations that hold elements in a buffer: shuffle and prefetch.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>

#include "data/nodes.h"
#include "kiln/error.h"

namespace kiln::data {

using detail::Cursor;
using detail::DatasetNode;

namespace {

// splitmix64: a tiny generator whose output is the same on every platform
// (std::uniform_int_distribution is not), so seeded orders are portable.
struct SplitMix64 {
  uint64_t state;
  uint64_t operator()() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

class ShuffleNode final : public UnaryNode {
 public:
  ShuffleNode(std::shared_ptr<const DatasetNode> in, int64_t buffer_size, std::optional<uint64_t> seed)
      : UnaryNode(std::move(in)), buffer_size_(buffer_size), seed_(seed) {}
  std::unique_ptr<Cursor> open() const override {
    // Each pass gets its own order; with a seed, pass k's order depends only
    // on (seed, k), so two equal datasets give the same sequence of orders.
    uint64_t pass = passes_.fetch_add(1, std::memory_order_relaxed);
    uint64_t seed;
    if (seed_) {
      SplitMix64 mix{*seed_ ^ (pass * 0xD1B54A32D192ED03ull)};
      seed = mix();
    } else {
      seed = (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}() ^ pass;
    }
    // Over a random-access input (slices of tensors) the buffer holds indices and
    // each element is made as it leaves: the same order (the same draws pick the
    // same buffer slots), without making a whole buffer of elements before the
    // first one (60,000 MNIST slices at every epoch's start).
    class Indices final : public Cursor {
     public:
      Indices(const ShuffleNode* node, const RandomAccessSource* input, uint64_t seed)
          : node_(node), input_(input), n_(node->input()->cardinality()), rng_{seed} {}
      std::optional<Element> next() override {
        while (next_index_ < n_ && static_cast<int64_t>(buffer_.size()) < node_->buffer_size_)
          buffer_.push_back(next_index_++);
        if (buffer_.empty()) return std::nullopt;
        std::size_t pick = static_cast<std::size_t>(rng_() % buffer_.size());
        std::swap(buffer_[pick], buffer_.back());
        int64_t index = buffer_.back();
        buffer_.pop_back();
        return input_->element_at(index);
      }
      const ShuffleNode* node_;
      const RandomAccessSource* input_;
      int64_t n_, next_index_ = 0;
      SplitMix64 rng_;
      std::vector<int64_t> buffer_;
    };
    if (auto* source = dynamic_cast<const RandomAccessSource*>(input().get()))
      return std::make_unique<Indices>(this, source, seed);
    class C final : public Cursor {
     public:
      C(const ShuffleNode* node, uint64_t seed) : node_(node), in_(node->input()->open()), rng_{seed} {}
      std::optional<Element> next() override {
        while (!exhausted_ && static_cast<int64_t>(buffer_.size()) < node_->buffer_size_) {
          std::optional<Element> e = in_->next();
          if (!e) {
            exhausted_ = true;
            in_.reset();
            break;
          }
          buffer_.push_back(std::move(*e));
        }
        if (buffer_.empty()) return std::nullopt;
        std::size_t pick = static_cast<std::size_t>(rng_() % buffer_.size());
        std::swap(buffer_[pick], buffer_.back());
        Element out = std::move(buffer_.back());
        buffer_.pop_back();
        return out;
      }
      const ShuffleNode* node_;
      std::unique_ptr<Cursor> in_;
      SplitMix64 rng_;
      std::vector<Element> buffer_;
      bool exhausted_ = false;
    };
    return std::make_unique<C>(this, seed);
  }
  int64_t cardinality() const override { return input()->cardinality(); }

 private:
  int64_t buffer_size_;
  std::optional<uint64_t> seed_;
  mutable std::atomic<uint64_t> passes_{0};
};

ProducerThreadHooks producer_hooks;

// A producer thread pulls from the input into a bounded queue. Destroying the
// cursor (an iterator dropped mid-pass) stops and joins the thread; the
// producer finishes at most the one element it is computing.
class PrefetchCursor final : public Cursor {
 public:
  PrefetchCursor(std::unique_ptr<Cursor> in, int64_t capacity)
      : in_(std::move(in)), capacity_(static_cast<std::size_t>(capacity)) {
    thread_ = std::thread([this] { produce(); });
  }
  ~PrefetchCursor() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    not_full_.notify_all();
    thread_.join();
  }
  std::optional<Element> next() override {
    std::unique_lock<std::mutex> lock(mu_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || done_; });
    if (!queue_.empty()) {
      Element e = std::move(queue_.front());
      queue_.pop_front();
      not_full_.notify_one();
      return e;
    }
    if (error_) {
      std::exception_ptr error = std::exchange(error_, nullptr);
      std::rethrow_exception(error);
    }
    return std::nullopt;
  }

 private:
  void produce() {
    if (producer_hooks.on_start) producer_hooks.on_start();
    try {
      while (true) {
        {
          std::unique_lock<std::mutex> lock(mu_);
          not_full_.wait(lock, [&] { return stop_ || queue_.size() < capacity_; });
          if (stop_) break;
        }
        std::optional<Element> e = in_->next();
        std::lock_guard<std::mutex> lock(mu_);
        if (!e || stop_) break;
        queue_.push_back(std::move(*e));
        not_empty_.notify_one();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
    }
    in_.reset();  // the input's resources go with the producer
    if (producer_hooks.on_end) producer_hooks.on_end();
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    not_empty_.notify_all();
  }

  std::unique_ptr<Cursor> in_;
  std::size_t capacity_;
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Element> queue_;
  bool stop_ = false, done_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

class PrefetchNode final : public UnaryNode {
 public:
  PrefetchNode(std::shared_ptr<const DatasetNode> in, int64_t n) : UnaryNode(std::move(in)), n_(n) {}
  std::unique_ptr<Cursor> open() const override {
    return std::make_unique<PrefetchCursor>(input()->open(), n_);
  }
  int64_t cardinality() const override { return input()->cardinality(); }

 private:
  int64_t n_;
};

}  // namespace

void set_producer_thread_hooks(ProducerThreadHooks hooks) { producer_hooks = hooks; }

Dataset Dataset::shuffle(int64_t buffer_size, std::optional<uint64_t> seed) const {
  if (buffer_size <= 0)
    throw InvalidArgument("Dataset::shuffle: buffer_size must be positive, got " +
                          std::to_string(buffer_size));
  return derive([=](std::shared_ptr<const DatasetNode> in) {
    return std::make_shared<ShuffleNode>(std::move(in), buffer_size, seed);
  });
}

Dataset Dataset::prefetch(int64_t buffer_size) const {
  if (buffer_size <= 0)
    throw InvalidArgument("Dataset::prefetch: buffer_size must be positive, got " +
                          std::to_string(buffer_size));
  return derive([=](std::shared_ptr<const DatasetNode> in) {
    return std::make_shared<PrefetchNode>(std::move(in), buffer_size);
  });
}

}  // namespace kiln::data
