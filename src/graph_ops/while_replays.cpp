// The table of While gradients' replays of their forward loops.
#include "graph_ops/while_replays.h"

#include <mutex>
#include <unordered_map>

namespace kiln::graph_ops {

namespace {

struct Entry {
  // Weak, so the table keeps no graph alive; a replay body's address may be
  // reused once it is gone, which `self` tells.
  std::weak_ptr<const graph::Graph> self, cond, body;
  std::size_t inputs, outputs, stacks_from;
};

struct Table {
  std::mutex mutex;
  std::unordered_map<const graph::Graph*, Entry> entries;
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

void note_while_replay(const std::shared_ptr<const graph::Graph>& replay_body, const WhileReplay& replay) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  std::erase_if(t.entries, [](const auto& e) { return e.second.self.expired(); });
  t.entries[replay_body.get()] =
      Entry{replay_body, replay.cond, replay.body, replay.inputs, replay.outputs, replay.stacks_from};
}

std::optional<WhileReplay> while_replay_of(const graph::Graph* replay_body) {
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.entries.find(replay_body);
  if (it == t.entries.end()) return std::nullopt;
  std::shared_ptr<const graph::Graph> self = it->second.self.lock();
  WhileReplay r{it->second.cond.lock(), it->second.body.lock(), it->second.inputs, it->second.outputs,
                it->second.stacks_from};
  if (self.get() != replay_body || !r.cond || !r.body) return std::nullopt;
  return r;
}

}  // namespace kiln::graph_ops
