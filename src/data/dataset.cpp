// Dataset sources and the element-wise transformations (map, filter, batch,
// repeat, take, skip). Shuffle and prefetch keep state across elements in
// buffers and live in buffered.cpp.
#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "kiln/debugging.h"
#include "kiln/function.h"
#include "data/nodes.h"
#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/init_scope.h"

namespace kiln::data {

using detail::Cursor;
using detail::DatasetNode;

std::vector<TensorSpec> specs_of(const Element& element, bool leading_dim_varies) {
  std::vector<TensorSpec> specs;
  specs.reserve(element.size());
  for (const Tensor& t : element) {
    Shape s = t.shape();
    if (leading_dim_varies && s.rank() > 0) s[0] = None;
    specs.emplace_back(s, t.dtype());
  }
  return specs;
}

Tensor keep_going_flag(const Tensor& flag) {
  if (!flag.defined() || flag.dtype() != DType::Bool || flag.rank() != 0)
    throw InvalidArgument("Dataset::reduce: keep_going must return a bool scalar tensor, got " +
                          (flag.defined() ? std::string(dtype_name(flag.dtype())) + " of shape " +
                                                flag.shape().to_string()
                                          : std::string("an undefined tensor")));
  return flag;
}

namespace {

std::string shape_str(const Tensor& t) { return t.shape().to_string(); }

// ---- Sources ---------------------------------------------------------------

class TensorsNode final : public DatasetNode {
 public:
  explicit TensorsNode(Element element) : element_(std::move(element)) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      explicit C(const Element* e) : e_(e) {}
      std::optional<Element> next() override {
        if (done_) return std::nullopt;
        done_ = true;
        return *e_;
      }
      const Element* e_;
      bool done_ = false;
    };
    return std::make_unique<C>(&element_);
  }
  int64_t cardinality() const override { return 1; }
  std::optional<std::vector<TensorSpec>> element_spec() const override { return specs_of(element_, false); }

 private:
  Element element_;
};

class SlicesNode final : public DatasetNode, public RandomAccessSource {
 public:
  SlicesNode(Element components, int64_t n) : components_(std::move(components)), n_(n) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      explicit C(const SlicesNode* node) : node_(node) {}
      std::optional<Element> next() override {
        if (i_ >= node_->n_) return std::nullopt;
        return node_->element_at(i_++);
      }
      const SlicesNode* node_;
      int64_t i_ = 0;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override { return n_; }
  Element element_at(int64_t i) const override {
    Element e;
    e.reserve(components_.size());
    for (const Tensor& t : components_) e.push_back(t[i]);
    return e;
  }
  std::optional<std::vector<TensorSpec>> element_spec() const override {
    std::vector<TensorSpec> specs;
    for (const Tensor& t : components_) {
      std::span<const int64_t> dims = t.shape().dims();
      specs.emplace_back(Shape(std::vector<int64_t>(dims.begin() + 1, dims.end())), t.dtype());
    }
    return specs;
  }

 private:
  Element components_;
  int64_t n_;
};

class RangeNode final : public DatasetNode {
 public:
  RangeNode(int64_t start, int64_t stop, int64_t step) : start_(start), stop_(stop), step_(step) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const RangeNode* node) : node_(node), v_(node->start_) {}
      std::optional<Element> next() override {
        if (node_->step_ > 0 ? v_ >= node_->stop_ : v_ <= node_->stop_) return std::nullopt;
        Element e{constant(Scalar(v_))};
        v_ += node_->step_;
        return e;
      }
      const RangeNode* node_;
      int64_t v_;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    // Computed in unsigned arithmetic so that extreme bounds cannot overflow.
    if (step_ > 0) {
      if (stop_ <= start_) return 0;
      uint64_t span = static_cast<uint64_t>(stop_) - static_cast<uint64_t>(start_);
      return static_cast<int64_t>((span - 1) / static_cast<uint64_t>(step_) + 1);
    }
    if (stop_ >= start_) return 0;
    uint64_t span = static_cast<uint64_t>(start_) - static_cast<uint64_t>(stop_);
    uint64_t s = static_cast<uint64_t>(0) - static_cast<uint64_t>(step_);
    return static_cast<int64_t>((span - 1) / s + 1);
  }
  std::optional<std::vector<TensorSpec>> element_spec() const override {
    return std::vector<TensorSpec>{TensorSpec(Shape{}, DType::Int64)};
  }

 private:
  int64_t start_, stop_, step_;
};

void check_signature(const Element& e, const std::vector<TensorSpec>& signature) {
  bool fits = e.size() == signature.size();
  for (std::size_t i = 0; fits && i < e.size(); ++i)
    fits = e[i].defined() && e[i].dtype() == signature[i].dtype && e[i].shape().is_compatible_with(signature[i].shape);
  if (fits) return;
  std::string got, want;
  for (const Tensor& t : e)
    got += (got.empty() ? "" : ", ") + (t.defined() ? std::string(dtype_name(t.dtype())) + " " + shape_str(t) : "undefined");
  for (const TensorSpec& s : signature)
    want += (want.empty() ? "" : ", ") + std::string(dtype_name(s.dtype)) + " " + s.shape.to_string();
  throw InvalidArgument(fmt::format(
      "Dataset::from_generator: the generator yielded an element that does not match the output_signature: "
      "got ({}), expected ({})",
      got, want));
}

class GeneratorNode final : public DatasetNode {
 public:
  GeneratorNode(std::function<std::optional<Element>()> fn, std::optional<std::vector<TensorSpec>> signature)
      : fn_(std::move(fn)), signature_(std::move(signature)) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      explicit C(const GeneratorNode* node) : node_(node) {}
      std::optional<Element> next() override {
        std::optional<Element> e = node_->fn_();
        if (e && node_->signature_) check_signature(*e, *node_->signature_);
        return e;
      }
      const GeneratorNode* node_;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override { return Dataset::kUnknown; }
  std::optional<std::vector<TensorSpec>> element_spec() const override { return signature_; }

 private:
  std::function<std::optional<Element>()> fn_;
  std::optional<std::vector<TensorSpec>> signature_;
};

// ---- Transformations -------------------------------------------------------

class MapNode final : public UnaryNode {
 public:
  MapNode(std::shared_ptr<const DatasetNode> in, std::function<Element(const Element&)> fn)
      : UnaryNode(std::move(in)), fn_(std::move(fn)) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const MapNode* node) : node_(node), in_(node->input()->open()) {}
      std::optional<Element> next() override {
        std::optional<Element> e = in_->next();
        if (!e) return std::nullopt;
        return node_->fn_(*e);
      }
      const MapNode* node_;
      std::unique_ptr<Cursor> in_;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override { return input()->cardinality(); }
  // Read from the first element, once (the function runs on it eagerly).
  // Never when the input's types are unknown: that is a generator's, and
  // pulling from it would take an element from the next pass.
  std::optional<std::vector<TensorSpec>> element_spec() const override {
    std::call_once(spec_once_, [this] {
      if (!input()->element_spec()) return;
      InitScope eager;
      std::optional<Element> first = input()->open()->next();
      if (first) spec_ = specs_of(fn_(*first), may_vary_leading_dim());
    });
    return spec_;
  }

 private:
  std::function<Element(const Element&)> fn_;
  mutable std::once_flag spec_once_;
  mutable std::optional<std::vector<TensorSpec>> spec_;
};

class FilterNode final : public UnaryNode {
 public:
  FilterNode(std::shared_ptr<const DatasetNode> in, std::function<Tensor(const Element&)> fn)
      : UnaryNode(std::move(in)), fn_(std::move(fn)) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const FilterNode* node) : node_(node), in_(node->input()->open()) {}
      std::optional<Element> next() override {
        while (std::optional<Element> e = in_->next()) {
          Tensor keep = node_->fn_(*e);
          if (!keep.defined() || keep.dtype() != DType::Bool || keep.rank() != 0)
            throw InvalidArgument(
                "Dataset::filter: the predicate must return a bool scalar tensor, got " +
                (keep.defined() ? std::string(dtype_name(keep.dtype())) + " of shape " + shape_str(keep)
                                : std::string("an undefined tensor")));
          if (keep.item<bool>()) return e;
        }
        return std::nullopt;
      }
      const FilterNode* node_;
      std::unique_ptr<Cursor> in_;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    return input()->cardinality() == Dataset::kInfinite ? Dataset::kInfinite : Dataset::kUnknown;
  }

 private:
  std::function<Tensor(const Element&)> fn_;
};

class BatchNode final : public UnaryNode {
 public:
  BatchNode(std::shared_ptr<const DatasetNode> in, int64_t n, bool drop)
      : UnaryNode(std::move(in)), n_(n), drop_(drop) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const BatchNode* node) : node_(node), in_(node->input()->open()) {}
      std::optional<Element> next() override {
        std::vector<Element> rows;
        while (static_cast<int64_t>(rows.size()) < node_->n_) {
          std::optional<Element> e = in_->next();
          if (!e) break;
          if (!rows.empty() && e->size() != rows[0].size())
            throw InvalidArgument("Dataset::batch: elements have different numbers of components (" +
                                  std::to_string(rows[0].size()) + " and " +
                                  std::to_string(e->size()) + ")");
          rows.push_back(std::move(*e));
        }
        if (rows.empty()) return std::nullopt;
        if (node_->drop_ && static_cast<int64_t>(rows.size()) < node_->n_) return std::nullopt;
        Element out;
        out.reserve(rows[0].size());
        std::vector<Tensor> parts(rows.size());
        for (std::size_t c = 0; c < rows[0].size(); ++c) {
          for (std::size_t r = 0; r < rows.size(); ++r) {
            if (rows[r][c].shape() != rows[0][c].shape() || rows[r][c].dtype() != rows[0][c].dtype())
              throw InvalidArgument("Dataset::batch: component " + std::to_string(c) +
                                    " differs between elements of one batch: " +
                                    std::string(dtype_name(rows[0][c].dtype())) + " " +
                                    shape_str(rows[0][c]) + " and " +
                                    std::string(dtype_name(rows[r][c].dtype())) + " " +
                                    shape_str(rows[r][c]));
            parts[r] = rows[r][c];
          }
          out.push_back(stack(parts, 0));
        }
        return out;
      }
      const BatchNode* node_;
      std::unique_ptr<Cursor> in_;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    int64_t c = input()->cardinality();
    if (c < 0) return c;
    return drop_ ? c / n_ : (c + n_ - 1) / n_;
  }
  bool may_vary_leading_dim() const override { return !drop_ || input()->may_vary_leading_dim(); }
  std::optional<std::vector<TensorSpec>> element_spec() const override {
    std::optional<std::vector<TensorSpec>> specs = input()->element_spec();
    if (!specs) return specs;
    for (TensorSpec& spec : *specs) {
      if (!spec.shape.has_known_rank()) continue;
      std::vector<int64_t> dims{may_vary_leading_dim() ? None : n_};
      for (int64_t d : spec.shape.dims()) dims.push_back(d);
      spec.shape = Shape(dims);
    }
    return specs;
  }

 private:
  int64_t n_;
  bool drop_;
};

class RepeatNode final : public UnaryNode {
 public:
  RepeatNode(std::shared_ptr<const DatasetNode> in, int64_t count)
      : UnaryNode(std::move(in)), count_(count) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const RepeatNode* node) : node_(node) {}
      std::optional<Element> next() override {
        while (node_->count_ < 0 || pass_ < node_->count_) {
          if (!in_) {
            in_ = node_->input()->open();
            produced_ = false;
          }
          if (std::optional<Element> e = in_->next()) {
            produced_ = true;
            return e;
          }
          in_.reset();
          ++pass_;
          // An empty input repeated forever would spin: stop as TF does.
          if (!produced_) return std::nullopt;
        }
        return std::nullopt;
      }
      const RepeatNode* node_;
      std::unique_ptr<Cursor> in_;
      int64_t pass_ = 0;
      bool produced_ = false;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    int64_t c = input()->cardinality();
    if (count_ == 0 || c == 0) return 0;
    if (count_ < 0) return c == Dataset::kUnknown ? Dataset::kUnknown : Dataset::kInfinite;
    if (c < 0) return c;
    return c * count_;
  }

 private:
  int64_t count_;
};

class TakeNode final : public UnaryNode {
 public:
  TakeNode(std::shared_ptr<const DatasetNode> in, int64_t count)
      : UnaryNode(std::move(in)), count_(count) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const TakeNode* node) : node_(node), in_(node->input()->open()) {}
      std::optional<Element> next() override {
        if (node_->count_ >= 0 && taken_ >= node_->count_) return std::nullopt;
        std::optional<Element> e = in_->next();
        if (e) ++taken_;
        return e;
      }
      const TakeNode* node_;
      std::unique_ptr<Cursor> in_;
      int64_t taken_ = 0;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    int64_t c = input()->cardinality();
    if (count_ < 0) return c;
    if (c == Dataset::kInfinite) return count_;
    if (c == Dataset::kUnknown) return count_ == 0 ? 0 : Dataset::kUnknown;
    return std::min(c, count_);
  }

 private:
  int64_t count_;
};

class SkipNode final : public UnaryNode {
 public:
  SkipNode(std::shared_ptr<const DatasetNode> in, int64_t count)
      : UnaryNode(std::move(in)), count_(count) {}
  std::unique_ptr<Cursor> open() const override {
    class C final : public Cursor {
     public:
      C(const SkipNode* node) : node_(node), in_(node->input()->open()) {}
      std::optional<Element> next() override {
        if (!skipped_) {
          skipped_ = true;
          for (int64_t i = 0; node_->count_ < 0 || i < node_->count_; ++i)
            if (!in_->next()) return std::nullopt;
        }
        return in_->next();
      }
      const SkipNode* node_;
      std::unique_ptr<Cursor> in_;
      bool skipped_ = false;
    };
    return std::make_unique<C>(this);
  }
  int64_t cardinality() const override {
    int64_t c = input()->cardinality();
    if (count_ < 0) return c == Dataset::kInfinite ? Dataset::kInfinite : 0;
    if (c < 0) return c;
    return std::max<int64_t>(c - count_, 0);
  }

 private:
  int64_t count_;
};

void check_positive(const char* fn, const char* arg, int64_t v) {
  if (v <= 0)
    throw InvalidArgument(std::string("Dataset::") + fn + ": " + arg + " must be positive, got " +
                          std::to_string(v));
}

}  // namespace

// ---- Dataset ---------------------------------------------------------------

Dataset Dataset::from_tensors(std::vector<Tensor> components) {
  for (std::size_t i = 0; i < components.size(); ++i)
    if (!components[i].defined())
      throw InvalidArgument("Dataset::from_tensors: component " + std::to_string(i) + " is undefined");
  return Dataset(std::make_shared<TensorsNode>(std::move(components)));
}

Dataset Dataset::from_tensor_slices(std::vector<Tensor> components) {
  if (components.empty())
    throw InvalidArgument("Dataset::from_tensor_slices: needs at least one component");
  int64_t n = -1;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Tensor& t = components[i];
    if (!t.defined() || t.is_symbolic() || t.rank() < 1)
      throw InvalidArgument("Dataset::from_tensor_slices: component " + std::to_string(i) +
                            " must be a concrete tensor of rank >= 1, got " +
                            (t.defined() ? "shape " + shape_str(t) : std::string("undefined")));
    if (i == 0) n = t.shape()[0];
    else if (t.shape()[0] != n)
      throw InvalidArgument("Dataset::from_tensor_slices: components must have the same dim 0; "
                            "component 0 has " + std::to_string(n) + " (shape " +
                            shape_str(components[0]) + ") but component " + std::to_string(i) +
                            " has " + std::to_string(t.shape()[0]) + " (shape " + shape_str(t) + ")");
  }
  return Dataset(std::make_shared<SlicesNode>(std::move(components), n));
}

Dataset Dataset::range(int64_t stop) { return range(0, stop, 1); }

Dataset Dataset::range(int64_t start, int64_t stop, int64_t step) {
  if (step == 0) throw InvalidArgument("Dataset::range: step must not be 0");
  return Dataset(std::make_shared<RangeNode>(start, stop, step));
}

Dataset Dataset::from_generator(std::function<std::optional<Element>()> generator) {
  if (!generator) throw InvalidArgument("Dataset::from_generator: the generator is empty");
  return Dataset(std::make_shared<GeneratorNode>(std::move(generator), std::nullopt));
}

Dataset Dataset::from_generator(std::function<std::optional<Element>()> generator,
                                std::vector<TensorSpec> output_signature) {
  if (!generator) throw InvalidArgument("Dataset::from_generator: the generator is empty");
  return Dataset(std::make_shared<GeneratorNode>(std::move(generator), std::move(output_signature)));
}

Dataset Dataset::derive(Derive make) const {
  std::shared_ptr<const DatasetNode> node = make(node_);
  if (!fed_) return Dataset(std::move(node));
  // Captures the earlier rebuild, never fed_ itself: its handles are the
  // trace's symbolic tensors, which hold their graph, and this function ends
  // up in that graph's dataset-loop node (a cycle: the graph would leak).
  auto rebuild = [before = fed_->rebuild, make = std::move(make)](const std::vector<NodePtr>& fed) {
    return make(Fed::apply(before, fed));
  };
  return Dataset(std::move(node), std::make_shared<const Fed>(Fed{fed_->handles, std::move(rebuild)}));
}

Dataset Dataset::map(std::function<Element(const Element&)> fn) const {
  if (!fn) throw InvalidArgument("Dataset::map: the function is empty");
  return derive([fn = std::move(fn)](std::shared_ptr<const DatasetNode> in) {
    return std::make_shared<MapNode>(std::move(in), fn);
  });
}

Dataset Dataset::filter(std::function<Tensor(const Element&)> predicate) const {
  if (!predicate) throw InvalidArgument("Dataset::filter: the predicate is empty");
  return derive([predicate = std::move(predicate)](std::shared_ptr<const DatasetNode> in) {
    return std::make_shared<FilterNode>(std::move(in), predicate);
  });
}

Dataset Dataset::batch(int64_t batch_size, bool drop_remainder) const {
  check_positive("batch", "batch_size", batch_size);
  return derive([=](std::shared_ptr<const DatasetNode> in) {
    return std::make_shared<BatchNode>(std::move(in), batch_size, drop_remainder);
  });
}

Dataset Dataset::repeat(int64_t count) const {
  if (count < -1)
    throw InvalidArgument("Dataset::repeat: count must be >= 0 or -1 (forever), got " +
                          std::to_string(count));
  return derive([=](std::shared_ptr<const DatasetNode> in) { return std::make_shared<RepeatNode>(std::move(in), count); });
}

Dataset Dataset::take(int64_t count) const {
  if (count < -1)
    throw InvalidArgument("Dataset::take: count must be >= 0 or -1 (all), got " + std::to_string(count));
  return derive([=](std::shared_ptr<const DatasetNode> in) { return std::make_shared<TakeNode>(std::move(in), count); });
}

Dataset Dataset::skip(int64_t count) const {
  if (count < -1)
    throw InvalidArgument("Dataset::skip: count must be >= 0 or -1 (all), got " + std::to_string(count));
  return derive([=](std::shared_ptr<const DatasetNode> in) { return std::make_shared<SkipNode>(std::move(in), count); });
}

int64_t Dataset::cardinality() const { return node_->cardinality(); }

Element Dataset::reduce(Element initial,
                        const std::function<Element(const Element&, const Element&)>& fn) const {
  return reduce(std::move(initial), fn, nullptr);
}

Element Dataset::reduce(Element initial, const std::function<Element(const Element&, const Element&)>& fn,
                        const std::function<Tensor(const Element&)>& keep_going) const {
  if (kiln::detail::is_tracing()) return traced_reduce(std::move(initial), fn, keep_going);
  Element state = std::move(initial);
  std::unique_ptr<Cursor> cursor = node_->open();
  while (!keep_going || keep_going_flag(keep_going(state)).item<bool>()) {
    std::optional<Element> e = cursor->next();
    if (!e) break;
    state = fn(state, *e);
  }
  return state;
}

Dataset::Iterator::Iterator(std::shared_ptr<const DatasetNode> node, std::shared_ptr<Cursor> cursor)
    : node_(std::move(node)), cursor_(std::move(cursor)) {
  current_ = cursor_->next();
  if (!current_) cursor_.reset();
}

Dataset::Iterator& Dataset::Iterator::operator++() {
  current_ = cursor_->next();
  if (!current_) cursor_.reset();  // ends the pass early (stops a prefetch thread)
  return *this;
}

Dataset::Iterator Dataset::begin() const {
  if (fed_ && kiln::detail::is_tracing())
    throw InvalidArgument(
        "iterating a Dataset argument of a kiln::function element by element while it traces (a C++ range-for, "
        "a Python for loop without AutoGraph) would unroll this call's elements into a graph that other "
        "datasets of the same element spec reuse: use reduce() or for_each() (one loop op; AutoGraph's for "
        "loop is one), or capture the dataset instead of passing it");
  return Iterator(node_, std::shared_ptr<Cursor>(node_->open()));
}

}  // namespace kiln::data

namespace kiln::detail {

void TraceTraits<data::Dataset>::flatten(const data::Dataset& ds, Flattener& f) {
  std::optional<std::vector<TensorSpec>> spec = ds.element_spec();
  if (!spec) {
    f.begin(KeyAtom::Kind::Struct, 0, "Dataset");
    f.integer(static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(ds.node().get())), DType::Int64);
    f.end();
    return;
  }
  std::string key = "Dataset(";
  for (std::size_t i = 0; i < spec->size(); ++i) key += (i ? ", " : "") + (*spec)[i].to_string();
  key += ")";
  if (ds.fed_) {
    // Passed on to a function called while tracing: the outer graph's input.
    if (ds.fed_->rebuild)
      throw Unimplemented(
          "a Dataset argument transformed inside a traced function (mapped, batched, zipped...) cannot be passed to another "
          "kiln::function; pass the dataset itself, or transform it inside the inner function");
    f.resource(ds.fed_->handles[0], std::move(key));
    return;
  }
  f.resource(make_object_handle(ds.node(), typeid(data::detail::DatasetNode)), std::move(key));
}

data::Dataset TraceTraits<data::Dataset>::rebuild(const data::Dataset& ds, Rebuilder& r) {
  if (!ds.element_spec()) return ds;  // keyed by identity: the graph holds this dataset
  return data::Dataset(ds.node(), std::make_shared<const data::Dataset::Fed>(data::Dataset::Fed{{r.next()}, {}}));
}

}  // namespace kiln::detail
