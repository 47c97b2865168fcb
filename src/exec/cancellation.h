#pragma once
// The executor's side of kiln/cancellation.h: the check between ops (and
// between While iterations).
#include <string>

#include "graph/graph.h"
#include "kiln/cancellation.h"

namespace kiln::exec {

// Throws DeadlineExceeded or Cancelled, naming `where()` (called only then),
// when the thread's CancellationScope says stop. Without a scope: one
// thread-local load.
template <class Where> void check_cancellation(Where&& where) {
  if (const CancellationScope* scope = kiln::detail::current_cancellation) [[unlikely]]
    if (scope->should_stop()) scope->throw_stop(where());
}

// "node 'name' (Op)", for the check before a step.
std::string node_text(const graph::Node& n);

}  // namespace kiln::exec
