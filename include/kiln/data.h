#pragma once
// kiln::data: input pipelines in the style of tf.data, iterated eagerly, and
// the IDX file format (MNIST's).
//
//   auto ds = data::Dataset::from_tensor_slices({images, labels})
//                 .shuffle(1000, 42).batch(32).prefetch(2);
//   for (const std::vector<Tensor>& element : ds) { ... element[0] ... }
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/detail/trace.h"
#include "kiln/tensor.h"

namespace kiln::data {

// One element of a dataset: its components, e.g. {image, label}.
using Element = std::vector<Tensor>;

namespace detail {
// One pass over a dataset (defined in src/data).
class Cursor {
 public:
  virtual ~Cursor() = default;
  // The next element, or nullopt at the end of the pass.
  virtual std::optional<Element> next() = 0;
};
// A node of a dataset's (immutable) chain of sources and transformations.
class DatasetNode {
 public:
  virtual ~DatasetNode() = default;
  virtual std::unique_ptr<Cursor> open() const = 0;
  virtual int64_t cardinality() const = 0;
  // Whether elements may differ in dim 0 (a last, smaller batch).
  virtual bool may_vary_leading_dim() const { return false; }
  // The elements' types, one spec per component (tf.data's element_spec),
  // or nullopt when only running a generator would tell.
  virtual std::optional<std::vector<TensorSpec>> element_spec() const { return std::nullopt; }
};
}  // namespace detail

// An immutable, cheaply copied pipeline. Transformations return new datasets
// and leave this one as it was. Each begin() starts a fresh pass.
class Dataset {
 public:
  static constexpr int64_t kInfinite = -1;
  static constexpr int64_t kUnknown = -2;

  // ---- Sources ----
  // One element: `components` as they are.
  static Dataset from_tensors(std::vector<Tensor> components);
  // One element per index i of dim 0: {components[0][i], components[1][i], ...}.
  // Every component must have rank >= 1 and the same dim 0.
  static Dataset from_tensor_slices(std::vector<Tensor> components);
  // int64 scalars start, start + step, ... before stop (as Python's range).
  static Dataset range(int64_t stop);
  static Dataset range(int64_t start, int64_t stop, int64_t step = 1);
  // Elements from a callable until it returns nullopt. Every pass calls the
  // same callable (it keeps its own state), so cardinality() is unknown.
  static Dataset from_generator(std::function<std::optional<Element>()> generator);
  // The same, with the elements' types declared (TF's output_signature): an
  // element that does not fit is an InvalidArgument, and a kiln::function
  // taking the dataset is keyed by these types, not by the dataset's identity.
  static Dataset from_generator(std::function<std::optional<Element>()> generator,
                                std::vector<TensorSpec> output_signature);
  // The datasets side by side (tf.data's zip): element i is the components of
  // element i of each dataset, concatenated in order; it stops at the shortest.
  // The element spec is the datasets' specs concatenated (kiln.data keeps the
  // tuple structure on top of it).
  static Dataset zip(std::vector<Dataset> datasets);

  // ---- Transformations ----
  Dataset map(std::function<Element(const Element&)> fn) const;
  // Keeps the elements for which `predicate` returns a bool scalar tensor
  // that is true.
  Dataset filter(std::function<Tensor(const Element&)> predicate) const;
  // TF's buffered shuffle: fills a buffer of `buffer_size` elements and
  // yields a random one of them, refilling from the input. Every pass draws a
  // new order; with a seed the sequence of orders is reproducible.
  Dataset shuffle(int64_t buffer_size, std::optional<uint64_t> seed = std::nullopt) const;
  // Stacks `batch_size` consecutive elements component by component (a new
  // dim 0). The last, smaller batch is kept unless `drop_remainder`.
  Dataset batch(int64_t batch_size, bool drop_remainder = false) const;
  // Passes over the input `count` times (-1: forever).
  Dataset repeat(int64_t count = -1) const;
  // The first `count` elements (-1: all).
  Dataset take(int64_t count) const;
  // All but the first `count` elements (-1: skips everything).
  Dataset skip(int64_t count) const;
  // Every `num_shards`-th element, starting at `index` (tf.data's shard):
  // rank r of n reads shard(n, r), so the ranks of a data-parallel job see
  // disjoint parts. Shard before shuffling (each rank shuffles its own part).
  Dataset shard(int64_t num_shards, int64_t index) const;
  // Produces up to `buffer_size` elements ahead on a background thread.
  Dataset prefetch(int64_t buffer_size = 1) const;

  // The number of elements when known; kInfinite (-1) or kUnknown (-2).
  int64_t cardinality() const;
  // The elements' types, one spec per component (tf.data's element_spec): a
  // dim that varies (the last batch's) is None. Known from the sources and
  // transformations; after a map, read once from the first element (the map
  // function runs on it); nullopt after a from_generator without an
  // output_signature, whose elements only running it would tell.
  std::optional<std::vector<TensorSpec>> element_spec() const { return node_->element_spec(); }

  // state = fn(state, element) for every element, from `initial`. Eagerly
  // a plain loop; inside kiln::function one While op that pulls the next
  // element on every iteration, so the graph does not grow with the data
  // (a range-for over a dataset while tracing would unroll it, as a Python
  // list does in TF). The traced loop takes the element types from the
  // first element, read once while tracing; a later element of another
  // dtype or rank is an error (with drop_remainder=false the batch dim is
  // left unknown).
  Element reduce(Element initial, const std::function<Element(const Element&, const Element&)>& fn) const;
  // The same while `keep_going(state)` (a bool scalar) is true, checked before
  // each element is pulled: once it is false the loop pulls no more, so a loop
  // over an infinite dataset can end (AutoGraph's `break` in a `for` over a
  // dataset; TF builds it with scan and take_while).
  Element reduce(Element initial, const std::function<Element(const Element&, const Element&)>& fn,
                 const std::function<Tensor(const Element&)>& keep_going) const;
  // fn(element) for every element, for side effects (a training step);
  // traced as reduce is.
  void for_each(const std::function<void(const Element&)>& fn) const;

  // ---- Iteration (an input iterator) ----
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Element;
    using difference_type = std::ptrdiff_t;
    using pointer = const Element*;
    using reference = const Element&;

    Iterator() = default;
    Iterator(std::shared_ptr<const detail::DatasetNode> node, std::shared_ptr<detail::Cursor> cursor);
    const Element& operator*() const { return *current_; }
    const Element* operator->() const { return &*current_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& it, std::default_sentinel_t) { return !it.current_; }

   private:
    std::shared_ptr<const detail::DatasetNode> node_;  // outlives the cursor
    std::shared_ptr<detail::Cursor> cursor_;
    std::optional<Element> current_;
  };
  // A range-for over a Dataset argument of a kiln::function while it traces
  // is an error: the loop would unroll this call's elements into a graph
  // that other datasets of the same element spec reuse (use reduce or
  // for_each, one loop op, or capture the dataset instead).
  Iterator begin() const;
  std::default_sentinel_t end() const { return {}; }

  explicit Dataset(std::shared_ptr<const detail::DatasetNode> node) : node_(std::move(node)) {}
  const std::shared_ptr<const detail::DatasetNode>& node() const { return node_; }

 private:
  friend struct kiln::detail::TraceTraits<Dataset>;
  using NodePtr = std::shared_ptr<const detail::DatasetNode>;
  // Makes a transformation's node from its input node.
  using Derive = std::function<NodePtr(NodePtr)>;
  // Inside a trace, a Dataset argument is the graph's input: each call feeds
  // its own dataset. node_ is the one the trace was made with (for the element
  // types); `fed_` names the graph inputs this dataset is made of (one per
  // argument it comes from: several after a zip) and `rebuild` applies the
  // transformations made inside the traced code to the datasets a call feeds.
  struct Fed {
    using Rebuild = std::function<NodePtr(const std::vector<NodePtr>&)>;
    std::vector<Tensor> handles;
    // Empty: the one fed dataset itself. It must never capture `handles`
    // (symbolic tensors, which own the graph the loop that calls it lives in).
    Rebuild rebuild;
    // The dataset `rebuild` makes of the fed ones (static: a caller keeps
    // the rebuild, never the Fed).
    static NodePtr apply(const Rebuild& rebuild, const std::vector<NodePtr>& fed) {
      return rebuild ? rebuild(fed) : fed.at(0);
    }
  };
  Dataset(std::shared_ptr<const detail::DatasetNode> node, std::shared_ptr<const Fed> fed)
      : node_(std::move(node)), fed_(std::move(fed)) {}
  Dataset derive(Derive make) const;
  Element traced_reduce(Element initial, const std::function<Element(const Element&, const Element&)>& fn,
                        const std::function<Tensor(const Element&)>& keep_going) const;
  NodePtr node_;
  std::shared_ptr<const Fed> fed_;
};

// Reads an IDX file (the MNIST format), plain or gzip-compressed (told by
// the gzip magic bytes 1f 8b, not by the name). The element type byte picks
// the dtype: unsigned byte -> uint8; signed byte, short, int -> int32; float
// -> float32; double -> float64. A damaged file (IDX or gzip) is an
// InvalidArgument naming the file and what is wrong; a missing file is
// NotFound.
Tensor read_idx(const std::string& path);
// Writes a concrete uint8, int32 or float32 tensor as an IDX file.
void write_idx(const std::string& path, const Tensor& tensor);

// MNIST, ready for a Conv2D model: images float32 [N, rows, cols, 1] (NHWC,
// 28x28 for MNIST), the bytes divided by 255 so in [0, 1]; labels int32 [N]
// (Kiln's default integer type), the digit 0-9.
struct Mnist {
  Tensor train_images, train_labels;
  Tensor test_images, test_labels;
};
// Reads the four MNIST files from `dir`: train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte,
// each with ".gz" (as distributed) or without. scripts/mnist_data.sh makes
// them in data/mnist; the original 60,000-digit MNIST works as well. A
// missing file is NotFound naming it; images that are not uint8 [N, rows,
// cols], labels that are not uint8 [N] or counts that differ are
// InvalidArgument.
Mnist load_mnist(const std::string& dir);

}  // namespace kiln::data

namespace kiln::detail {
// A Dataset argument of a kiln::function is keyed by its element spec, as in
// TF: two datasets with the same element types share one trace, and each call
// feeds its own dataset to the graph (a Resource input). A dataset whose
// element types are unknown (a from_generator without an output_signature) is
// keyed by identity; the graph keeps it alive, so an identity is never reused
// while it is cached.
template <> struct TraceTraits<data::Dataset> {
  using Rebuilt = data::Dataset;
  static void flatten(const data::Dataset& ds, Flattener& f);
  static data::Dataset rebuild(const data::Dataset& ds, Rebuilder& r);
};
}  // namespace kiln::detail
