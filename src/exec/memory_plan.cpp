#include "exec/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "core/tensor_impl.h"

namespace kiln::exec {

namespace {

constexpr int64_t kAlign = 64;
// Values this large or larger get no place in the arena (see plan_memory).
// Below it, offsets and the arena's size stay far from int64's range even
// with millions of values.
constexpr int64_t kLargestPlannedBytes = int64_t{1} << 30;
int64_t align_up(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(int n) : parent(static_cast<std::size_t>(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(int a, int b) { parent[find(a)] = find(b); }
};

bool plain_old_data(DType d) { return d != DType::String && d != DType::Resource; }

struct Candidate {
  int step, output, slot;
  int64_t bytes;
  int first, last;  // the group's lifetime, in steps
};

// First fit by decreasing size: each allocation takes the lowest offset
// clear of every placed allocation whose lifetime overlaps its own.
std::vector<int64_t> place(const std::vector<Candidate>& c, int64_t* data_bytes) {
  std::vector<int> order(c.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c[a].bytes > c[b].bytes; });
  std::vector<int64_t> offset(c.size(), -1);
  std::vector<int> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [begin, end) of overlapping placed ones
  *data_bytes = 0;
  for (int i : order) {
    busy.clear();
    for (int j : placed)
      if (c[j].first <= c[i].last && c[i].first <= c[j].last) busy.emplace_back(offset[j], offset[j] + c[j].bytes);
    std::sort(busy.begin(), busy.end());
    int64_t at = 0;
    for (const auto& [begin, end] : busy) {
      if (begin >= at + c[i].bytes) break;
      at = std::max(at, align_up(end));
    }
    offset[i] = at;
    placed.push_back(i);
    *data_bytes = std::max(*data_bytes, at + c[i].bytes);
  }
  return offset;
}

}  // namespace

MemoryPlan plan_memory(const graph::Graph& graph, std::span<Step> steps, int num_slots,
                       std::span<const int> fed_slots, std::span<const int> result_slots) {
  const int n = static_cast<int>(steps.size());
  std::vector<int> defined_at(num_slots, -1), last_read(num_slots, -1);
  std::vector<char> fed(num_slots, 0), escapes(num_slots, 0);
  for (int s : fed_slots) fed[s] = 1;
  for (int s : result_slots) escapes[s] = 1;
  UnionFind groups(num_slots);
  std::vector<char> donated(static_cast<std::size_t>(n), 0);  // output 0 overwrites an input

  for (int i = 0; i < n; ++i) {
    Step& st = steps[i];
    const detail::OpDef& op = *st.node->op;
    for (int s : st.outputs) defined_at[s] = i;
    for (int s : st.inputs) last_read[s] = i;
    // A stateful op may keep its inputs; a background op reads them after
    // its step, until it finishes.
    if (st.node->is_stateful() || op.start)
      for (int s : st.inputs) escapes[s] = 1;
    if (op.is(schema::kSetsOwnOutputs)) {
      // The outputs may view any input: one lifetime for all of them.
      for (int out : st.outputs)
        for (int in : st.inputs) groups.join(out, in);
    } else if (op.is(schema::kMayRunInPlace) && !st.outputs.empty()) {
      // The kernel may write output 0 over an input read for the last time
      // (dispatch's donation): they share storage, so one lifetime. Fed
      // inputs are the caller's, never in the arena, so they do not count.
      const schema::TensorType& out = st.node->outputs[0];
      for (std::size_t k = 0; k < st.inputs.size(); ++k) {
        const schema::TensorType& in = graph.type_of(st.node->inputs[k]);
        if (!st.last_use[k] || fed[st.inputs[k]] || in.dtype != out.dtype || in.shape != out.shape) continue;
        groups.join(st.outputs[0], st.inputs[k]);
        donated[static_cast<std::size_t>(i)] = 1;
      }
    }
  }
  for (int s = 0; s < num_slots; ++s)
    if (escapes[s]) escapes[groups.find(s)] = 1;

  // Each group's lifetime.
  std::vector<int> first(num_slots, n), last(num_slots, -1);
  for (int s = 0; s < num_slots; ++s) {
    if (defined_at[s] < 0 && !fed[s]) continue;
    int g = groups.find(s);
    int def = fed[s] ? 0 : defined_at[s];
    first[g] = std::min(first[g], def);
    last[g] = std::max({last[g], def, last_read[s]});
  }

  std::vector<Candidate> candidates;
  for (int i = 0; i < n; ++i) {
    Step& st = steps[i];
    st.arena_allocation.clear();
    for (std::size_t k = 0; k < st.outputs.size(); ++k) st.arena_allocation.push_back(-1);
    // A background op's outputs are written after its step: not in the arena.
    if (!st.static_types || st.node->op->is(schema::kSetsOwnOutputs) || st.node->op->start) continue;
    for (std::size_t k = 0; k < st.outputs.size(); ++k) {
      const schema::TensorType& t = st.node->outputs[k];
      int slot = st.outputs[k];
      int g = groups.find(slot);
      if ((k == 0 && donated[static_cast<std::size_t>(i)]) || escapes[g] || !plain_old_data(t.dtype)) continue;
      int64_t bytes = t.shape.num_elements() * static_cast<int64_t>(dtype_size(t.dtype));
      // A value of 1 GiB or more is allocated by its own step: the arena gains
      // little on it, and a size the machine cannot hold then fails naming the
      // op (ResourceExhausted) instead of failing the arena for the whole call.
      if (bytes == 0 || bytes >= kLargestPlannedBytes) continue;
      candidates.push_back({i, static_cast<int>(k), slot, bytes, first[g], last[g]});
    }
  }

  MemoryPlan plan;
  plan.ends.resize(static_cast<std::size_t>(n));
  if (candidates.empty()) return plan;
  std::vector<int64_t> offset = place(candidates, &plan.data_bytes);
  plan.data_start = align_up(static_cast<int64_t>(candidates.size() * core::Buffer::kHeaderBytes));
  plan.arena_bytes = plan.data_start + plan.data_bytes;
  for (std::size_t a = 0; a < candidates.size(); ++a) {
    const Candidate& c = candidates[a];
    Step& st = steps[c.step];
    const schema::TensorType& t = st.node->outputs[c.output];
    plan.allocations.push_back({t.dtype, t.shape.num_elements(), offset[a], c.bytes, c.first, c.last});
    plan.total_bytes += c.bytes;
    st.arena_allocation[c.output] = static_cast<int>(a);
    st.uses_arena = true;
    plan.ends[c.last].push_back(static_cast<int>(a));
  }
  return plan;
}

}  // namespace kiln::exec
