// kiln::InitScope: lifts ops out of the graph being traced by clearing the
// thread's dispatch handler for the scope's lifetime.
#include "kiln/init_scope.h"

#include "runtime/dispatch.h"

namespace kiln {

InitScope::InitScope() : saved_(detail::thread_state.handler) { detail::thread_state.handler = nullptr; }

InitScope::~InitScope() { detail::thread_state.handler = saved_; }

}  // namespace kiln
