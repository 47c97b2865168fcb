#include "trace/tracing_context.h"

#include <fmt/format.h>

namespace kiln::trace {

TracingContext::TracingContext(std::shared_ptr<graph::Graph> graph) : graph_(std::move(graph)) {}

Tensor TracingContext::add_parameter(const schema::TensorType& type, std::string_view name) {
  return symbolic({graph_->add_parameter(type, name), 0});
}

Tensor TracingContext::symbolic(const graph::Value& v) {
  const schema::TensorType& t = graph_->type_of(v);
  return core::make_symbolic(t.dtype, t.shape, v.node, v.index, graph_);
}

graph::Value TracingContext::value_of(const Tensor& t) {
  detail::TensorImpl* impl = t.impl();
  if (impl->symbolic && impl->graph_owner.get() == graph_.get()) return {impl->node, impl->output_index};
  auto it = captured_.find(impl);
  if (it != captured_.end()) return it->second;
  graph::Node* placeholder = graph_->add_capture(t, "capture");
  graph::Value v{placeholder, 0};
  captured_.emplace(impl, v);
  return v;
}

std::optional<graph::Value> TracingContext::find_value(const Tensor& t) const {
  const detail::TensorImpl* impl = t.impl();
  if (impl->symbolic && impl->graph_owner.get() == graph_.get()) return graph::Value{impl->node, impl->output_index};
  auto it = captured_.find(impl);
  if (it != captured_.end()) return it->second;
  return std::nullopt;
}

std::size_t TracingContext::ConsHash::operator()(const ConsKey& k) const {
  std::size_t h = std::hash<const void*>()(k.op);
  for (const graph::Value& v : k.inputs)
    h = h * 1000003u ^ (std::hash<const void*>()(v.node) + static_cast<std::size_t>(v.index));
  return h ^ schema::attrs_hash(*k.attrs);
}

bool TracingContext::ConsEq::operator()(const ConsKey& a, const ConsKey& b) const {
  if (a.op != b.op || a.inputs.size() != b.inputs.size()) return false;
  for (std::size_t i = 0; i < a.inputs.size(); ++i)
    if (!(a.inputs[i] == b.inputs[i])) return false;
  return schema::attrs_equal(*a.attrs, *b.attrs);
}

runtime::TensorList TracingContext::dispatch(const detail::OpDef& op, std::span<const Tensor> inputs,
                                             schema::Attrs&& attrs, const SourceLocation& loc) {
  detail::SmallVector<graph::Value, 3> values;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined())
      throw InvalidArgument(fmt::format("{}: input {} is a null tensor", op.name, i));
    values.push_back(value_of(inputs[i]));
  }
  bool stateful = op.is(schema::kStateful);
  graph::Node* node = nullptr;
  const bool mergeable = op.mergeable();
  if (mergeable) {
    ConsKey probe{&op, values, &attrs};
    auto it = conses_.find(probe);
    if (it != conses_.end()) node = it->second;
  }
  if (!node) {
    node = graph_->add_node(op, std::span<const graph::Value>(values.data(), values.size()),
                            std::move(attrs), loc);
    if (stateful) {
      if (last_stateful_) node->control_inputs.push_back(last_stateful_);
      last_stateful_ = node;
    } else if (mergeable) {
      conses_.emplace(ConsKey{&op, values, &node->attrs}, node);
    }
  }
  dispatch_nodes_.push_back(node);
  runtime::TensorList out;
  for (int i = 0; i < static_cast<int>(node->outputs.size()); ++i) out.push_back(symbolic({node, i}));
  return out;
}

}  // namespace kiln::trace
