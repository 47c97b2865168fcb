#pragma once
// Shared pieces of the dataset nodes in src/data.
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kiln/data.h"

namespace kiln::data {

// A transformation of one input dataset. Cursors keep a raw pointer to their
// node: Dataset::Iterator holds the chain alive while a pass runs.
class UnaryNode : public detail::DatasetNode {
 public:
  explicit UnaryNode(std::shared_ptr<const detail::DatasetNode> input) : input_(std::move(input)) {}
  const std::shared_ptr<const detail::DatasetNode>& input() const { return input_; }
  bool may_vary_leading_dim() const override { return input_->may_vary_leading_dim(); }
  std::optional<std::vector<TensorSpec>> element_spec() const override { return input_->element_spec(); }

 private:
  std::shared_ptr<const detail::DatasetNode> input_;
};

// A source whose element i can be made without the ones before it (slices of
// tensors). Shuffle then buffers indices and makes each element as it leaves,
// instead of a whole buffer of elements before the first one.
class RandomAccessSource {
 public:
  virtual ~RandomAccessSource() = default;
  // Element i of a pass, 0 <= i < the node's cardinality().
  virtual Element element_at(int64_t i) const = 0;
};

// Called on each prefetch producer thread as it starts and as it ends (after
// it dropped its input): the Python package keeps one interpreter thread state
// for the thread's whole life with them, where each callback would otherwise
// make a new one (and lose the thread's threading.local data). The end hook
// runs where the input's Python objects were just released, so it may take
// the GIL as they do. Set once, before any pass runs.
struct ProducerThreadHooks {
  void (*on_start)() = nullptr;
  void (*on_end)() = nullptr;
};
void set_producer_thread_hooks(ProducerThreadHooks hooks);

// The specs of an element's components, dim 0 unknown where batches vary.
std::vector<TensorSpec> specs_of(const Element& element, bool leading_dim_varies);

// `flag`, what a reduce's keep_going returned, once checked to be a bool scalar.
Tensor keep_going_flag(const Tensor& flag);

}  // namespace kiln::data
