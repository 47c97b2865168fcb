// ReadVariable, AssignVariable, AssignAddVariable, AssignSubVariable,
// InitializeVariable. All are stateful: they keep program order in graphs.
#include "ops/variable_ops.h"

#include "ops/known_ops.h"
#include "runtime/dispatch.h"

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
  s->value = value;
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
void read_infer(schema::InferContext& c) {
  check_handle(c);
  c.add_output(c.attrs().get_dtype("dtype"), c.attrs().get_shape("shape"));
}
void read_kernel(schema::KernelContext& c) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.value.defined()) uninitialized(s);
  c.outputs[0] = s.value;  // values are immutable: readers share the buffer
}

std::shared_ptr<detail::VariableState> sample_state() {
  auto s = std::make_shared<detail::VariableState>();
  s->dtype = DType::Float32;
  s->shape = Shape{2};
  s->name = "sample";
  s->value = constant({1.f, 2.f});
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
  s.value = c.inputs[1];
}

void initialize_kernel(schema::KernelContext& c) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.value.defined()) s.value = c.inputs[1];
}

// value = value op delta, with Add's or Sub's own kernel. The old value is
// handed over, so when no reader holds it the update is in place.
void update_with(schema::KernelContext& c, const detail::OpDef& op) {
  detail::VariableState& s = resource_state(c.inputs[0]);
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.value.defined()) uninitialized(s);
  Tensor args[2] = {std::move(s.value), c.inputs[1]};
  try {
    s.value = std::move(runtime::run_eager(op, args, schema::Attrs{})[0]);
  } catch (...) {
    s.value = std::move(args[0]);  // leave state intact
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
