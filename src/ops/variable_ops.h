#pragma once
// The state behind a Variable and the ops that read and update it.
#include <memory>
#include <mutex>
#include <string>

#include "schema/op_def.h"

namespace kiln::detail {

struct VariableState {
  std::mutex mutex;
  Tensor value;  // null until initialized
  DType dtype;
  Shape shape;
  std::string name;
  bool trainable = true;
};

}  // namespace kiln::detail

namespace kiln::ops {

// A scalar resource tensor holding `state`.
Tensor make_resource(const std::shared_ptr<detail::VariableState>& state);
// The handle of a new variable holding `value` (the samples of ops on variables).
Tensor sample_resource(const Tensor& value, std::string name);

// The state a concrete resource tensor holds.
detail::VariableState& resource_state(const Tensor& handle);
// Throws FailedPrecondition: `s` has no value yet (set by a graph's first run).
[[noreturn]] void uninitialized(const detail::VariableState& s);

const detail::OpDef& read_variable_op();
const detail::OpDef& assign_variable_op();
const detail::OpDef& assign_add_variable_op();
const detail::OpDef& assign_sub_variable_op();
// Assigns only if the variable has no value yet: a graph initializes the
// variables its first trace created from arguments.
const detail::OpDef& initialize_variable_op();

}  // namespace kiln::ops
