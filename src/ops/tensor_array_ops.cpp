// kiln::TensorArray and its ops. The array's state is three tensors (buffer
// [capacity, ...element], uint8 mask [capacity], int32 scalar size); every op
// takes them as its first three inputs:
//   TensorArrayNew(size) {dtype, element_shape} -> state
//   TensorArrayWrite(state, index, value) / TensorArrayScatter(state, indices,
//     values) / TensorArrayUnstack(state, value) {dynamic, element_shape} -> state
//   TensorArrayRead(state, index) / TensorArrayGather(state, indices) {clear}
//     -> element(s) [, mask with the elements cleared]
//   TensorArrayStack(state) / TensorArrayConcat(state) -> the first size rows
// A buffer of shape [0] is "unshaped": no element written yet and no element
// shape declared; the first write gives it its element shape. In graphs its
// type has an unknown rank, so it can enter a loop that writes it.
// Index and unwritten-element errors depend on run-time values: the kernels
// raise them (eagerly the same kernels run at once, so the text is the same).
#include <algorithm>
#include <cstring>
#include <limits>

#include "core/allocator.h"
#include "core/tensor_impl.h"
#include "kiln/array.h"
#include "kiln/tensor_array.h"
#include "ops/array_util.h"
#include "ops/creation.h"
#include "ops/known_ops.h"
#include "ops/tensor_array_grad.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace ops {

namespace {

constexpr uint8_t kUnwritten = 0, kWritten = 1, kCleared = 2;

std::string type_text(DType d, const Shape& s) { return fmt::format("{} {}", dtype_name(d), s.to_string()); }

bool is_unshaped(const Shape& buffer) { return buffer.rank() == 1 && buffer[0] == 0; }

// The element shape a buffer type holds: unknown for an unknown rank or an
// unshaped buffer.
Shape element_of(const Shape& buffer) {
  if (!buffer.has_known_rank() || is_unshaped(buffer) || buffer.rank() == 0) return Shape::unknown_rank();
  Shape e;
  for (int d = 1; d < buffer.rank(); ++d) e.push_back(buffer[d]);
  return e;
}

Shape drop_leading(const Shape& s, int n) {
  if (!s.has_known_rank()) return s;
  Shape out;
  for (int d = n; d < s.rank(); ++d) out.push_back(s[d]);
  return out;
}

Shape prepend(int64_t dim, Shape s) {
  if (s.has_known_rank()) s.insert(0, dim);
  return s;
}

// Checks the first three inputs are a TensorArray's state.
void check_state(const schema::InferContext& c) {
  if (c.num_inputs() < 3) c.fail("takes a TensorArray's buffer, mask and size first");
  if (c.dtype(1) != DType::UInt8 || (c.shape(1).has_known_rank() && c.shape(1).rank() != 1))
    c.fail("input 1 (mask) must be uint8 of rank 1, got {}", type_text(c.dtype(1), c.shape(1)));
  if (c.dtype(2) != DType::Int32 || (c.shape(2).has_known_rank() && c.shape(2).rank() != 0))
    c.fail("input 2 (size) must be an int32 scalar, got {}", type_text(c.dtype(2), c.shape(2)));
  if (c.shape(0).rank() == 0) c.fail("input 0 (buffer) must have rank >= 1, got a scalar");
}

void add_mask_output(schema::InferContext& c, int64_t capacity) {
  Shape m;
  m.push_back(capacity);
  c.add_output(DType::UInt8, m);
}

// ---- TensorArrayNew --------------------------------------------------------
void new_infer(schema::InferContext& c) {
  if (c.dtype(0) != DType::Int32 || (c.shape(0).has_known_rank() && c.shape(0).rank() != 0))
    c.fail("size must be an int32 scalar, got {}", type_text(c.dtype(0), c.shape(0)));
  DType dtype = c.attrs().get_dtype("dtype");
  if (dtype == DType::Resource) c.fail("a TensorArray cannot hold resource tensors");
  int64_t capacity = None;
  if (const Tensor* v = c.value(0)) {
    capacity = *core::data_of<int32_t>(*v);
    if (capacity < 0) c.fail("size must not be negative, got {}", capacity);
  }
  const Shape& element = c.attrs().get_shape("element_shape");
  if (element.is_fully_defined()) {
    c.add_output(dtype, prepend(capacity, element));
  } else {
    Shape unshaped;
    unshaped.push_back(0);
    c.add_output(dtype, c.value(0) ? unshaped : Shape::unknown_rank());
  }
  add_mask_output(c, capacity);
  c.add_output(DType::Int32, Shape{});
}

void new_kernel(schema::KernelContext& c) {
  int32_t n = *c.in<int32_t>(0);
  if (n < 0) throw InvalidArgument(fmt::format("{}: size must not be negative, got {}", c.op.name, n));
  Tensor& buffer = c.outputs[0];
  if (buffer.dtype() != DType::String)
    std::memset(core::raw_data(buffer), 0, static_cast<std::size_t>(buffer.size()) * dtype_size(buffer.dtype()));
  std::memset(core::raw_data(c.outputs[1]), kUnwritten, static_cast<std::size_t>(c.outputs[1].size()));
  *c.out<int32_t>(2) = n;
}

std::vector<schema::OpSample> new_samples() {
  return {{{constant(3)}, schema::Attrs{{"dtype", DType::Float32}, {"element_shape", Shape{2}}}},
          {{constant(2)}, schema::Attrs{{"dtype", DType::Int32}, {"element_shape", Shape::unknown_rank()}}}};
}

// ---- TensorArrayWrite / Scatter / Unstack ---------------------------------
enum class WriteKind { Write, Scatter, Unstack };

void write_infer(schema::InferContext& c, WriteKind kind) {
  check_state(c);
  int value_input = kind == WriteKind::Unstack ? 3 : 4;
  if (c.num_inputs() != value_input + 1) c.fail("takes {} inputs, got {}", value_input + 1, c.num_inputs());
  DType dtype = c.dtype(0);
  const Shape& value = c.shape(value_input);
  if (c.dtype(value_input) != dtype)
    c.fail("the TensorArray holds {} elements, got a {} value", dtype_name(dtype), dtype_name(c.dtype(value_input)));
  Shape element = value;
  if (kind != WriteKind::Unstack) {
    const Shape& index = c.shape(3);
    if (!is_index_dtype(c.dtype(3))) c.fail("indices must be int32 or int64, got {}", dtype_name(c.dtype(3)));
    int want = kind == WriteKind::Write ? 0 : 1;
    if (index.has_known_rank() && index.rank() != want)
      c.fail("{} must have rank {}, got shape {}", kind == WriteKind::Write ? "index" : "indices", want,
             index.to_string());
    if (kind == WriteKind::Scatter) {
      if (value.has_known_rank() && value.rank() == 0) c.fail("values must have rank >= 1, got a scalar");
      if (value.has_known_rank() && index.has_known_rank() && index[0] >= 0 && value[0] >= 0 &&
          index[0] != value[0])
        c.fail("{} indices but values of shape {}", index[0], value.to_string());
      element = drop_leading(value, 1);
    }
  } else {
    if (value.has_known_rank() && value.rank() == 0) c.fail("value must have rank >= 1, got a scalar");
    element = drop_leading(value, 1);
  }
  const Shape& declared = c.attrs().get_shape("element_shape");
  // A rank-1 buffer whose length is not known to be positive may still be
  // unshaped at run time (infer checks again there).
  const Shape& buffer = c.shape(0);
  bool may_be_unshaped = buffer.rank() == 1 && buffer[0] <= 0;
  Shape held = may_be_unshaped ? Shape::unknown_rank() : element_of(buffer);
  for (const Shape* want : std::initializer_list<const Shape*>{&declared, &held})
    if (!want->is_compatible_with(element))
      c.fail("the TensorArray holds elements of shape {}, got {} of shape {}", want->to_string(),
             kind == WriteKind::Write ? "a value" : "values", value.to_string());
  // The element dims: the buffer's where it has them, else the value's.
  Shape out_element = held.has_known_rank() ? held : element;
  if (held.has_known_rank() && element.has_known_rank())
    for (int d = 0; d < held.rank(); ++d)
      if (held[d] < 0) out_element[d] = element[d];
  // A dynamic array may grow: its capacity is known only at run time.
  int64_t capacity = c.attrs().get_bool("dynamic") ? int64_t(None)
                     : c.shape(1).has_known_rank() ? c.shape(1)[0]
                                                   : int64_t(None);
  c.add_output(dtype, prepend(capacity, out_element));
  add_mask_output(c, capacity);
  c.add_output(DType::Int32, Shape{});
}

void write_infer_one(schema::InferContext& c) { write_infer(c, WriteKind::Write); }
void scatter_infer(schema::InferContext& c) { write_infer(c, WriteKind::Scatter); }
void unstack_infer(schema::InferContext& c) { write_infer(c, WriteKind::Unstack); }

// The output state: in place over the input's storage when nothing else
// holds it and the capacity stays, else a copy grown to `capacity` rows.
Tensor output_rows(const Tensor& in, bool keep_rows, DType dtype, const Shape& shape, int64_t row) {
  bool in_place = keep_rows && in.shape() == shape && dtype != DType::String && core::is_exclusively_owned(in);
  if (in_place) return core::make_tensor_view(dtype, shape, in.impl()->buffer);
  Tensor out = core::make_tensor(dtype, shape);
  int64_t kept = keep_rows ? std::min(in.shape()[0], shape[0]) * row : 0;
  visit_element(dtype, [&]<class E>() {
    E* dst = core::data_of<E>(out);
    std::copy_n(core::data_of<E>(in), kept, dst);
    std::fill(dst + kept, dst + out.size(), E{});
  });
  return out;
}

void write_kernel(schema::KernelContext& c, WriteKind kind) {
  const Tensor& buffer = c.inputs[0];
  const Tensor& mask = c.inputs[1];
  const Tensor& value = c.inputs[kind == WriteKind::Unstack ? 3 : 4];
  int64_t size = *c.in<int32_t>(2);
  int64_t capacity = mask.shape()[0];
  bool dynamic = c.attrs.get_bool("dynamic");
  int64_t count = kind == WriteKind::Write ? 1 : value.shape()[0];
  const Tensor* indices = kind == WriteKind::Unstack ? nullptr : &c.inputs[3];
  auto index = [&](int64_t k) { return indices ? index_at(*indices, k) : k; };
  int64_t new_size = size;
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = index(k);
    if (i < 0 || (!dynamic && i >= size))
      throw InvalidArgument(fmt::format("{}: index {} is out of range for a TensorArray of size {}{}", c.op.name, i,
                                        size, dynamic ? "" : " (dynamic_size is off)"));
    new_size = std::max(new_size, i + 1);
  }
  if (new_size > std::numeric_limits<int32_t>::max())
    throw InvalidArgument(fmt::format("{}: index {} makes the TensorArray larger than int32 sizes", c.op.name, new_size - 1));
  int64_t new_capacity = capacity;
  while (new_capacity < new_size) new_capacity = std::max<int64_t>(1, 2 * new_capacity);

  Shape element = kind == WriteKind::Write ? value.shape() : drop_leading(value.shape(), 1);
  int64_t row = element.num_elements();
  bool unshaped = is_unshaped(buffer.shape());
  DType dtype = buffer.dtype();
  c.outputs[0] = output_rows(buffer, !unshaped, dtype, prepend(new_capacity, element), row);
  Shape mask_shape;
  mask_shape.push_back(new_capacity);
  c.outputs[1] = output_rows(mask, true, DType::UInt8, mask_shape, 1);
  uint8_t* written = c.out<uint8_t>(1);
  visit_element(dtype, [&]<class E>() {
    const E* src = core::data_of<E>(value);
    E* dst = c.out<E>(0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t i = index(k);
      std::copy_n(src + k * row, row, dst + i * row);
      written[i] = kWritten;
    }
  });
  c.outputs[2] = core::make_tensor(DType::Int32, Shape{});
  *c.out<int32_t>(2) = static_cast<int32_t>(new_size);
}

void write_kernel_one(schema::KernelContext& c) { write_kernel(c, WriteKind::Write); }
void scatter_kernel(schema::KernelContext& c) { write_kernel(c, WriteKind::Scatter); }
void unstack_kernel(schema::KernelContext& c) { write_kernel(c, WriteKind::Unstack); }

// A sample state: 3 rows of (2,) floats, rows 0 and 1 written.
std::vector<Tensor> sample_state() {
  return {constant({{1.f, 2.f}, {3.f, 4.f}, {0.f, 0.f}}), constant({1, 1, 0}, DType::UInt8), constant(3)};
}

std::vector<Tensor> with(std::vector<Tensor> state, std::initializer_list<Tensor> more) {
  state.insert(state.end(), more.begin(), more.end());
  return state;
}

schema::Attrs write_attrs(bool dynamic) {
  return schema::Attrs{{"dynamic", dynamic}, {"element_shape", Shape::unknown_rank()}};
}

std::vector<schema::OpSample> write_samples() {
  return {{with(sample_state(), {constant(2), constant({5.f, 6.f})}), write_attrs(false)},
          {with(sample_state(), {constant(int64_t(4)), constant({5.f, 6.f})}), write_attrs(true)},
          // An unshaped array (never written) takes the value's shape.
          {{zeros({0}, DType::Int32), constant({0, 0}, DType::UInt8), constant(2), constant(1),
            constant({{1, 2, 3}})},
           write_attrs(false)}};
}

std::vector<schema::OpSample> scatter_samples() {
  return {{with(sample_state(), {constant({2, 0}), constant({{5.f, 6.f}, {7.f, 8.f}})}), write_attrs(false)},
          {with(sample_state(), {constant({6}), constant({{5.f, 6.f}})}), write_attrs(true)}};
}

std::vector<schema::OpSample> unstack_samples() {
  return {{with(sample_state(), {constant({{5.f, 6.f}, {7.f, 8.f}})}), write_attrs(false)},
          {with(sample_state(), {constant({{1.f, 1.f}, {2.f, 2.f}, {3.f, 3.f}, {4.f, 4.f}})}), write_attrs(true)}};
}

// ---- TensorArrayRead / Gather ---------------------------------------------
// Whether element i reads as zeros: unwritten elements do when the element
// shape is known (the buffer is shaped: declared, or taken from a write), as
// in TF2 (TensorList, the eager TensorArray); with no element shape, or for
// an element cleared by a read, reading it fails.
bool reads_as_zeros(const detail::OpDef& op, int64_t i, int64_t size, uint8_t state, bool shaped) {
  if (state == kWritten) return false;
  if (state == kUnwritten && shaped) return true;
  if (state == kCleared)
    throw InvalidArgument(fmt::format("{}: element {} of the TensorArray (size {}) was cleared by an earlier read "
                                      "(clear_after_read)",
                                      op.name, i, size));
  throw InvalidArgument(fmt::format("{}: element {} of the TensorArray (size {}) has not been written, and "
                                    "with no element written and no element_shape it cannot be zeros; "
                                    "declare the TensorArray's element_shape",
                                    op.name, i, size));
}

void gather_infer(schema::InferContext& c, bool scalar_index) {
  check_state(c);
  if (c.num_inputs() != 4) c.fail("takes 4 inputs, got {}", c.num_inputs());
  const Shape& index = c.shape(3);
  if (!is_index_dtype(c.dtype(3))) c.fail("indices must be int32 or int64, got {}", dtype_name(c.dtype(3)));
  if (scalar_index && index.has_known_rank() && index.rank() != 0)
    c.fail("index must be a scalar, got shape {}", index.to_string());
  const Shape& buffer = c.shape(0);
  // An unshaped buffer holds nothing readable; the kernel says so.
  Shape element = is_unshaped(buffer) ? Shape{} : element_of(buffer);
  Shape out = index;
  if (!out.has_known_rank() || !element.has_known_rank()) out = Shape::unknown_rank();
  else
    for (int64_t d : element) out.push_back(d);
  c.add_output(c.dtype(0), out);
  if (c.attrs().get_bool("clear")) c.add_output(DType::UInt8, c.shape(1));
}

void read_infer(schema::InferContext& c) { gather_infer(c, true); }
void gather_infer_many(schema::InferContext& c) { gather_infer(c, false); }

void gather_kernel(schema::KernelContext& c) {
  const Tensor& indices = c.inputs[3];
  int64_t size = *c.in<int32_t>(2);
  const uint8_t* written = c.in<uint8_t>(1);
  int64_t count = indices.size();
  const bool shaped = !is_unshaped(c.in_shape(0));
  for (int64_t k = 0; k < count; ++k) {
    int64_t i = index_at(indices, k);
    if (i < 0 || i >= size)
      throw InvalidArgument(fmt::format("{}: index {} is out of range for a TensorArray of size {}", c.op.name, i, size));
    reads_as_zeros(c.op, i, size, written[i], shaped);
  }
  int64_t row = count == 0 ? 0 : c.outputs[0].size() / count;
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    const E* src = c.in<E>(0);
    E* dst = c.out<E>(0);
    for (int64_t k = 0; k < count; ++k) {
      int64_t i = index_at(indices, k);
      if (written[i] == kWritten) std::copy_n(src + i * row, row, dst + k * row);
      else std::fill_n(dst + k * row, row, E{});
    }
  });
  if (c.outputs.size() > 1) {
    uint8_t* cleared = c.out<uint8_t>(1);
    std::copy_n(written, c.inputs[1].size(), cleared);
    for (int64_t k = 0; k < count; ++k) cleared[index_at(indices, k)] = kCleared;
  }
}

void release_viewed_buffer(void* buffer) noexcept { core::release(static_cast<core::Buffer*>(buffer)); }

// Reading a written row that starts on a 64-byte boundary gives a view of
// it, no copy (a while_loop gradient's backward loop reads every stacked row
// once). The view holds the array's buffer, which is then not exclusively
// owned: a later write copies the buffer rather than writing over the row
// read. Views are never written in place (external buffers).
Tensor written_row_view(const schema::KernelContext& c) {
  const Tensor& buffer = c.inputs[0];
  int64_t size = *c.in<int32_t>(2);
  int64_t i = index_at(c.inputs[3], 0);
  if (i < 0 || i >= size || c.in<uint8_t>(1)[i] != kWritten || buffer.dtype() == DType::String ||
      is_unshaped(buffer.shape()))
    return Tensor();
  Shape element = drop_leading(buffer.shape(), 1);
  int64_t row = element.num_elements();
  std::size_t row_bytes = static_cast<std::size_t>(row) * dtype_size(buffer.dtype());
  char* data = static_cast<char*>(buffer.impl()->buffer->data()) + static_cast<std::size_t>(i) * row_bytes;
  if (row == 0 || reinterpret_cast<std::uintptr_t>(data) % core::kBufferAlignment != 0) return Tensor();
  core::Buffer* owner = buffer.impl()->buffer;
  core::retain(owner);
  return core::adopt_buffer(buffer.dtype(), element,
                      core::make_external_buffer(buffer.dtype(), row, data, release_viewed_buffer, owner));
}

void read_kernel(schema::KernelContext& c) {
  bool clear = c.attrs.get_bool("clear");
  if (!clear) {
    if (Tensor view = written_row_view(c); view.defined()) {
      c.outputs[0] = std::move(view);
      return;
    }
  }
  const Tensor& buffer = c.inputs[0];
  c.outputs[0] = core::make_tensor(buffer.dtype(), is_unshaped(buffer.shape()) ? Shape{} : drop_leading(buffer.shape(), 1));
  if (clear) c.outputs[1] = core::make_tensor(DType::UInt8, c.inputs[1].shape());
  gather_kernel(c);
}

std::vector<schema::OpSample> read_samples() {
  // Rows of 16 floats (64 bytes): row 1 is read as a view.
  Tensor rows = reshape(range(48.f), Shape{3, 16});
  return {{with(sample_state(), {constant(1)}), schema::Attrs{{"clear", false}}},
          {with(sample_state(), {constant(int64_t(0))}), schema::Attrs{{"clear", true}}},
          {{rows, constant({1, 1, 0}, DType::UInt8), constant(3), constant(1)}, schema::Attrs{{"clear", false}}}};
}

std::vector<schema::OpSample> gather_samples() {
  return {{with(sample_state(), {constant({1, 0, 1})}), schema::Attrs{{"clear", false}}},
          {with(sample_state(), {constant({{int64_t(0)}, {int64_t(1)}})}), schema::Attrs{{"clear", true}}}};
}

// ---- TensorArrayStack / Concat --------------------------------------------
void stack_infer(schema::InferContext& c, bool concat) {
  check_state(c);
  if (c.num_inputs() != 3) c.fail("takes 3 inputs, got {}", c.num_inputs());
  const Shape& buffer = c.shape(0);
  int64_t n = None;
  if (const Tensor* v = c.value(2)) n = *core::data_of<int32_t>(*v);
  if (is_unshaped(buffer)) {
    // Nothing written: empty when size is 0, else the kernel fails.
    Shape out;
    out.push_back(0);
    c.add_output(c.dtype(0), out);
    return;
  }
  if (!buffer.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  Shape out = buffer;
  if (!concat) {
    out[0] = n;
  } else {
    if (buffer.rank() < 2) c.fail("concat needs elements of rank >= 1, the TensorArray holds scalars");
    out.erase(0);
    out[0] = n >= 0 && out[0] >= 0 ? n * out[0] : int64_t(None);
  }
  c.add_output(c.dtype(0), out);
}

void stack_infer_rows(schema::InferContext& c) { stack_infer(c, false); }
void concat_infer(schema::InferContext& c) { stack_infer(c, true); }

// Unwritten elements stack as zeros when the element shape is known
// (reads_as_zeros).
void stack_kernel(schema::KernelContext& c) {
  int64_t size = *c.in<int32_t>(2);
  const uint8_t* written = c.in<uint8_t>(1);
  const bool shaped = !is_unshaped(c.in_shape(0));
  bool any_unwritten = false;
  for (int64_t i = 0; i < size; ++i) any_unwritten |= reads_as_zeros(c.op, i, size, written[i], shaped);
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    E* out = c.out<E>(0);
    std::copy_n(c.in<E>(0), c.outputs[0].size(), out);
    if (!any_unwritten) return;
    const int64_t row = c.inputs[0].size() / std::max<int64_t>(1, c.in_shape(0)[0]);
    for (int64_t i = 0; i < size; ++i)
      if (written[i] == kUnwritten) std::fill_n(out + i * row, row, E{});
  });
}

std::vector<schema::OpSample> stack_samples() {
  std::vector<Tensor> full = sample_state();
  full[1] = constant({1, 1, 1}, DType::UInt8);
  std::vector<Tensor> prefix = sample_state();
  prefix[2] = constant(2);
  return {{full, schema::Attrs{}}, {prefix, schema::Attrs{}}};
}

// New makes a state from a size: nothing to differentiate. The others pass
// gradients through the float buffer (tensor_array_grad_ops.cpp).
constexpr detail::OpDef kTensorArrayNew{.name = "TensorArrayNew", .infer = new_infer, .kernel = new_kernel,
                                .flags = schema::kNotDifferentiable | schema::kFreshOutputs,
                                .samples = new_samples};
constexpr detail::OpDef kTensorArrayWrite{.name = "TensorArrayWrite", .infer = write_infer_one, .kernel = write_kernel_one,
                                  .flags = schema::kSetsOwnOutputs, .samples = write_samples,
                                  .gradient = tensor_array_write_grad};
constexpr detail::OpDef kTensorArrayScatter{.name = "TensorArrayScatter", .infer = scatter_infer, .kernel = scatter_kernel,
                                    .flags = schema::kSetsOwnOutputs, .samples = scatter_samples,
                                    .gradient = tensor_array_write_grad};
constexpr detail::OpDef kTensorArrayUnstack{.name = "TensorArrayUnstack", .infer = unstack_infer, .kernel = unstack_kernel,
                                    .flags = schema::kSetsOwnOutputs, .samples = unstack_samples,
                                    .gradient = tensor_array_unstack_grad};
constexpr detail::OpDef kTensorArrayRead{.name = "TensorArrayRead", .infer = read_infer, .kernel = read_kernel,
                                         .flags = schema::kSetsOwnOutputs | schema::kShapeFromShapes,
                                         .samples = read_samples, .gradient = tensor_array_gather_grad};
constexpr detail::OpDef kTensorArrayGather{.name = "TensorArrayGather", .infer = gather_infer_many, .kernel = gather_kernel,
                                   .samples = gather_samples, .gradient = tensor_array_gather_grad};
constexpr detail::OpDef kTensorArrayStack{.name = "TensorArrayStack", .infer = stack_infer_rows, .kernel = stack_kernel,
                                  .samples = stack_samples, .gradient = tensor_array_stack_grad};
constexpr detail::OpDef kTensorArrayConcat{.name = "TensorArrayConcat", .infer = concat_infer, .kernel = stack_kernel,
                                   .samples = stack_samples, .gradient = tensor_array_stack_grad};

Tensor index_tensor(const Operand& index, const char* what, const SourceLocation& loc) {
  if (index.is_tensor()) return index.take();
  if (index.scalar().kind() != Scalar::Kind::Int)
    throw InvalidArgument(fmt::format("{}: the index must be an int or an int32/int64 scalar tensor", what));
  return scalar_to_tensor(index.scalar(), DType::Int32, what, loc);
}

}  // namespace

void register_tensor_array_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kTensorArrayNew, &kTensorArrayWrite, &kTensorArrayScatter, &kTensorArrayUnstack,
                                  &kTensorArrayRead, &kTensorArrayGather, &kTensorArrayStack, &kTensorArrayConcat})
    r.add(*op);
  register_tensor_array_grad_ops(r);
}

const detail::OpDef& tensor_array_write_op() { return kTensorArrayWrite; }

}  // namespace ops

TensorArray::TensorArray(DType dtype, const Operand& size, TensorArrayOptions options, SourceLocation loc)
    : options_(std::move(options)) {
  const Tensor in[] = {ops::index_tensor(size, "TensorArray: size", loc)};
  runtime::TensorList out = runtime::dispatch(
      ops::kTensorArrayNew, in, schema::Attrs{{"dtype", dtype}, {"element_shape", options_.element_shape}}, loc);
  buffer_ = std::move(out[0]);
  written_ = std::move(out[1]);
  size_ = std::move(out[2]);
}

TensorArray TensorArray::apply(const detail::OpDef& op, TensorArray self, std::initializer_list<Tensor> more,
                               const SourceLocation& loc) {
  detail::SmallVector<Tensor, 5> in;
  in.push_back(std::move(self.buffer_));
  in.push_back(std::move(self.written_));
  in.push_back(std::move(self.size_));
  for (const Tensor& t : more) in.push_back(t);
  runtime::TensorList out = runtime::dispatch(op, std::span<const Tensor>(in.data(), in.size()),
                                              schema::Attrs{{"dynamic", self.options_.dynamic_size},
                                                            {"element_shape", self.options_.element_shape}},
                                              loc);
  return TensorArray(std::move(self.options_), std::move(out[0]), std::move(out[1]), std::move(out[2]));
}

TensorArray TensorArray::write(const Operand& index, const Tensor& value, SourceLocation loc) const& {
  return apply(ops::kTensorArrayWrite, *this, {ops::index_tensor(index, "TensorArray.write", loc), value}, loc);
}

TensorArray TensorArray::write(const Operand& index, const Tensor& value, SourceLocation loc) && {
  Tensor i = ops::index_tensor(index, "TensorArray.write", loc);
  return apply(ops::kTensorArrayWrite, std::move(*this), {std::move(i), value}, loc);
}

TensorArray TensorArray::scatter(const Tensor& indices, const Tensor& values, SourceLocation loc) const {
  return apply(ops::kTensorArrayScatter, *this, {indices, values}, loc);
}

TensorArray TensorArray::unstack(const Tensor& value, SourceLocation loc) const {
  return apply(ops::kTensorArrayUnstack, *this, {value}, loc);
}

Tensor TensorArray::read(const Operand& index, SourceLocation loc) const {
  const Tensor in[] = {buffer_, written_, size_, ops::index_tensor(index, "TensorArray.read", loc)};
  runtime::TensorList out =
      runtime::dispatch(ops::kTensorArrayRead, in, schema::Attrs{{"clear", options_.clear_after_read}}, loc);
  if (options_.clear_after_read) written_ = std::move(out[1]);
  return std::move(out[0]);
}

Tensor TensorArray::gather(const Tensor& indices, SourceLocation loc) const {
  const Tensor in[] = {buffer_, written_, size_, indices};
  runtime::TensorList out =
      runtime::dispatch(ops::kTensorArrayGather, in, schema::Attrs{{"clear", options_.clear_after_read}}, loc);
  if (options_.clear_after_read) written_ = std::move(out[1]);
  return std::move(out[0]);
}

Tensor TensorArray::stack(SourceLocation loc) const {
  const Tensor in[] = {buffer_, written_, size_};
  return runtime::dispatch1(ops::kTensorArrayStack, in, schema::Attrs{}, loc);
}

Tensor TensorArray::concat(SourceLocation loc) const {
  const Tensor in[] = {buffer_, written_, size_};
  return runtime::dispatch1(ops::kTensorArrayConcat, in, schema::Attrs{}, loc);
}

}  // namespace kiln
