// kiln::Variable: creation (eager or while tracing), reads and updates, all
// through the variable ops so graphs record them.
#include "kiln/variable.h"

#include "ops/creation.h"
#include "ops/variable_ops.h"
#include "runtime/dispatch.h"

namespace kiln {

namespace {
[[noreturn]] void null_variable(const char* what) {
  throw FailedPrecondition(fmt::format("Variable::{}: the variable is null (default-constructed)", what));
}
}  // namespace

Variable::Variable(const Tensor& initial_value, VariableOptions options, SourceLocation loc) {
  if (!initial_value.defined()) throw InvalidArgument("Variable: the initial value is a null tensor");
  if (initial_value.dtype() == DType::Resource)
    throw InvalidArgument("Variable: the initial value cannot be a resource handle");
  state_ = std::make_shared<detail::VariableState>();
  state_->dtype = initial_value.dtype();
  state_->shape = initial_value.shape();
  state_->name = options.name.empty() ? "Variable" : options.name;
  state_->trainable = options.trainable;
  handle_ = ops::make_resource(state_);
  if (detail::DispatchHandler* h = runtime::thread_state.handler) h->variable_created();
  if (initial_value.is_symbolic()) {
    // Depends on a traced function's arguments: the graph sets it on its
    // first run.
    const Tensor in[] = {handle_, initial_value};
    runtime::dispatch(ops::initialize_variable_op(), in,
                      schema::Attrs{{"dtype", state_->dtype}, {"shape", state_->shape}}, loc);
  } else {
    state_->set_value(initial_value);
  }
}

Variable::Variable(const Scalar& initial_value, VariableOptions options, SourceLocation loc)
    : Variable(ops::make_scalar(initial_value, initial_value.natural_dtype()), std::move(options), loc) {}

DType Variable::dtype() const {
  if (!state_) null_variable("dtype");
  return state_->dtype;
}
const Shape& Variable::shape() const {
  if (!state_) null_variable("shape");
  return state_->shape;
}
const std::string& Variable::name() const {
  if (!state_) null_variable("name");
  return state_->name;
}
bool Variable::trainable() const {
  if (!state_) null_variable("trainable");
  return state_->trainable;
}
void Variable::set_trainable(bool trainable) {
  if (!state_) null_variable("set_trainable");
  state_->trainable = trainable;
}

Variable Variable::from_handle(const Tensor& handle) {
  if (!handle.defined() || handle.dtype() != DType::Resource || handle.is_symbolic() || handle.shape().rank() != 0)
    throw InvalidArgument("Variable::from_handle: not a concrete resource handle");
  Variable v;
  v.state_ = std::static_pointer_cast<detail::VariableState>(core::data_of<std::shared_ptr<void>>(handle)[0]);
  v.handle_ = handle;
  return v;
}

Variable Variable::with_handle(Tensor handle) const {
  Variable v = *this;
  v.handle_ = std::move(handle);
  return v;
}

Tensor Variable::read_value(SourceLocation loc) const {
  if (!state_) null_variable("read_value");
  if (runtime::TapeHook* tapes = runtime::thread_state.tapes) [[unlikely]]
    tapes->variable_accessed(*this);
  const Tensor in[] = {handle_};
  return runtime::dispatch1(ops::read_variable_op(), in,
                            schema::Attrs{{"dtype", state_->dtype}, {"shape", state_->shape}}, loc);
}

void Variable::update(const detail::OpDef& op, const Operand& value, SourceLocation loc) const {
  if (!state_) null_variable(op.name.data());
  Tensor v = value.is_tensor() ? value.take() : ops::scalar_to_tensor(value.scalar(), state_->dtype, op.name, loc);
  const Tensor in[] = {handle_, std::move(v)};
  runtime::dispatch(op, in, schema::Attrs{{"dtype", state_->dtype}, {"shape", state_->shape}}, loc);
}

void Variable::assign(const Operand& value, SourceLocation loc) const {
  update(ops::assign_variable_op(), value, loc);
}
void Variable::assign_add(const Operand& delta, SourceLocation loc) const {
  update(ops::assign_add_variable_op(), delta, loc);
}
void Variable::assign_sub(const Operand& delta, SourceLocation loc) const {
  update(ops::assign_sub_variable_op(), delta, loc);
}

}  // namespace kiln
