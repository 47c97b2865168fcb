#pragma once
// The traces of one kiln::function and how a call finds its own (TF's
// FunctionCache): exact keys in a hash map, relaxed traces matched by spec,
// least recently used evicted first. One rule, `mismatch`, says whether a
// call fits a trace; the cache and ConcreteFunction's checks both use it.
#include <cstddef>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "function/traced_graph.h"

namespace kiln::function_impl {

// The first atom where a call's key does not fit a traced key, and why.
struct KeyMismatch {
  enum class Why {
    Size,    // different number of atoms: another structure
    Kind,    // a tensor where a variable was traced, a list where a tuple was...
    Spec,    // a tensor or variable of another dtype, rank or incompatible shape
    Value,   // another Python/C++ value, container size or type name
  };
  std::size_t atom = 0;  // 0 for Size
  Why why = Why::Size;
};
// Nothing when `call` fits `traced`: same atoms, tensor shapes compatible with
// the traced ones (a None dim or an unknown rank accepts any).
std::optional<KeyMismatch> mismatch(const detail::TraceKey& traced, const detail::TraceKey& call);

// Whether `a` and `b` differ only in tensor dims (same dtypes and ranks).
bool same_except_dims(const detail::TraceKey& a, const detail::TraceKey& b);
// `a` with every tensor dim that differs from `b` made unknown.
detail::TraceKey relax(const detail::TraceKey& a, const detail::TraceKey& b);

using Entry = std::shared_ptr<detail::TracedGraph>;

// Not thread-safe: FunctionCore holds its lock around every use.
class TraceCache {
 public:
  explicit TraceCache(int max_entries) : max_entries_(max_entries < 1 ? 1 : max_entries) {}

  // The trace for a call with `key`: an exact hit, else a relaxed trace that
  // accepts it (its exact key is then remembered, so the next such call is
  // one hash lookup), else null. The entry found becomes the most recent.
  Entry match(const detail::TraceKey& key);
  // The trace made for exactly `key` (get_concrete_function's lookup: specs
  // name the trace they ask for), else null.
  Entry find(const detail::TraceKey& key) const;
  // The key to trace for a call that missed: scans every live trace, most recently
  // used first (not only the last one traced), and relaxes `key` against the first
  // whose key differs from it only in dims (same structure); with that trace.
  struct Generalized {
    detail::TraceKey key;
    Entry from;  // null: nothing to relax against, `key` is traced as it is
  };
  Generalized generalize(const detail::TraceKey& key) const;
  // A new trace, found under `call_key` from now on, as the most recent;
  // the least recently used beyond the capacity are evicted.
  void add(const detail::TraceKey& call_key, const Entry& entry);

  // Every live trace, least recently used first.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  void touch(const Entry& e);
  void forget_relaxed_keys();
  void evict_if_full();

  static constexpr std::size_t kMaxExactKeys = 1024;
  int max_entries_;
  std::unordered_map<detail::TraceKey, Entry, detail::TraceKeyHash> exact_;
  std::vector<Entry> entries_;
};

}  // namespace kiln::function_impl
