#include "graph_ops/while_trip_count.h"

#include <algorithm>

#include "core/tensor_impl.h"
#include "kiln/array.h"
#include "kiln/math.h"
#include "ops/known_ops.h"

namespace kiln::graph_ops {

namespace {

using graph::Graph;
using graph::Node;

// Where `node` sits among g's parameters (the loop variables) or, after
// them, its captures: the index of the While input it stands for.
std::optional<std::size_t> input_index(const Graph& g, const Node* node, std::size_t vars) {
  const auto& params = g.parameters();
  if (auto it = std::find(params.begin(), params.end(), node); it != params.end())
    return static_cast<std::size_t>(it - params.begin());
  const auto& caps = g.captures();
  for (std::size_t j = 0; j < caps.size(); ++j)
    if (caps[j].placeholder == node) return vars + j;
  return std::nullopt;
}

bool is_int32_scalar(const schema::TensorType& t) { return t.dtype == DType::Int32 && t.shape == Shape{}; }

std::optional<int32_t> int32_constant(const Node& n) {
  const Tensor* value = graph::const_value(n);
  if (!value || !is_int32_scalar(n.outputs[0])) return std::nullopt;
  return *core::data_of<int32_t>(*value);
}

// The value of an int32 scalar While input known while tracing: a concrete
// tensor, or the outer graph's constant.
std::optional<int32_t> int32_constant(const Tensor& t) {
  if (t.dtype() != DType::Int32 || t.shape() != Shape{}) return std::nullopt;
  return t.is_symbolic() ? int32_constant(*t.impl()->node) : std::optional<int32_t>(t.item<int32_t>());
}

// The constant a value of g is: a Const of g, or a capture of one (for_range
// captures its delta).
std::optional<int32_t> constant_in(const Graph& g, const Node* node, std::span<const Tensor> inputs,
                                   std::size_t vars) {
  if (std::optional<int32_t> c = int32_constant(*node)) return c;
  std::optional<std::size_t> at = input_index(g, node, vars);
  if (!at || *at < vars) return std::nullopt;
  return int32_constant(inputs[*at]);
}

}  // namespace

std::optional<Tensor> trip_count(const Graph& cond, const Graph& body, std::span<const Tensor> inputs,
                                 std::size_t vars) {
  if (cond.results().size() != 1 || cond.parameters().size() != vars || body.parameters().size() != vars ||
      cond.captures().size() != inputs.size() - vars)
    return std::nullopt;
  const Node& less = *cond.results()[0].node;
  if (less.op != &ops::less_op() || less.inputs.size() != 2) return std::nullopt;
  // The counter: a loop variable the body adds 1 to.
  std::optional<std::size_t> counter = input_index(cond, less.inputs[0].node, vars);
  if (!counter || *counter >= vars || !is_int32_scalar(cond.type_of(less.inputs[0]))) return std::nullopt;
  const Node& next = *body.results()[*counter].node;
  if (next.op != &ops::add_op() || next.inputs.size() != 2) return std::nullopt;
  const Node* counter_param = body.parameters()[*counter];
  const bool counter_first = next.inputs[0].node == counter_param;
  const Node& step = *next.inputs[counter_first ? 1 : 0].node;
  if ((!counter_first && next.inputs[1].node != counter_param) || constant_in(body, &step, inputs, vars) != 1)
    return std::nullopt;
  // The limit: a constant, a capture, or a loop variable the body passes on.
  const Node& limit_node = *less.inputs[1].node;
  if (!is_int32_scalar(cond.type_of(less.inputs[1]))) return std::nullopt;
  Tensor limit;
  if (std::optional<int32_t> c = int32_constant(limit_node)) {
    limit = constant(*c);  // a Const of the graph being traced, not a capture of cond's tensor
  } else {
    std::optional<std::size_t> at = input_index(cond, &limit_node, vars);
    if (!at) return std::nullopt;
    if (*at < vars && body.results()[*at].node != body.parameters()[*at]) return std::nullopt;
    limit = inputs[*at];
  }
  return maximum(limit - inputs[*counter], 0);
}

}  // namespace kiln::graph_ops
