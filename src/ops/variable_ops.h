#pragma once
// The state behind a Variable and the ops that read and update it.
#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "schema/op_def.h"

namespace kiln::ops {

// A float32 matrix variable's two panel forms (ops/nn_internal.h): of its
// value (the b of a dense layer's forward, x w) and of the value's transpose
// (a transposed b: h w^T).
enum class PanelsOf { kValue = 0, kTranspose = 1 };

}  // namespace kiln::ops

namespace kiln::detail {

// The state behind a Variable. Its value is held dense (what readers get)
// and, once a graph reads it so (the weight-rows pass), also with each row of
// the matrix `padding` elements longer: the form MatMul reads fastest as its
// b (ops/nn_internal.h). Updates write one form and drop the other: the one
// held, or where both are, the one read last (a traced step reading the
// longer rows keeps them with eager reads between steps; eager training
// after a traced evaluation keeps the dense value). Reading the other form
// then makes it again, once per update. Every member function needs `mutex`
// held.
// A graph may also read a float32 matrix in panels, of the value or of its
// transpose (the forms oneDNN's AVX-512 matmul reads its b in:
// ops/nn_internal.h), made from the dense value. An update drops them, except
// Adam's for the panels of the value when they were read since the update
// before: where the dense value was read too, it writes them beside the
// dense form; where it was not (a traced step whose forward and input
// gradient both read the panels), the panels alone are the value, updated in
// place, and a dense read makes the dense value from them, once per update.
// The panels of the transpose are for weights no graph updates (served
// models): Adam writing them too cost more than the input gradient gained
// (docs/design-notes.md, "Graph passes"; figures in docs/perf-log.md).
class VariableState {
 public:
  std::mutex mutex;
  DType dtype;
  Shape shape;
  std::string name;
  bool trainable = true;

  bool has_value() const {
    return dense_.defined() || longer_rows_.defined() || panels_[int(ops::PanelsOf::kValue)].tensor.defined();
  }
  // The value's dtype and shape (has_value() must be true).
  DType value_dtype() const;
  Shape value_shape() const;
  // The value, dense (a reader's read): made from the longer rows or the
  // panels where they are the only form.
  const Tensor& value();
  // Replaces the value with `v`, dense.
  void set_value(Tensor v);
  // The value dense, handed over: the variable is left without one (an
  // update sets the new one, or the same one back on failure).
  Tensor take_value();
  // The value as a [rows, cols + padding] matrix (a float32 matrix's: the
  // weight-rows pass asks for no other), its padding zeros.
  const Tensor& value_in_longer_rows(int64_t padding);
  // The value in panels (a float32 matrix's): [cols / 64, rows, 64] of the
  // value, [rows / 64, cols, 64] of its transpose.
  const Tensor& value_in_panels(ops::PanelsOf which = ops::PanelsOf::kValue);
  // What an update in place writes (above): `value`, dense, in rows
  // `padding` longer, or (`in_panels`) the panels of the value alone; and
  // `panels`, the panels to write beside the dense value, or null. The other
  // forms are dropped. The caller may replace the tensors.
  struct UpdateForm {
    Tensor* value = nullptr;
    int64_t padding = 0;
    bool in_panels = false;
    Tensor* panels = nullptr;
  };
  // `keep_panels` (Adam's update): the panels of the value read since the
  // last update stay (alone where the dense value was not read).
  UpdateForm form_to_update(bool keep_panels);
  // The dense value to update in place; the longer rows are dropped.
  Tensor& dense_to_update();
  // Which forms are held (tests).
  bool holds_dense() const { return dense_.defined(); }
  bool holds_longer_rows() const { return longer_rows_.defined(); }
  bool holds_panels(ops::PanelsOf which = ops::PanelsOf::kValue) const { return panels_[int(which)].tensor.defined(); }

 private:
  Tensor dense_;        // null until initialized, or when only longer_rows_ or the panels hold the value
  Tensor longer_rows_;  // null unless a graph read the value so since the last write
  int64_t padding_ = 0;
  bool longer_rows_read_last_ = false;
  bool dense_read_ = false;  // value() since the last update
  // Makes dense_ from the form that holds the value alone, if any.
  void make_dense();
  void drop_longer_rows();
  void drop_panels();
  struct Panels {
    Tensor tensor;      // null unless a graph read the value so since the last write (or the one before, by Adam)
    bool read = false;  // since the last update
  };
  std::array<Panels, 2> panels_;  // by ops::PanelsOf
};

}  // namespace kiln::detail

namespace kiln::ops {

// ReadVariable's graph-internal attr: the value comes in rows this many
// elements longer (VariableState::value_in_longer_rows; the weight-rows pass).
inline constexpr const char* kReadRowPadding = "row_padding";
// ReadVariable's graph-internal attrs: the value comes in panels of this
// width, of the value or of its transpose (VariableState::value_in_panels;
// the weight-rows pass).
inline constexpr const char* kReadPanels = "panels";
inline constexpr const char* kReadTransposedPanels = "transposed_panels";

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
