#include "function/trace_cache.h"

#include <iterator>

namespace kiln::function_impl {

namespace {
bool is_tensor_like(detail::KeyAtom::Kind k) {
  return k == detail::KeyAtom::Kind::Tensor || k == detail::KeyAtom::Kind::Variable;
}
}  // namespace

std::optional<KeyMismatch> mismatch(const detail::TraceKey& traced, const detail::TraceKey& call) {
  using Why = KeyMismatch::Why;
  if (traced.atoms.size() != call.atoms.size()) return KeyMismatch{0, Why::Size};
  for (std::size_t i = 0; i < traced.atoms.size(); ++i) {
    const detail::KeyAtom& want = traced.atoms[i];
    const detail::KeyAtom& got = call.atoms[i];
    if (want.kind != got.kind) return KeyMismatch{i, is_tensor_like(want.kind) ? Why::Kind : Why::Value};
    if (is_tensor_like(want.kind)) {
      if (want.dtype != got.dtype || !want.shape.is_compatible_with(got.shape) ||
          (want.shape.has_known_rank() && want.shape.rank() != got.shape.rank()))
        return KeyMismatch{i, Why::Spec};
    } else if (!(want == got)) {
      return KeyMismatch{i, Why::Value};
    }
  }
  return std::nullopt;
}

bool same_except_dims(const detail::TraceKey& a, const detail::TraceKey& b) {
  if (a.atoms.size() != b.atoms.size()) return false;
  for (std::size_t i = 0; i < a.atoms.size(); ++i) {
    const detail::KeyAtom& x = a.atoms[i];
    const detail::KeyAtom& y = b.atoms[i];
    if (x.kind == detail::KeyAtom::Kind::Tensor && y.kind == detail::KeyAtom::Kind::Tensor) {
      if (x.dtype != y.dtype || x.shape.rank() != y.shape.rank()) return false;
    } else if (!(x == y)) {
      return false;
    }
  }
  return true;
}

detail::TraceKey relax(const detail::TraceKey& a, const detail::TraceKey& b) {
  detail::TraceKey out;
  for (std::size_t i = 0; i < a.atoms.size(); ++i) {
    detail::KeyAtom atom = a.atoms[i];
    if (atom.kind == detail::KeyAtom::Kind::Tensor && atom.shape.has_known_rank()) {
      for (int d = 0; d < atom.shape.rank(); ++d)
        if (atom.shape[d] != b.atoms[i].shape[d]) atom.shape[d] = None;
    }
    out.add(std::move(atom));
  }
  return out;
}

Entry TraceCache::match(const detail::TraceKey& key) {
  Entry found;
  if (auto it = exact_.find(key); it != exact_.end()) {
    found = it->second;
  } else {
    for (const Entry& e : entries_) {
      if (e->relaxed && !mismatch(e->key, key)) {
        found = e;
        break;
      }
    }
    if (!found) return nullptr;
    // Bounded: a relaxed trace may see every size there is.
    if (exact_.size() >= kMaxExactKeys) forget_relaxed_keys();
    exact_.emplace(key, found);
  }
  touch(found);
  return found;
}

Entry TraceCache::find(const detail::TraceKey& key) const {
  if (auto it = exact_.find(key); it != exact_.end()) return it->second;
  for (const Entry& e : entries_)
    if (e->key == key) return e;  // a relaxed trace asked for by its own specs
  return nullptr;
}

TraceCache::Generalized TraceCache::generalize(const detail::TraceKey& key) const {
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it)
    if (same_except_dims((*it)->key, key)) return {relax(key, (*it)->key), *it};
  return {key, nullptr};
}

void TraceCache::add(const detail::TraceKey& call_key, const Entry& entry) {
  if (exact_.size() >= kMaxExactKeys) forget_relaxed_keys();
  exact_.emplace(call_key, entry);
  entries_.push_back(entry);
  evict_if_full();
}

void TraceCache::touch(const Entry& e) {
  if (!entries_.empty() && entries_.back() == e) return;  // the common case: same entry again
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i] == e) {
      entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  entries_.push_back(e);
}

void TraceCache::forget_relaxed_keys() {
  for (auto it = exact_.begin(); it != exact_.end();)
    it = it->second->relaxed ? exact_.erase(it) : std::next(it);
}

void TraceCache::evict_if_full() {
  while (static_cast<int>(entries_.size()) > max_entries_) {
    Entry victim = entries_.front();
    entries_.erase(entries_.begin());
    for (auto it = exact_.begin(); it != exact_.end();)
      it = it->second == victim ? exact_.erase(it) : std::next(it);
  }
}

}  // namespace kiln::function_impl
