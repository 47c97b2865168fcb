#pragma once
// Variable: the only mutable state (docs/design-notes.md, "Foundation"). Inside a graph it is
// passed as a resource handle, so updates a graph makes are seen outside it.
#include <memory>
#include <string>

#include "kiln/detail/trace.h"
#include "kiln/error.h"
#include "kiln/tensor.h"

namespace kiln {

namespace detail {
struct VariableState;
struct OpDef;
}

struct VariableOptions {
  std::string name;  // default "Variable"
  bool trainable = true;
};

class Variable {
 public:
  // A null variable: `if (!v) v = Variable(...)` creates one on first use.
  Variable() = default;
  Variable(const Tensor& initial_value, VariableOptions options = {},
           SourceLocation loc = SourceLocation::current());
  Variable(const Scalar& initial_value, VariableOptions options = {},
           SourceLocation loc = SourceLocation::current());

  // Whether this handle refers to a variable.
  explicit operator bool() const { return state_ != nullptr; }
  // `!v`: null (not the logical not of the value, which is logical_not(v)).
  bool operator!() const { return state_ == nullptr; }
  DType dtype() const;
  const Shape& shape() const;
  const std::string& name() const;
  bool trainable() const;
  void set_trainable(bool trainable);

  // The current value (a graph node while tracing).
  Tensor read_value(SourceLocation loc = SourceLocation::current()) const;
  operator Tensor() const { return read_value(); }

  // Updates; the value must have the variable's dtype (C++ numbers are
  // weakly typed) and a compatible shape.
  void assign(const Operand& value, SourceLocation loc = SourceLocation::current()) const;
  void assign_add(const Operand& delta, SourceLocation loc = SourceLocation::current()) const;
  void assign_sub(const Operand& delta, SourceLocation loc = SourceLocation::current()) const;

  // The resource handle (symbolic while a graph that takes it is traced).
  const Tensor& handle() const { return handle_; }
  // Same variable, another handle to it (used by tracing).
  Variable with_handle(Tensor handle) const;
  // The variable a concrete resource handle refers to (InvalidArgument for
  // another tensor).
  static Variable from_handle(const Tensor& handle);
  const std::shared_ptr<detail::VariableState>& state() const { return state_; }

 private:
  void update(const detail::OpDef& op, const Operand& value, SourceLocation loc) const;
  std::shared_ptr<detail::VariableState> state_;
  Tensor handle_;
};

namespace detail {
template <> struct TraceTraits<Variable> {
  using Rebuilt = Variable;
  static void flatten(const Variable& v, Flattener& f) {
    if (!v) throw InvalidArgument("kiln::function: an argument is a null Variable");
    f.variable(v.handle(), v.dtype(), v.shape());
  }
  static Variable rebuild(const Variable& v, Rebuilder& r) { return v.with_handle(r.next()); }
  static void flatten_result(const Variable& v, ResultFlattener& f) { f.leaf(v.read_value()); }
  static Tensor unflatten(ResultReader& r) { return r.leaf(); }
};
}  // namespace detail

}  // namespace kiln
