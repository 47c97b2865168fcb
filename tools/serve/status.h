#pragma once
// A failed request: TensorFlow's error code and a message. TF Serving's REST
// API answers {"error": message} with the HTTP status its code maps to
// (http_status below), so every layer of kiln-serve throws these.
#include <stdexcept>
#include <string>
#include <string_view>

namespace kiln::serve {

enum class Code { InvalidArgument, FailedPrecondition, NotFound, DeadlineExceeded, ResourceExhausted, Unavailable,
                  Unimplemented, Internal };

class ServeError : public std::runtime_error {
 public:
  ServeError(Code code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Code code() const { return code_; }

 private:
  Code code_;
};

// TF Serving's mapping of error codes to HTTP statuses (400 for a bad
// request, 404 for a missing model, 429 when overloaded, ...).
inline int http_status(Code code) {
  switch (code) {
    case Code::InvalidArgument:
    case Code::FailedPrecondition: return 400;
    case Code::NotFound: return 404;
    case Code::DeadlineExceeded: return 504;
    case Code::ResourceExhausted: return 429;
    case Code::Unavailable: return 503;
    case Code::Unimplemented: return 501;
    case Code::Internal: return 500;
  }
  return 500;
}

// The name TF gives the code in status JSON ("INVALID_ARGUMENT").
inline std::string_view code_name(Code code) {
  switch (code) {
    case Code::InvalidArgument: return "INVALID_ARGUMENT";
    case Code::FailedPrecondition: return "FAILED_PRECONDITION";
    case Code::NotFound: return "NOT_FOUND";
    case Code::DeadlineExceeded: return "DEADLINE_EXCEEDED";
    case Code::ResourceExhausted: return "RESOURCE_EXHAUSTED";
    case Code::Unavailable: return "UNAVAILABLE";
    case Code::Unimplemented: return "UNIMPLEMENTED";
    case Code::Internal: return "INTERNAL";
  }
  return "UNKNOWN";
}

[[noreturn]] inline void fail(Code code, const std::string& message) { throw ServeError(code, message); }

}  // namespace kiln::serve
