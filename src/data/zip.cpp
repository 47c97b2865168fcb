// Dataset::zip: several datasets side by side (tf.data's zip).
#include <algorithm>
#include <string>

#include "data/nodes.h"
#include "kiln/error.h"

namespace kiln::data {

namespace {

class ZipNode final : public detail::DatasetNode {
 public:
  explicit ZipNode(std::vector<std::shared_ptr<const DatasetNode>> inputs) : inputs_(std::move(inputs)) {}
  std::unique_ptr<detail::Cursor> open() const override {
    class C final : public detail::Cursor {
     public:
      explicit C(const ZipNode* node) {
        for (const auto& in : node->inputs_) in_.push_back(in->open());
      }
      std::optional<Element> next() override {
        // Pulled in order: the end of one input ends the pass, and the inputs
        // after it are not pulled (tf.data's order).
        Element out;
        for (const auto& in : in_) {
          std::optional<Element> e = in->next();
          if (!e) return std::nullopt;
          out.insert(out.end(), std::make_move_iterator(e->begin()), std::make_move_iterator(e->end()));
        }
        return out;
      }
      std::vector<std::unique_ptr<detail::Cursor>> in_;
    };
    return std::make_unique<C>(this);
  }
  // The shortest input's; unknown as soon as one input's is (tf.data's rule).
  int64_t cardinality() const override {
    int64_t result = Dataset::kInfinite;
    for (const auto& in : inputs_) {
      int64_t n = in->cardinality();
      if (n == Dataset::kUnknown) return Dataset::kUnknown;
      if (n != Dataset::kInfinite && (result == Dataset::kInfinite || n < result)) result = n;
    }
    return result;
  }
  bool may_vary_leading_dim() const override {
    return std::any_of(inputs_.begin(), inputs_.end(), [](const auto& in) { return in->may_vary_leading_dim(); });
  }
  std::optional<std::vector<TensorSpec>> element_spec() const override {
    std::vector<TensorSpec> specs;
    for (const auto& in : inputs_) {
      std::optional<std::vector<TensorSpec>> part = in->element_spec();
      if (!part) return std::nullopt;
      specs.insert(specs.end(), part->begin(), part->end());
    }
    return specs;
  }

 private:
  std::vector<std::shared_ptr<const DatasetNode>> inputs_;
};

}  // namespace

Dataset Dataset::zip(std::vector<Dataset> datasets) {
  if (datasets.empty()) throw InvalidArgument("Dataset::zip: needs at least one dataset");
  std::vector<NodePtr> inputs;
  bool any_fed = false;
  for (const Dataset& ds : datasets) {
    inputs.push_back(ds.node_);
    any_fed = any_fed || ds.fed_;
  }
  NodePtr node = std::make_shared<ZipNode>(std::move(inputs));
  if (!any_fed) return Dataset(std::move(node));
  // Zipping Dataset arguments inside a trace: the zip is rebuilt over the
  // datasets each call feeds (its handles are those of every fed input, in
  // order); an input that is not an argument is kept as it is.
  struct Part {
    NodePtr node;  // not fed: this dataset itself
    // Fed: rebuilt from the fed datasets [first, first + count) by `rebuild`
    // (empty: the one fed dataset). Not the Fed itself, whose handles (the
    // trace's symbolic tensors) would keep the graph that holds this alive.
    Fed::Rebuild rebuild;
    std::size_t first = 0, count = 0;
  };
  std::vector<Part> parts;
  Fed fed;
  for (const Dataset& ds : datasets) {
    if (!ds.fed_) {
      parts.push_back(Part{ds.node_, nullptr, 0, 0});
      continue;
    }
    parts.push_back(Part{nullptr, ds.fed_->rebuild, fed.handles.size(), ds.fed_->handles.size()});
    fed.handles.insert(fed.handles.end(), ds.fed_->handles.begin(), ds.fed_->handles.end());
  }
  fed.rebuild = [parts = std::move(parts)](const std::vector<NodePtr>& fed_nodes) -> NodePtr {
    std::vector<NodePtr> rebuilt;
    for (const Part& part : parts) {
      if (part.node) {
        rebuilt.push_back(part.node);
        continue;
      }
      auto begin = fed_nodes.begin() + static_cast<std::ptrdiff_t>(part.first);
      std::vector<NodePtr> own(begin, begin + static_cast<std::ptrdiff_t>(part.count));
      rebuilt.push_back(Fed::apply(part.rebuild, own));
    }
    return std::make_shared<ZipNode>(std::move(rebuilt));
  };
  return Dataset(std::move(node), std::make_shared<const Fed>(std::move(fed)));
}

}  // namespace kiln::data
