#include "exec/plan.h"

#include <fmt/format.h>

#include <unordered_map>

#include "runtime/dispatch.h"

namespace kiln::exec {

namespace {

std::string location_text(const graph::Node& n) {
  const SourceLocation& loc = n.location;
  if (loc.line() == 0) return fmt::format("node '{}' ({})", n.name, n.op->name);
  return fmt::format("node '{}' ({}), created at {}:{}", n.name, n.op->name, loc.file_name(), loc.line());
}

// Re-raises the active exception with the same kind, adding where in the
// user's code the failing node came from.
[[noreturn]] void rethrow_at(const graph::Node& n) {
  std::string where = "\n  raised by " + location_text(n);
  try {
    throw;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(e.what() + where);
  } catch (const FailedPrecondition& e) {
    throw FailedPrecondition(e.what() + where);
  } catch (const OutOfRange& e) {
    throw OutOfRange(e.what() + where);
  } catch (const NotFound& e) {
    throw NotFound(e.what() + where);
  } catch (const Unimplemented& e) {
    throw Unimplemented(e.what() + where);
  } catch (const Internal& e) {
    throw Internal(e.what() + where);
  } catch (const Error& e) {
    throw Error(e.what() + where);
  } catch (const std::exception& e) {
    throw Error(e.what() + where);
  }
}

}  // namespace

Plan::Plan(std::shared_ptr<const graph::Graph> g) : graph_(std::move(g)) {
  const graph::Graph& gr = *graph_;
  const auto& nodes = gr.nodes();
  // What the results and the stateful nodes need (placeholders, also
  // live, are graph-only: the caller feeds them).
  const std::vector<char> needed = gr.live_nodes();

  // Slots: one per output of every node (unused ones stay empty).
  std::vector<int> first_slot(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    first_slot[i] = num_slots_;
    num_slots_ += static_cast<int>(nodes[i]->outputs.size());
  }
  auto slot_of = [&](const graph::Value& v) { return first_slot[v.node->id] + v.index; };
  for (const graph::Node* p : gr.parameters()) input_slots_.push_back(first_slot[p->id]);
  for (const graph::Capture& c : gr.captures()) input_slots_.push_back(first_slot[c.placeholder->id]);
  for (const graph::Value& v : gr.results()) result_slots_.push_back(slot_of(v));

  for (const auto& node : nodes) {
    if (!needed[node->id] || node->op->is(detail::kGraphOnly)) continue;
    Step step;
    step.node = node.get();
    for (const graph::Value& v : node->inputs) step.inputs.push_back(slot_of(v));
    for (std::size_t k = 0; k < node->outputs.size(); ++k)
      step.outputs.push_back(first_slot[node->id] + static_cast<int>(k));
    step.last_use.resize(step.inputs.size());
    step.static_types = true;
    for (const graph::Value& v : node->inputs)
      step.static_types &= gr.type_of(v).shape.is_fully_defined();
    for (const detail::TensorType& t : node->outputs) step.static_types &= t.shape.is_fully_defined();
    steps_.push_back(std::move(step));
  }
  // Last uses, scanning backwards; results and inputs fed by the caller stay.
  std::vector<char> used_later(num_slots_, 0);
  for (int s : result_slots_) used_later[s] = 1;
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    for (std::size_t k = it->inputs.size(); k-- > 0;) {
      int s = it->inputs[k];
      it->last_use[k] = !used_later[s];
      used_later[s] = 1;
    }
  }
}

Plan::Frame Plan::new_frame(std::size_t num_inputs) const {
  if (num_inputs != input_slots_.size())
    throw Internal(fmt::format("plan of '{}' takes {} inputs, got {}", graph_->name(),
                               input_slots_.size(), num_inputs));
  return Frame(static_cast<std::size_t>(num_slots_));
}

std::vector<Tensor> Plan::run(std::span<const Tensor> inputs,
                              std::vector<std::vector<Tensor>>* all_values) const {
  Frame frame = new_frame(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    detail::require_concrete(inputs[i], "running a graph");
    frame[input_slots_[i]] = inputs[i];
  }
  return execute(frame, all_values);
}

std::vector<Tensor> Plan::run_consuming(std::span<Tensor> inputs, std::size_t consumed) const {
  Frame frame = new_frame(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    detail::require_concrete(inputs[i], "running a graph");
    frame[input_slots_[i]] = i < consumed ? std::move(inputs[i]) : inputs[i];
  }
  return execute(frame, nullptr);
}

std::vector<Tensor> Plan::execute(Frame& frame, std::vector<std::vector<Tensor>>* all_values) const {
  detail::SmallVector<Tensor, 4> args;
  for (const Step& step : steps_) {
    args.clear();
    for (std::size_t k = 0; k < step.inputs.size(); ++k) {
      Tensor& slot = frame[step.inputs[k]];
      if (step.last_use[k] && !all_values) args.push_back(std::move(slot));
      else args.push_back(slot);
    }
    const graph::Node& n = *step.node;
    try {
      std::span<const Tensor> in(args.data(), args.size());
      detail::TensorList outs =
          step.static_types
              ? detail::run_kernel(*n.op, in, n.attrs,
                                   std::span<const detail::TensorType>(n.outputs.data(), n.outputs.size()),
                                   &n.location)
              : detail::run_eager(*n.op, in, n.attrs, &n.location);
      for (std::size_t k = 0; k < step.outputs.size(); ++k) frame[step.outputs[k]] = std::move(outs[k]);
    } catch (...) {
      rethrow_at(n);
    }
  }
  if (all_values) {
    const auto& nodes = graph_->nodes();
    all_values->assign(nodes.size(), {});
    int slot = 0;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      for (std::size_t k = 0; k < nodes[i]->outputs.size(); ++k) (*all_values)[i].push_back(frame[slot++]);
  }
  std::vector<Tensor> results;
  results.reserve(result_slots_.size());
  for (int s : result_slots_) results.push_back(frame[s]);
  return results;
}

}  // namespace kiln::exec
