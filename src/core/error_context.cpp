#include "core/error_context.h"

#include <new>
#include <stdexcept>

#include "kiln/cancellation.h"  // DeadlineExceeded, Cancelled
#include "kiln/error.h"

namespace kiln::core {

[[noreturn]] void rethrow_edited(const std::function<std::string(std::string_view)>& edit) {
  try {
    throw;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(edit(e.what()));
  } catch (const FailedPrecondition& e) {
    throw FailedPrecondition(edit(e.what()));
  } catch (const OutOfRange& e) {
    throw OutOfRange(edit(e.what()));
  } catch (const NotFound& e) {
    throw NotFound(edit(e.what()));
  } catch (const Unimplemented& e) {
    throw Unimplemented(edit(e.what()));
  } catch (const ResourceExhausted& e) {
    throw ResourceExhausted(edit(e.what()));
  } catch (const DeadlineExceeded& e) {
    throw DeadlineExceeded(edit(e.what()));
  } catch (const Cancelled& e) {
    throw Cancelled(edit(e.what()));
  } catch (const Internal& e) {
    throw Internal(edit(e.what()));
  } catch (const Error& e) {
    throw Error(edit(e.what()));
  } catch (const std::bad_alloc&) {
    throw ResourceExhausted(edit("out of memory (std::bad_alloc)"));
  } catch (const std::length_error& e) {
    throw ResourceExhausted(edit(std::string("out of memory (") + e.what() + ")"));
  } catch (const std::exception& e) {
    throw Error(edit(e.what()));
  }
}

[[noreturn]] void rethrow_with_context(std::string_view before, std::string_view after) {
  rethrow_edited([&](std::string_view what) {
    std::string out(before);
    out += what;
    out += after;
    return out;
  });
}

}  // namespace kiln::core
