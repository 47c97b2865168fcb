#include "exec/cancellation.h"

#include <fmt/format.h>

#include "kiln/error.h"

namespace kiln {

CancellationScope::CancellationScope(const Cancellation& cancellation)
    : cancel_(cancellation.cancel), outer_(detail::current_cancellation) {
  if (cancellation.timeout) {
    if (!(cancellation.timeout->count() >= 0))
      throw InvalidArgument(fmt::format("CancellationScope: the timeout must be at least 0 seconds, got {}",
                                        cancellation.timeout->count()));
    timeout_ = *cancellation.timeout;
    // A timeout past what the clock holds (1e300 s) is no deadline at all.
    if (timeout_ < std::chrono::duration<double>(std::chrono::hours(24 * 365 * 100)))
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout_);
  }
  // The earliest deadline of the enclosing scopes is this one's too, so a
  // check reads the clock once however deep the scopes nest.
  if (outer_ && outer_->deadline_ && (!deadline_ || *outer_->deadline_ < *deadline_)) {
    deadline_ = outer_->deadline_;
    timeout_ = outer_->timeout_;
  }
  detail::current_cancellation = this;
}

CancellationScope::~CancellationScope() { detail::current_cancellation = outer_; }

bool CancellationScope::should_stop() const {
  for (const CancellationScope* s = this; s; s = s->outer_)
    if (s->cancel_ && s->cancel_->load(std::memory_order_relaxed)) return true;
  return deadline_ && std::chrono::steady_clock::now() >= *deadline_;
}

void CancellationScope::throw_stop(const std::string& where) const {
  const std::string before = where.empty() ? "" : ", before " + where;
  for (const CancellationScope* s = this; s; s = s->outer_)
    if (s->cancel_ && s->cancel_->load(std::memory_order_relaxed))
      throw Cancelled(fmt::format("the call was cancelled{}", before));
  if (deadline_ && std::chrono::steady_clock::now() >= *deadline_)
    throw DeadlineExceeded(fmt::format("the call ran past its deadline of {} s{}", timeout_.count(), before));
  throw Internal("CancellationScope::throw_stop: nothing says stop");
}

namespace exec {

std::string node_text(const graph::Node& n) { return fmt::format("node '{}' ({})", n.name, n.op->name); }

}  // namespace exec

}  // namespace kiln
