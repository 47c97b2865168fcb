// ReadVariable, AssignVariable, AssignAddVariable, AssignSubVariable,
// InitializeVariable. All are stateful: they keep program order in graphs.
#include "ops/variable_ops.h"

#include "core/tensor_impl.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "runtime/dispatch.h"

namespace kiln::detail {

Shape VariableState::value_shape() const {
  if (value_.defined()) return value_.shape();
  int64_t k = 0, n = 0;
  packed_[0].layout->unpacked_shape(packed_[0].tensor.shape(), k, n);
  return Shape{k, n};
}

const Tensor& VariableState::value() {
  if (!value_.defined() && !packed_.empty()) value_ = packed_[0].layout->unpack(packed_[0].tensor);
  dense_read_ = true;
  return value_;
}

void VariableState::set_value(Tensor v) {
  value_ = std::move(v);
  dense_read_ = false;
  packed_.clear();
}

Tensor& VariableState::value_to_update() {
  value();
  dense_read_ = false;
  packed_.clear();
  return value_;
}

const Tensor& VariableState::packed(const ops::MatmulLayout& layout, bool transposed) {
  for (Packed& p : packed_)
    if (p.layout == &layout && p.transposed == transposed) {
      p.read = true;
      return p.tensor;
    }
  const bool dense_read = dense_read_;
  Tensor t = ops::pack(layout, value(), transposed);
  dense_read_ = dense_read;  // made from, not read
  return packed_.emplace_back(Packed{&layout, transposed, std::move(t), true}).tensor;
}

VariableState::Target VariableState::update_target() {
  const bool dense_read = dense_read_;
  dense_read_ = false;
  for (Packed& p : packed_)
    if (!dense_read && p.read && !p.transposed && p.layout->offset) {
      Packed alone{p.layout, false, std::move(p.tensor), false};
      packed_.clear();
      value_ = Tensor();
      return {&packed_.emplace_back(std::move(alone)).tensor, packed_[0].layout};
    }
  return {&value_to_update(), nullptr};
}

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
// Attrs layout and layout_of_transpose (graph-internal, set by the
// layout-assignment pass): the value of a float32 matrix variable, or its
// transpose, comes packed in that weight layout (ops/matmul_layout.h).
const MatmulLayout* read_layout(const schema::Attrs& attrs) {
  return attrs.has(kReadLayout) ? find_layout(attrs.get_string(kReadLayout)) : nullptr;
}
bool read_transposed(const schema::Attrs& attrs) {
  return attrs.has(kReadTransposed) && attrs.get_bool(kReadTransposed);
}

void read_infer(schema::InferContext& c) {
  check_handle(c);
  const DType dtype = c.attrs().get_dtype("dtype");
  const Shape& shape = c.attrs().get_shape("shape");
  if (!c.attrs().has(kReadLayout)) return c.add_output(dtype, shape);
  const MatmulLayout* layout = read_layout(c.attrs());
  if (!layout) c.fail("{}={}: no such weight layout", kReadLayout, c.attrs().get_string(kReadLayout));
  const bool transposed = read_transposed(c.attrs());
  if (dtype != DType::Float32 || !shape.is_fully_defined() || shape.rank() != 2 ||
      !layout->fits(transposed ? shape[1] : shape[0], transposed ? shape[0] : shape[1]))
    c.fail("{}={}{} needs a float32 matrix of known shape that layout can hold, got {} {}", kReadLayout,
           layout->name, transposed ? " (of the transpose)" : "", dtype_name(dtype), shape.to_string());
  c.add_output(dtype, transposed ? layout->packed_shape(shape[1], shape[0]) : layout->packed_shape(shape[0], shape[1]));
}
void read_kernel(schema::KernelContext& c) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.has_value()) uninitialized(s);
  // Values are immutable: readers share the buffer.
  const MatmulLayout* layout = read_layout(c.attrs);
  c.outputs[0] = layout ? s.packed(*layout, read_transposed(c.attrs)) : s.value();
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
