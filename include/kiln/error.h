#pragma once
// Kiln's exceptions mirror TensorFlow's error kinds. Every message names the op
// or function, the argument, what was expected and what came.
#include <stdexcept>
#include <string>

namespace kiln {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A bad argument: wrong shape, dtype, axis, index, value.
class InvalidArgument : public Error { public: using Error::Error; };
// The system is not in a state to do this (e.g. variables created on a retrace).
class FailedPrecondition : public Error { public: using Error::Error; };
// An index or iteration ran past the end.
class OutOfRange : public Error { public: using Error::Error; };
// A named thing (op, file, signature) does not exist.
class NotFound : public Error { public: using Error::Error; };
// Valid, but not supported (yet).
class Unimplemented : public Error { public: using Error::Error; };
// Not enough memory (or another resource) for a valid request: a tensor
// larger than the machine can hold. TF's ResourceExhaustedError ("OOM when
// allocating..."); the message names the op, the shape and the bytes wanted.
class ResourceExhausted : public Error { public: using Error::Error; };
// A bug in Kiln.
class Internal : public Error { public: using Error::Error; };

}  // namespace kiln
