// Gradients of the TensorArray ops (docs/design-notes.md, "Autodiff"). Every op moves whole
// rows of the buffer [capacity, ...element], so each gradient is a row map:
//   Read / Gather: the read rows added into zeros shaped like the buffer
//     (GatherGrad along axis 0; an index read twice gets both rows).
//   Stack / Concat: dy written over the leading rows of a zero buffer.
//   Write / Scatter / Unstack: the value gets the upstream rows at its indices
//     (zeros for a value a later one in the same scatter overwrote), the old
//     buffer gets the upstream buffer without those rows, cut to its capacity.
// Mask, size and index inputs get no gradient.
//
// Two ops carry these maps, each the other's gradient (both are linear):
//   TensorArrayWriteRows(base, like, [indices,] values) -> zeros shaped like
//     `like`, base's leading elements copied in, then values' rows written at
//     `indices` in order (a later row wins). Without indices the rows are the
//     leading values.size / row ones, so values may be flat (Concat's dy).
//   TensorArrayWriteGrad(grad, base, [indices,] values) -> (d_base shaped like
//     base, d_values shaped like values): the adjoint of WriteRows in base and
//     values. base and values give only shapes; base may be unshaped ([0]).
#include <algorithm>
#include <cstring>

#include "ops/array_util.h"
#include "ops/creation.h"
#include "ops/known_ops.h"
#include "ops/tensor_array_grad.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

// Input positions: the indices input is there only in the 4-input form.
struct RowsLayout {
  bool indexed;
  int values;
  explicit RowsLayout(int num_inputs) : indexed(num_inputs == 4), values(num_inputs - 1) {}
};

// Checks the inputs shared by both ops; `rows` is the input whose shape gives
// the rows (like / grad), `base` the one whose leading elements are kept.
void check_rows_inputs(const schema::InferContext& c, int rows, int base) {
  if (c.num_inputs() != 3 && c.num_inputs() != 4) c.fail("takes 3 or 4 inputs, got {}", c.num_inputs());
  RowsLayout l(c.num_inputs());
  DType dtype = c.dtype(rows);
  for (int i : {base, l.values})
    if (c.dtype(i) != dtype)
      c.fail("input {} has dtype {} but input {} has dtype {}", i, dtype_name(c.dtype(i)), rows, dtype_name(dtype));
  if (c.shape(rows).rank() == 0) c.fail("input {} must have rank >= 1 (rows), got a scalar", rows);
  if (l.indexed && !is_index_dtype(c.dtype(2))) c.fail("indices must be int32 or int64, got {}", dtype_name(c.dtype(2)));
}

// The elements per row of a [rows, ...] tensor.
int64_t row_size(const Tensor& t) { return dims_product(t.shape(), 1, t.shape().rank()); }

// The row each value row goes to: `indices` when given, else 0, 1, ...;
// checks they fit in `rows` rows and that values has `count` whole rows.
struct Rows {
  const Tensor* indices;
  int64_t count;
  int64_t operator[](int64_t k) const { return indices ? index_at(*indices, k) : k; }
};

Rows rows_of(const schema::KernelContext& c, const Tensor& values, int64_t rows, int64_t row) {
  RowsLayout l(static_cast<int>(c.inputs.size()));
  const Tensor* indices = l.indexed ? &c.inputs[2] : nullptr;
  if (!indices && (row == 0 ? values.size() != 0 : values.size() % row != 0))
    throw InvalidArgument(fmt::format("{}: values of shape {} do not split into rows of {} elements", c.op.name,
                                      values.shape().to_string(), row));
  int64_t count = indices ? indices->size() : row == 0 ? 0 : values.size() / row;
  if (indices && values.size() != count * row)
    throw InvalidArgument(fmt::format("{}: {} indices need {} rows of {} elements, got values of shape {}",
                                      c.op.name, count, count, row, values.shape().to_string()));
  Rows r{indices, count};
  for (int64_t k = 0; k < count; ++k)
    if (r[k] < 0 || r[k] >= rows)
      throw InvalidArgument(fmt::format("{}: row {} is out of range for {} rows", c.op.name, r[k], rows));
  return r;
}

// ---- TensorArrayWriteRows(base, like, [indices,] values) -------------------
void write_rows_infer(schema::InferContext& c) {
  check_rows_inputs(c, 1, 0);
  c.add_output(c.dtype(1), c.shape(1));
}

void write_rows_kernel(schema::KernelContext& c) {
  const Tensor& base = c.inputs[0];
  const Tensor& values = c.inputs[c.inputs.size() - 1];
  Tensor& out = c.outputs[0];
  int64_t row = row_size(out);
  Rows r = rows_of(c, values, out.shape()[0], row);
  visit_element(out.dtype(), [&]<class E>() {
    E* dst = core::data_of<E>(out);
    int64_t kept = std::min(base.size(), out.size());
    std::copy_n(core::data_of<E>(base), kept, dst);
    std::fill(dst + kept, dst + out.size(), E{});
    const E* src = core::data_of<E>(values);
    for (int64_t k = 0; k < r.count; ++k) std::copy_n(src + k * row, row, dst + r[k] * row);
  });
}

// ---- TensorArrayWriteGrad(grad, base, [indices,] values) -------------------
void write_grad_infer(schema::InferContext& c) {
  check_rows_inputs(c, 0, 1);
  c.add_output(c.dtype(0), c.shape(1));
  c.add_output(c.dtype(0), c.shape(RowsLayout(c.num_inputs()).values));
}

// May run over any input of d_base's shape: base and values give only their
// shapes, and grad is read (the value rows) before d_base is written.
void write_grad_kernel(schema::KernelContext& c) {
  const Tensor& grad = c.inputs[0];
  const Tensor& values = c.inputs[c.inputs.size() - 1];
  int64_t rows = grad.shape()[0], row = row_size(grad);
  Rows r = rows_of(c, values, rows, row);
  // The value row that wrote each buffer row last (-1: none); a single write
  // (TensorArray.write, the common case in loops) needs no table.
  std::vector<int64_t> last;
  if (r.count > 1) {
    last.assign(static_cast<std::size_t>(rows), -1);
    for (int64_t k = 0; k < r.count; ++k) last[static_cast<std::size_t>(r[k])] = k;
  }
  Tensor& d_base = c.outputs[0];
  Tensor& d_values = c.outputs[1];
  visit_element(grad.dtype(), [&]<class E>() {
    const E* g = core::data_of<E>(grad);
    E* dv = core::data_of<E>(d_values);
    for (int64_t k = 0; k < r.count; ++k) {
      int64_t i = r[k];
      if (last.empty() || last[static_cast<std::size_t>(i)] == k) std::copy_n(g + i * row, row, dv + k * row);
      else std::fill(dv + k * row, dv + (k + 1) * row, E{});
    }
    E* db = core::data_of<E>(d_base);
    int64_t kept = std::min(grad.size(), d_base.size());
    if (db != g) std::copy_n(g, kept, db);
    std::fill(db + kept, db + d_base.size(), E{});
    for (int64_t k = 0; k < r.count; ++k)
      if (int64_t i = r[k]; (i + 1) * row <= d_base.size()) std::fill(db + i * row, db + (i + 1) * row, E{});
  });
}

// (a, b, [indices,] values) through `op`; `indices` null for the 3-input form.
runtime::TensorList rows_op(const detail::OpDef& op, const Tensor& a, const Tensor& b, const Tensor* indices,
                            const Tensor& values) {
  detail::SmallVector<Tensor, 4> in{a, b};
  if (indices) in.push_back(*indices);
  in.push_back(values);
  return runtime::dispatch(op, std::span<const Tensor>(in.data(), in.size()), schema::Attrs{}, SourceLocation());
}

// The indices input of a WriteRows / WriteGrad op's context, or null.
const Tensor* rows_indices(const schema::GradContext& c) {
  return RowsLayout(static_cast<int>(c.inputs.size())).indexed ? &c.inputs[2] : nullptr;
}

void write_rows_grad(schema::GradContext& c);
void write_grad_grad(schema::GradContext& c);

std::vector<schema::OpSample> write_rows_samples() {
  Tensor base = constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor like = zeros({4, 2});
  return {// Row 1 written twice: the second value wins.
          {{base, like, constant({1, 3, 1}), constant({{5.f, 6.f}, {7.f, 8.f}, {9.f, 10.f}})}, schema::Attrs{}},
          // Leading rows from flat values over an unshaped base.
          {{zeros({0}), like, constant({5.f, 6.f, 7.f, 8.f})}, schema::Attrs{}}};
}

std::vector<schema::OpSample> write_grad_samples() {
  Tensor grad = constant({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}, {7.f, 8.f}});
  return {{{grad, zeros({2, 2}), constant({int64_t(1), int64_t(3), int64_t(1)}), zeros({3, 2})}, schema::Attrs{}},
          {{grad, zeros({3, 2}), zeros({1, 2})}, schema::Attrs{}},
          {{grad, zeros({0}), constant(2), zeros({2})}, schema::Attrs{}}};
}

constexpr detail::OpDef kWriteRows{.name = "TensorArrayWriteRows", .infer = write_rows_infer,
                                   .kernel = write_rows_kernel, .samples = write_rows_samples,
                                   .gradient = write_rows_grad};
constexpr detail::OpDef kWriteGrad{.name = "TensorArrayWriteGrad", .infer = write_grad_infer,
                                   .kernel = write_grad_kernel, .flags = schema::kMayRunInPlace,
                                   .samples = write_grad_samples, .gradient = write_grad_grad};

// Every write's gradient: WriteGrad of the buffer's upstream gradient over
// base (input 0) and the written values, into the ones c needs.
void set_write_grads(schema::GradContext& c, const Tensor* indices, int value_input) {
  if (!(c.needs(0) || c.needs(value_input))) return;
  runtime::TensorList d = rows_op(kWriteGrad, c.grad(0), c.inputs[0], indices, c.inputs[value_input]);
  if (c.needs(0)) c.set(0, std::move(d[0]));
  if (c.needs(value_input)) c.set(value_input, std::move(d[1]));
}

void write_rows_grad(schema::GradContext& c) {
  if (c.grad(0).defined()) set_write_grads(c, rows_indices(c), RowsLayout(static_cast<int>(c.inputs.size())).values);
}

void write_grad_grad(schema::GradContext& c) {
  if (!c.needs(0) || (!c.grad(0).defined() && !c.grad(1).defined())) return;
  c.set(0, rows_op(kWriteRows, c.grad_or_zeros(0), c.inputs[0], rows_indices(c), c.grad_or_zeros(1))[0]);
}

// The forward ops' gradients run only for floating arrays (the others carry
// no gradient) and only when the buffer output has one.
bool has_buffer_grad(const schema::GradContext& c) { return is_floating(c.inputs[0].dtype()) && c.grad(0).defined(); }

void write_family_grad(schema::GradContext& c, int value_input, bool indexed) {
  if (has_buffer_grad(c)) set_write_grads(c, indexed ? &c.inputs[3] : nullptr, value_input);
}

}  // namespace

void tensor_array_write_grad(schema::GradContext& c) { write_family_grad(c, 4, true); }

void tensor_array_unstack_grad(schema::GradContext& c) { write_family_grad(c, 3, false); }

void tensor_array_gather_grad(schema::GradContext& c) {
  if (!has_buffer_grad(c) || !c.needs(0)) return;
  const Tensor in[] = {c.grad(0), c.inputs[3], c.inputs[0]};
  c.set(0, runtime::dispatch1(gather_grad_op(), in, schema::Attrs{{"axis", int64_t(0)}}, SourceLocation()));
}

void tensor_array_stack_grad(schema::GradContext& c) {
  if (!has_buffer_grad(c) || !c.needs(0)) return;
  const Tensor in[] = {zeros({0}, c.inputs[0].dtype()), c.inputs[0], c.grad(0)};
  c.set(0, runtime::dispatch1(kWriteRows, in, schema::Attrs{}, SourceLocation()));
}

void register_tensor_array_grad_ops(schema::OpRegistry& r) {
  r.add(kWriteRows);
  r.add(kWriteGrad);
}

}  // namespace ops
}  // namespace kiln
