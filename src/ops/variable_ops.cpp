// ReadVariable, AssignVariable, AssignAddVariable, AssignSubVariable,
// InitializeVariable. All are stateful: they keep program order in graphs.
#include "ops/variable_ops.h"

#include "core/tensor_impl.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "runtime/dispatch.h"

namespace kiln::detail {

DType VariableState::value_dtype() const {
  if (dense_.defined()) return dense_.dtype();
  return longer_rows_.defined() ? longer_rows_.dtype() : DType::Float32;  // panels are float32's alone
}

Shape VariableState::value_shape() const {
  if (dense_.defined()) return dense_.shape();
  if (longer_rows_.defined()) {
    const Shape& s = longer_rows_.shape();
    return Shape{s[0], s[1] - padding_};
  }
  const Shape& p = panels_[int(ops::PanelsOf::kValue)].tensor.shape();
  return Shape{p[1], p[0] * p[2]};
}

void VariableState::make_dense() {
  if (dense_.defined()) return;
  if (longer_rows_.defined()) {
    const Shape s = value_shape();
    Tensor dense = core::make_tensor(DType::Float32, s);  // longer rows are float32's alone
    ops::copy_rows(core::data_of<float>(longer_rows_), s[1] + padding_, core::data_of<float>(dense), s[1], s[0], s[1]);
    dense_ = std::move(dense);
  } else if (const Tensor& panels = panels_[int(ops::PanelsOf::kValue)].tensor; panels.defined()) {
    dense_ = ops::rows_of_panels(panels);
  }
}

const Tensor& VariableState::value() {
  make_dense();
  longer_rows_read_last_ = false;
  dense_read_ = true;
  return dense_;
}

void VariableState::set_value(Tensor v) {
  dense_ = std::move(v);
  dense_read_ = false;
  drop_longer_rows();
  drop_panels();
}

Tensor VariableState::take_value() { return std::move(dense_to_update()); }

const Tensor& VariableState::value_in_longer_rows(int64_t padding) {
  if (longer_rows_.defined() && padding_ == padding) {
    longer_rows_read_last_ = true;
    return longer_rows_;
  }
  make_dense();
  const Tensor& dense = dense_;
  const Shape& s = dense.shape();
  if (dense.dtype() != DType::Float32 || s.rank() != 2 || padding < 1)
    throw Internal(fmt::format("variable '{}': {} {} cannot be read in rows {} longer", name,
                               dtype_name(dense.dtype()), s.to_string(), padding));
  longer_rows_ = ops::in_longer_rows(dense, padding);
  padding_ = padding;
  longer_rows_read_last_ = true;
  return longer_rows_;
}

const Tensor& VariableState::value_in_panels(ops::PanelsOf which) {
  Panels& form = panels_[int(which)];
  if (!form.tensor.defined()) {
    make_dense();
    const Tensor& dense = dense_;
    const Shape& s = dense.shape();
    const bool transposed = which == ops::PanelsOf::kTranspose;
    if (dense.dtype() != DType::Float32 || s.rank() != 2 || s[transposed ? 0 : 1] % ops::kMatmulPanelWidth != 0)
      throw Internal(fmt::format("variable '{}': {} {} cannot be read in panels{}", name, dtype_name(dense.dtype()),
                                 s.to_string(), transposed ? " of its transpose" : ""));
    form.tensor = transposed ? ops::in_transposed_panels(dense) : ops::in_panels(dense);
  }
  form.read = true;
  return form.tensor;
}

VariableState::UpdateForm VariableState::form_to_update(bool keep_panels) {
  UpdateForm f;
  const bool dense_read = dense_read_;
  dense_read_ = false;
  if (longer_rows_.defined() && (!dense_.defined() || longer_rows_read_last_)) {
    f.value = &longer_rows_;
    f.padding = padding_;
    dense_ = Tensor();
    drop_panels();
    return f;
  }
  Panels& of_value = panels_[int(ops::PanelsOf::kValue)];
  panels_[int(ops::PanelsOf::kTranspose)] = Panels{};
  if (keep_panels && of_value.read && !dense_read) {
    of_value.read = false;
    drop_longer_rows();
    dense_ = Tensor();
    f.value = &of_value.tensor;
    f.in_panels = true;
    return f;
  }
  make_dense();
  drop_longer_rows();
  if (keep_panels && of_value.read) {
    of_value.read = false;
    f.panels = &of_value.tensor;
  } else {
    of_value = Panels{};
  }
  f.value = &dense_;
  return f;
}

Tensor& VariableState::dense_to_update() {
  make_dense();
  dense_read_ = false;
  drop_longer_rows();
  drop_panels();
  return dense_;
}

void VariableState::drop_longer_rows() {
  longer_rows_ = Tensor();
  padding_ = 0;
}

void VariableState::drop_panels() { panels_ = {}; }

}  // namespace kiln::detail

namespace kiln::ops {

Tensor make_resource(const std::shared_ptr<detail::VariableState>& state) {
  Tensor t = core::make_tensor(DType::Resource, Shape{});
  core::data_of<std::shared_ptr<void>>(t)[0] = state;
  return t;
}

Tensor sample_resource(const Tensor& value, std::string name) {
  auto s = std::make_shared<detail::VariableState>();
  s->dtype = value.dtype();
  s->shape = value.shape();
  s->name = std::move(name);
  s->set_value(value);
  return make_resource(s);
}

detail::VariableState& resource_state(const Tensor& handle) {
  return *static_cast<detail::VariableState*>(core::data_of<std::shared_ptr<void>>(handle)[0].get());
}

void uninitialized(const detail::VariableState& s) {
  throw FailedPrecondition(fmt::format(
      "variable '{}' is read before it has a value: its initial value depends on a function's "
      "arguments, so it is set when that function's graph first runs",
      s.name));
}

namespace {

void check_handle(schema::InferContext& c) {
  if (c.dtype(0) != DType::Resource)
    c.fail("input 0 must be a variable's resource handle, got a {} tensor", dtype_name(c.dtype(0)));
}

// ---- ReadVariable -----------------------------------------------------------
// Attr row_padding (graph-internal, set by the weight-rows pass): the value
// of a float32 matrix variable [rows, cols] comes as [rows, cols + padding],
// for MatMuls that read it with b_row_padding.
int64_t row_padding(const schema::Attrs& attrs) {
  return attrs.has(kReadRowPadding) ? attrs.get_int(kReadRowPadding) : 0;
}

void read_infer(schema::InferContext& c) {
  check_handle(c);
  const DType dtype = c.attrs().get_dtype("dtype");
  const Shape& shape = c.attrs().get_shape("shape");
  const int64_t padding = row_padding(c.attrs());
  const bool panels = c.attrs().has(kReadPanels), transposed = c.attrs().has(kReadTransposedPanels);
  if (panels || transposed) {
    const char* attr = transposed ? kReadTransposedPanels : kReadPanels;
    const int64_t width = c.attrs().get_int(attr);
    const char* split = transposed ? "rows" : "columns";
    if (width != kMatmulPanelWidth || padding || (panels && transposed) || dtype != DType::Float32 ||
        !shape.is_fully_defined() || shape.rank() != 2 || shape[transposed ? 0 : 1] % width != 0)
      c.fail("{}={} needs a float32 matrix of known shape whose {} are a multiple of {}, and no other form; got {} {}",
             attr, width, split, kMatmulPanelWidth, dtype_name(dtype), shape.to_string());
    return c.add_output(dtype, transposed ? Shape{shape[0] / width, shape[1], width}
                                          : Shape{shape[1] / width, shape[0], width});
  }
  if (padding == 0) return c.add_output(dtype, shape);
  if (padding < 0 || dtype != DType::Float32 || !shape.is_fully_defined() || shape.rank() != 2)
    c.fail("{}={} needs a float32 matrix of known shape, got {} {}", kReadRowPadding, padding, dtype_name(dtype),
           shape.to_string());
  c.add_output(dtype, Shape{shape[0], shape[1] + padding});
}
void read_kernel(schema::KernelContext& c) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.has_value()) uninitialized(s);
  // Values are immutable: readers share the buffer.
  const int64_t padding = row_padding(c.attrs);
  c.outputs[0] = c.attrs.has(kReadPanels)           ? s.value_in_panels(ops::PanelsOf::kValue)
                 : c.attrs.has(kReadTransposedPanels) ? s.value_in_panels(ops::PanelsOf::kTranspose)
                 : padding                            ? s.value_in_longer_rows(padding)
                                                      : s.value();
}

std::shared_ptr<detail::VariableState> sample_state() {
  auto s = std::make_shared<detail::VariableState>();
  s->dtype = DType::Float32;
  s->shape = Shape{2};
  s->name = "sample";
  s->set_value(constant({1.f, 2.f}));
  return s;
}

std::vector<schema::OpSample> read_samples() {
  return {{{make_resource(sample_state())}, schema::Attrs{{"dtype", DType::Float32}, {"shape", Shape{2}}}}};
}
std::vector<schema::OpSample> assign_samples() {
  return {{{make_resource(sample_state()), constant({3.f, 4.f})},
           schema::Attrs{{"dtype", DType::Float32}, {"shape", Shape{2}}}}};
}

// The gradient with respect to the variable flows to its handle: the tape
// keys a variable's gradient by its handle.
void read_grad(schema::GradContext& c) { c.set(0, c.grad(0)); }

constexpr detail::OpDef kReadVariable{.name = "ReadVariable", .infer = read_infer, .kernel = read_kernel,
                                      .flags = schema::kStateful | schema::kSetsOwnOutputs, .samples = read_samples,
                                      .gradient = read_grad};

// ---- Assign ops ---------------------------------------------------------------
void assign_infer(schema::InferContext& c) {
  check_handle(c);
  DType want = c.attrs().get_dtype("dtype");
  const Shape& shape = c.attrs().get_shape("shape");
  if (c.dtype(1) != want)
    c.fail("the variable is {} but the value is {}", dtype_name(want), dtype_name(c.dtype(1)));
  // An update may add a scalar to every element; a plain assign replaces
  // the value, so its shape must fit.
  bool scalar_update = c.op().name != "AssignVariable" && c.op().name != "InitializeVariable" &&
                       c.shape(1).rank() == 0;
  if (!scalar_update && !shape.is_compatible_with(c.shape(1)))
    c.fail("the variable has shape {} but the value has shape {}", shape.to_string(),
           c.shape(1).to_string());
}

void assign_kernel(schema::KernelContext& c) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  s.set_value(c.inputs[1]);
}

void initialize_kernel(schema::KernelContext& c) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.has_value()) s.set_value(c.inputs[1]);
}

// value = value op delta, with Add's or Sub's own kernel. The old value is
// handed over, so when no reader holds it the update is in place.
void update_with(schema::KernelContext& c, const detail::OpDef& op) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.has_value()) uninitialized(s);
  Tensor args[2] = {s.take_value(), c.inputs[1]};
  try {
    s.set_value(std::move(runtime::run_eager(op, args, schema::Attrs{})[0]));
  } catch (...) {
    s.set_value(std::move(args[0]));  // leave state intact
    throw;
  }
}
void assign_add_kernel(schema::KernelContext& c) { update_with(c, add_op()); }
void assign_sub_kernel(schema::KernelContext& c) { update_with(c, sub_op()); }

constexpr detail::OpDef kAssignVariable{.name = "AssignVariable", .infer = assign_infer, .kernel = assign_kernel,
                                        .flags = schema::kStateful | schema::kNotDifferentiable,
                                        .samples = assign_samples};
constexpr detail::OpDef kAssignAddVariable{.name = "AssignAddVariable", .infer = assign_infer,
                                           .kernel = assign_add_kernel,
                                           .flags = schema::kStateful | schema::kNotDifferentiable,
                                           .samples = assign_samples};
constexpr detail::OpDef kAssignSubVariable{.name = "AssignSubVariable", .infer = assign_infer,
                                           .kernel = assign_sub_kernel,
                                           .flags = schema::kStateful | schema::kNotDifferentiable,
                                           .samples = assign_samples};
constexpr detail::OpDef kInitializeVariable{.name = "InitializeVariable", .infer = assign_infer,
                                            .kernel = initialize_kernel,
                                            .flags = schema::kStateful | schema::kNotDifferentiable,
                                            .samples = assign_samples};

}  // namespace

const detail::OpDef& read_variable_op() { return kReadVariable; }
const detail::OpDef& assign_variable_op() { return kAssignVariable; }
const detail::OpDef& assign_add_variable_op() { return kAssignAddVariable; }
const detail::OpDef& assign_sub_variable_op() { return kAssignSubVariable; }
const detail::OpDef& initialize_variable_op() { return kInitializeVariable; }

void register_variable_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kReadVariable, &kAssignVariable, &kAssignAddVariable,
                                  &kAssignSubVariable, &kInitializeVariable})
    r.add(*op);
}

}  // namespace kiln::ops
