// A dataset iterated inside kiln::function (docs/design-notes.md, "Control flow and TensorArray"): one While op
// whose body pulls the next element through a host op, instead of the
// elements unrolled into the graph.
//
//   token = HostFunction[open](dataset...)          (a new pass on every call, over
//                                                    the datasets the call feeds
//                                                    when it comes from arguments)
//   while (more and keep_going(state)):
//     (ok, element...) = HostFunction[next](token)
//     state = cond(ok, fn(state, element), state)
//     more = ok
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "kiln/control_flow.h"
#include "kiln/data.h"
#include "kiln/debugging.h"
#include "kiln/error.h"
#include "kiln/function.h"
#include "kiln/init_scope.h"
#include "kiln/math.h"
#include "data/nodes.h"

namespace kiln::data {

namespace {

// The pass a traced loop is on. A graph holds one, so two threads running
// the same traced function at once share it: the mutex keeps each pull
// whole, but their passes interleave (TF gives each call its own iterator).
struct LoopIterator {
  std::shared_ptr<const detail::DatasetNode> node;
  std::vector<DType> dtypes;
  std::vector<Shape> shapes;
  std::mutex mutex;
  std::unique_ptr<detail::Cursor> cursor;
  int64_t index = 0;
  // The element read while tracing, and its cursor: the first pass starts
  // with them, so a generator (whose state is its own) loses no element.
  std::unique_ptr<detail::Cursor> traced_cursor;
  std::optional<Element> lookahead;
};

// The loop's element types: the dataset's element spec, or, when only its
// generator knows them, the first element's (with dim 0 unknown where the
// batches may differ in size), read once while tracing; the first pass then
// starts with that element and its cursor, so the generator loses none.
void element_types(LoopIterator& it) {
  std::optional<std::vector<TensorSpec>> specs = it.node->element_spec();
  if (!specs) {
    InitScope eager;  // the pipeline's own ops run now, not into the graph
    it.traced_cursor = it.node->open();
    std::optional<Element> first = it.traced_cursor->next();
    if (!first)
      throw InvalidArgument("Dataset iterated inside kiln::function is empty: its element types are unknown");
    it.lookahead = first;
    specs = specs_of(*first, it.node->may_vary_leading_dim());
  }
  for (const TensorSpec& spec : *specs) {
    it.dtypes.push_back(spec.dtype);
    it.shapes.push_back(spec.shape);
  }
}

std::vector<Tensor> pull(LoopIterator& it) {
  std::lock_guard<std::mutex> lock(it.mutex);
  std::optional<Element> e;
  if (it.lookahead) e = std::exchange(it.lookahead, std::nullopt);
  else if (it.cursor) e = it.cursor->next();
  std::vector<Tensor> out{constant(e.has_value())};
  if (!e) {
    // The loop ends; the body still needs values of the declared types.
    for (std::size_t i = 0; i < it.dtypes.size(); ++i) {
      Shape s = it.shapes[i].has_known_rank() ? it.shapes[i] : Shape{};
      for (int d = 0; d < s.rank(); ++d)
        if (s[d] < 0) s[d] = 0;
      out.push_back(zeros(s, it.dtypes[i]));
    }
    it.cursor.reset();
    return out;
  }
  if (e->size() != it.dtypes.size())
    throw InvalidArgument(fmt::format("Dataset element {} has {} components; the traced loop was built for {}",
                                      it.index, e->size(), it.dtypes.size()));
  for (std::size_t i = 0; i < e->size(); ++i) {
    const Tensor& t = (*e)[i];
    if (t.dtype() != it.dtypes[i] || !t.shape().is_compatible_with(it.shapes[i]))
      throw InvalidArgument(fmt::format(
          "Dataset element {} component {} is {} {}; the traced loop was built for {} {} (the dataset's element spec)",
          it.index, i, dtype_name(t.dtype()), t.shape().to_string(), dtype_name(it.dtypes[i]),
          it.shapes[i].to_string()));
    out.push_back(t);
  }
  ++it.index;
  return out;
}

}  // namespace

Element Dataset::traced_reduce(Element initial, const std::function<Element(const Element&, const Element&)>& fn,
                               const std::function<Tensor(const Element&)>& keep_going) const {
  auto it = std::make_shared<LoopIterator>();
  it->node = node_;
  element_types(*it);
  std::vector<DType> next_dtypes{DType::Bool};
  std::vector<Shape> next_shapes{Shape{}};
  next_dtypes.insert(next_dtypes.end(), it->dtypes.begin(), it->dtypes.end());
  next_shapes.insert(next_shapes.end(), it->shapes.begin(), it->shapes.end());

  // A new pass on every call: over the datasets the call feeds when this one
  // comes from arguments, else over the traced dataset (the first pass from
  // the cursor that read its element types, if one did).
  Tensor token = host_function(
      // The fed datasets' rebuild, not fed_: its handles are this trace's
      // symbolic tensors, which hold the graph this callback lives in.
      [it, fed = bool(fed_), rebuild = fed_ ? fed_->rebuild : nullptr](const std::vector<Tensor>& handles) {
        NodePtr fed_node;
        if (fed) {
          std::vector<NodePtr> nodes;
          for (const Tensor& handle : handles)
            nodes.push_back(std::static_pointer_cast<const detail::DatasetNode>(
                kiln::detail::object_in_handle(handle, typeid(detail::DatasetNode))));
          fed_node = Dataset::Fed::apply(rebuild, nodes);
        }
        std::lock_guard<std::mutex> lock(it->mutex);
        if (fed) it->node = std::move(fed_node);
        if (!fed && it->traced_cursor) {
          it->cursor = std::move(it->traced_cursor);  // lookahead holds its first element
        } else {
          it->cursor = it->node->open();
          it->lookahead.reset();
        }
        it->index = 0;
        return std::vector<Tensor>{constant(0)};
      },
      fed_ ? fed_->handles : std::vector<Tensor>{}, {DType::Int32}, {Shape{}})[0];

  std::vector<Tensor> vars{constant(true), token};
  vars.insert(vars.end(), initial.begin(), initial.end());
  const std::size_t n_state = initial.size();
  std::vector<Tensor> out = while_loop(
      [&](const std::vector<Tensor>& v) {
        if (!keep_going) return v[0];
        // Checked before the next pull: once it is false, no element is pulled.
        return logical_and(v[0], keep_going_flag(keep_going(Element(v.begin() + 2, v.end()))));
      },
      [&](const std::vector<Tensor>& v) {
        std::vector<Tensor> got =
            host_function([it](const std::vector<Tensor>&) { return pull(*it); }, {v[1]}, next_dtypes, next_shapes);
        Tensor ok = got[0];
        Element element(got.begin() + 1, got.end());
        Element state(v.begin() + 2, v.end());
        Element next;
        if (n_state == 0) {
          cond(ok, [&] { fn(state, element); return ok; }, [&] { return ok; });
        } else {
          next = cond(ok, [&] { return fn(state, element); }, [&] { return state; });
        }
        std::vector<Tensor> r{ok, v[1]};
        r.insert(r.end(), next.begin(), next.end());
        return r;
      },
      vars, WhileOptions{.relax_shapes = true});  // the state's dims relax, as tf.data's reduce
  return Element(out.begin() + 2, out.end());
}

void Dataset::for_each(const std::function<void(const Element&)>& fn) const {
  reduce({}, [&](const Element& state, const Element& element) {
    fn(element);
    return state;
  });
}

}  // namespace kiln::data
