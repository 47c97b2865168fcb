#pragma once
// The state behind a Variable and the ops that read and update it.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "schema/op_def.h"

namespace kiln::ops {
struct MatmulLayout;
}  // namespace kiln::ops

namespace kiln::detail {

// The state behind a Variable: its value, dense, and a cache of the value
// packed in weight layouts (ops/matmul_layout.h) for graphs that read it so,
// made on a read. Every write goes through set_value, value_to_update or
// update_target, which drop the packed forms, except that Adam's update
// (update_target) keeps one read since the last update, where no dense read
// came between, as the value alone: a traced step reading its weight packed
// alone. A dense read then makes the dense value from it, once per update.
// Every member function needs `mutex` held.
class VariableState {
 public:
  std::mutex mutex;
  DType dtype;
  Shape shape;
  std::string name;
  bool trainable = true;

  bool has_value() const { return value_.defined() || !packed_.empty(); }
  DType value_dtype() const { return value_.defined() ? value_.dtype() : DType::Float32; }
  Shape value_shape() const;
  // The value, dense.
  const Tensor& value();
  void set_value(Tensor v);
  // The dense value to update in place (its owner's rule: replace it where a
  // reader still holds it).
  Tensor& value_to_update();
  // The value handed over: the variable is left without one (an update sets
  // the new one, or the same one back on failure).
  Tensor take_value() { return std::move(value_to_update()); }
  // The value (a float32 matrix), or its transpose, packed in `layout`.
  const Tensor& packed(const ops::MatmulLayout& layout, bool transposed);
  // What Adam's update writes: a packed form alone (`layout` set: written
  // through its rows), or the dense value.
  struct Target {
    Tensor* tensor;
    const ops::MatmulLayout* layout;
  };
  Target update_target();
  bool holds_dense() const { return value_.defined(); }
  bool holds_packed() const { return !packed_.empty(); }

 private:
  struct Packed {
    const ops::MatmulLayout* layout;
    bool transposed;
    Tensor tensor;
    bool read;  // since the last update
  };
  Tensor value_;  // null until initialized, or while packed_[0] holds the value alone
  bool dense_read_ = false;  // since the last update
  std::vector<Packed> packed_;
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
