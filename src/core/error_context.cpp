#include "core/error_context.h"

#include <new>
#include <stdexcept>
#include <string>

#include "kiln/error.h"

namespace kiln::detail {

[[noreturn]] void rethrow_with_context(std::string_view before, std::string_view after) {
  auto text = [&](const std::exception& e) { return std::string(before) + e.what() + std::string(after); };
  try {
    throw;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(text(e));
  } catch (const FailedPrecondition& e) {
    throw FailedPrecondition(text(e));
  } catch (const OutOfRange& e) {
    throw OutOfRange(text(e));
  } catch (const NotFound& e) {
    throw NotFound(text(e));
  } catch (const Unimplemented& e) {
    throw Unimplemented(text(e));
  } catch (const ResourceExhausted& e) {
    throw ResourceExhausted(text(e));
  } catch (const Internal& e) {
    throw Internal(text(e));
  } catch (const Error& e) {
    throw Error(text(e));
  } catch (const std::bad_alloc& e) {
    throw ResourceExhausted(std::string(before) + "out of memory (std::bad_alloc)" + std::string(after));
  } catch (const std::length_error& e) {
    throw ResourceExhausted(std::string(before) + "out of memory (" + e.what() + ")" + std::string(after));
  } catch (const std::exception& e) {
    throw Error(text(e));
  }
}

}  // namespace kiln::detail
