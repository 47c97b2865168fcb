#pragma once
// Shared pieces of the dataset nodes in src/data.
#include <memory>
#include <utility>

#include "kiln/data.h"

namespace kiln::data::detail {

// A transformation of one input dataset. Cursors keep a raw pointer to their
// node: Dataset::Iterator holds the chain alive while a pass runs.
class UnaryNode : public DatasetNode {
 public:
  explicit UnaryNode(std::shared_ptr<const DatasetNode> input) : input_(std::move(input)) {}
  const std::shared_ptr<const DatasetNode>& input() const { return input_; }
  bool may_vary_leading_dim() const override { return input_->may_vary_leading_dim(); }

 private:
  std::shared_ptr<const DatasetNode> input_;
};

}  // namespace kiln::data::detail
