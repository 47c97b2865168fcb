// kiln::InitScope: lifts ops out of the graph being traced by clearing the
// thread's dispatch handler for the scope's lifetime.
#include "kiln/init_scope.h"

#include "runtime/dispatch.h"

namespace kiln {

InitScope::InitScope() : saved_(runtime::thread_state.handler) { runtime::thread_state.handler = nullptr; }

InitScope::~InitScope() { runtime::thread_state.handler = saved_; }

}  // namespace kiln
