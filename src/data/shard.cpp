// Dataset::shard: every num_shards-th element from index (tf.data's shard).
#include <string>

#include "data/nodes.h"
#include "kiln/error.h"

namespace kiln::data {

namespace {

class ShardNode final : public UnaryNode {
 public:
  ShardNode(std::shared_ptr<const DatasetNode> in, int64_t num_shards, int64_t index)
      : UnaryNode(std::move(in)), num_shards_(num_shards), index_(index) {}
  std::unique_ptr<detail::Cursor> open() const override {
    class C final : public detail::Cursor {
     public:
      explicit C(const ShardNode* node) : node_(node), in_(node->input()->open()) {}
      std::optional<Element> next() override {
        // Skips to this shard's next element: index_ first, then every
        // num_shards_-th (the elements between are pulled and dropped).
        for (;;) {
          std::optional<Element> e = in_->next();
          if (!e) return std::nullopt;
          if (position_++ % node_->num_shards_ == node_->index_) return e;
        }
      }
      const ShardNode* node_;
      std::unique_ptr<detail::Cursor> in_;
      int64_t position_ = 0;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    int64_t c = input()->cardinality();
    if (c < 0) return c;
    return c / num_shards_ + (c % num_shards_ > index_ ? 1 : 0);
  }

 private:
  int64_t num_shards_, index_;
};

}  // namespace

Dataset Dataset::shard(int64_t num_shards, int64_t index) const {
  if (num_shards <= 0)
    throw InvalidArgument("Dataset::shard: num_shards must be positive, got " + std::to_string(num_shards));
  if (index < 0 || index >= num_shards)
    throw InvalidArgument("Dataset::shard: index must be in [0, " + std::to_string(num_shards) + "), got " +
                          std::to_string(index));
  return derive([=](std::shared_ptr<const detail::DatasetNode> in) {
    return std::make_shared<ShardNode>(std::move(in), num_shards, index);
  });
}

}  // namespace kiln::data
