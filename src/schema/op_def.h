#pragma once
// An op is defined once (docs/design-notes.md, "Foundation"): one OpDef holds its name, type
// inference, CPU kernel, gradient, traits and sample inputs.
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/small_vector.h"
#include "core/tensor_impl.h"
#include "kiln/error.h"
#include "schema/attrs.h"

namespace kiln::detail {

struct OpDef;

}  // namespace kiln::detail

namespace kiln::schema {

struct TensorType {
  DType dtype = DType::Float32;
  Shape shape;
};

// Type inference: input dtypes/shapes + attrs -> output dtypes/shapes. Shapes
// may have unknown dims (while tracing); every shape and dtype error of an op
// is raised here, never in its kernel.
class InferContext {
 public:
  // From tensors (eager dispatch, tracing): their headers give the types.
  InferContext(const detail::OpDef& op, std::span<const Tensor> inputs, const Attrs& attrs)
      : op_(op), tensors_(inputs.data()), num_inputs_(static_cast<int>(inputs.size())), attrs_(attrs) {}
  // From types only (graph passes, the executor on unknown shapes).
  InferContext(const detail::OpDef& op, std::span<const TensorType> inputs, const Attrs& attrs)
      : op_(op), types_(inputs.data()), num_inputs_(static_cast<int>(inputs.size())), attrs_(attrs) {}

  const detail::OpDef& op() const { return op_; }
  int num_inputs() const { return num_inputs_; }
  DType dtype(int i) const { return tensors_ ? tensors_[i].dtype() : type(i).dtype; }
  const Shape& shape(int i) const { return tensors_ ? tensors_[i].shape() : type(i).shape; }
  // The input's value when it is known now (a concrete tensor), else nullptr.
  const Tensor* value(int i) const {
    return tensors_ && !tensors_[i].is_symbolic() ? &tensors_[i] : nullptr;
  }
  const Attrs& attrs() const { return attrs_; }

  // Every inferred type passes here, so a shape past Shape::kMaxElements
  // (sizes from attrs, files or arithmetic on dims) is refused before
  // anything is allocated, with the op's name.
  void add_output(DType dtype, const Shape& shape) {
    if (!shape.within_limits()) [[unlikely]]
      too_many_elements(shape);
    outputs_.push_back({dtype, shape});
  }
  detail::SmallVector<TensorType, 2>& outputs() { return outputs_; }

  // Throws InvalidArgument as "<op>: <message>".
  template <class... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    fail_message(fmt::format(format, std::forward<Args>(args)...));
  }
  [[noreturn]] void fail_message(const std::string& message) const;

 private:
  // Types-only contexts check the index: they see graphs read from files,
  // whose nodes may lack inputs an op needs (eager calls always pass them).
  const TensorType& type(int i) const {
    if (i >= num_inputs_) [[unlikely]]
      missing_input(i);
    return types_[i];
  }
  [[noreturn]] void missing_input(int i) const;
  [[noreturn]] void too_many_elements(const Shape& shape) const;

  const detail::OpDef& op_;
  const Tensor* tensors_ = nullptr;
  const TensorType* types_ = nullptr;
  int num_inputs_;
  const Attrs& attrs_;
  detail::SmallVector<TensorType, 2> outputs_;
};

// A kernel reads concrete inputs and writes outputs that dispatch already
// allocated from the inferred types (unless the op is flagged
// kSetsOwnOutputs, e.g. reshape, which views its input's buffer).
struct KernelContext {
  const detail::OpDef& op;
  std::span<const Tensor> inputs;
  std::span<Tensor> outputs;
  const Attrs& attrs;
  // For a kConsumesInputs op run by a graph's plan: the same inputs, which
  // the caller will not read again (a value's last use is moved here, any
  // other is a copy that its slot still holds). The kernel may move out an
  // input that core::is_exclusively_owned says no one else holds, after it
  // last reads inputs[i]: While does, so that from the first iteration the
  // body holds the only handles to its loop variables and a TensorArray
  // write updates a stack in place instead of copying it. Empty elsewhere
  // (eager calls: the caller's tensors stay the caller's).
  std::span<Tensor> consumable = {};

  template <class T> const T* in(int i) const { return core::data_of<T>(inputs[i]); }
  template <class T> T* out(int i) const { return core::data_of<T>(outputs[i]); }
  const Shape& in_shape(int i) const { return inputs[i].shape(); }
  const Shape& out_shape(int i) const { return outputs[i].shape(); }
};

// A gradient function (docs/design-notes.md, "Autodiff") is written with the public ops, so the
// same code runs eagerly, while tracing and inside nested graphs. It reads the
// forward op's inputs, outputs and attrs and the upstream gradient of each
// output, and sets the gradient of each input it can differentiate.
struct GradContext {
  const detail::OpDef& op;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  const Attrs& attrs;
  // One per output; undefined where no gradient reaches that output (read it
  // with grad_or_zeros when the formula needs a value).
  std::span<const Tensor> grads;
  // One per input, undefined until set; left undefined means "no gradient".
  detail::SmallVector<Tensor, 4> input_grads;
  // Which inputs the caller wants a gradient for; a gradient function may skip
  // the others (conv2d skips the image gradient of the first layer).
  std::span<const bool> wanted;

  bool needs(int i) const { return wanted.empty() || wanted[static_cast<size_t>(i)]; }
  const Tensor& grad(int i) const { return grads[static_cast<size_t>(i)]; }
  // The upstream gradient of output i, or zeros shaped like that output.
  Tensor grad_or_zeros(int i) const;
  // grad_or_zeros of every output (the gradient of an op that splits its input).
  std::vector<Tensor> all_grads_or_zeros() const;
  void set(int i, Tensor g) { input_grads[static_cast<size_t>(i)] = std::move(g); }
};

using InferFn = void (*)(InferContext&);
using KernelFn = void (*)(KernelContext&);
using GradFn = void (*)(GradContext&);
// An op whose work goes on in the background (a collective, run by the
// communication thread of src/distributed). `start` begins it on outputs the
// caller allocated and returns a token; `finish(token)` waits for the work,
// releases the token and throws the work's error, if any. Called exactly once
// per token, even when another step failed in between. The started work keeps
// what it reads and writes alive by itself until it finishes.
using StartFn = void* (*)(KernelContext&);
using FinishFn = void (*)(void* token);

// One sample of an op's inputs, for the registry-wide tests (docs/design-notes.md, "Foundation").
struct OpSample {
  std::vector<Tensor> inputs;
  Attrs attrs;
  // Holds special values (±0, ±inf, nan, zero divisors): the parity tests
  // (eager, traced, fused, folded, saved) run it; the finite-difference
  // check, meaningless there, skips it.
  bool special_values = false;
  // The outputs' values, written out (PyTorch OpInfo's reference), where no
  // OpDef::reference formula says them: the registry test checks eager
  // results against them.
  std::vector<Tensor> expected = {};
};
using SamplesFn = std::vector<OpSample> (*)();

// A contiguous elementwise loop over n elements (fusion runs the same
// functions as eager kernels, so results are bitwise equal).
using ElementwiseLoop = void (*)(const void* const* inputs, void* output, int64_t n);

// An elementwise op on one element, written plainly in double precision:
// the reference the registry test checks every numeric sample's eager result
// against, element by element after broadcasting, rounded to the output
// dtype (PyTorch OpInfo's `ref`). `x`, `y`, `z` are the inputs in order.
struct ReferenceArgs {
  double x = 0, y = 0, z = 0;
  DType dtype = DType::Float64;  // the op's output dtype
  // `v` rounded to the output dtype: for a formula whose intermediate result
  // the op rounds (FloorDiv's float32 quotient).
  double rounded(double v) const { return dtype == DType::Float32 ? static_cast<float>(v) : v; }
};
using ReferenceFn = double (*)(const ReferenceArgs& a);

// The 8-lane form of an elementwise op's float32 loop (ops/lane_ops.h): a
// fused program keeps a chain's values in vector registers from op to op
// with it, computing on every lane the bits the loop computes.
enum class LaneForm : uint8_t {
  kNone,  // no lane form: the op runs its loop
  kAdd, kSub, kMul, kDiv, kMaximum, kMinimum,  // binary
  kNeg, kAbs, kSquare, kRelu, kSqrt, kRsqrt, kExp, kLog, kLog1p, kTanh, kSigmoid,
};

enum OpFlags : uint32_t {
  kNoFlags = 0,
  // Has effects beyond its outputs (print, variable update, random, host
  // callback): never folded, merged or pruned; kept in program order.
  kStateful = 1u << 0,
  // Output i depends only on element i of each (broadcast) input.
  kElementwise = 1u << 1,
  // Output 0 may be written over an input with the same dtype and shape when
  // no one else holds that input.
  kMayRunInPlace = 1u << 2,
  // The kernel creates its outputs itself (views, forwarding, data-dependent
  // shapes); dispatch does not preallocate them.
  kSetsOwnOutputs = 1u << 3,
  // Exists only inside graphs (Placeholder); never dispatched eagerly.
  kGraphOnly = 1u << 4,
  // No gradient flows through it (comparisons, argmax, floor, floor division,
  // random draws, casts to integers...): tapes do not record it. Every op has
  // either a gradient function or this flag, and the registry test checks it.
  kNotDifferentiable = 1u << 5,
  // Recomputing an output costs more than keeping it: a contraction does O(k)
  // work per output element, an op running nested graphs may loop. A
  // while_loop's gradient stacks such values per iteration rather than compute
  // them again (graph_ops/while_accumulators.cpp). Declared by MatMul, the
  // convolutions and their backprops, Call, If and While.
  kCostlyToRecompute = 1u << 6,
  // Output shapes follow from the input shapes and attrs alone, never from
  // input values (kElementwise ops also do, without the flag), so a value
  // such ops compute from a loop's variables keeps its shape from one
  // iteration to the next, which a While gradient's stack needs. An op that
  // does not declare it counts as one whose shapes may vary: the safe side.
  kShapeFromShapes = 1u << 7,
  // The kernel may take over an input that no one else holds, through
  // KernelContext::consumable (see there). Declared by While.
  kConsumesInputs = 1u << 8,
  // Each node's outputs are buffers of its own, which their consumers update
  // in place (TensorArrayNew's state): tracing, CSE and constant folding
  // never merge two such nodes nor make one a shared constant
  // (OpDef::mergeable), since the first write to a shared buffer copies it
  // whole.
  kFreshOutputs = 1u << 9,
};

}  // namespace kiln::schema

namespace kiln::detail {

struct OpDef {
  std::string_view name;
  schema::InferFn infer = nullptr;
  schema::KernelFn kernel = nullptr;
  uint32_t flags = schema::kNoFlags;
  schema::SamplesFn samples = nullptr;
  schema::GradFn gradient = nullptr;
  // For elementwise ops: the contiguous loop per dtype (indexed by DType), or
  // nullptr where the dtype is not supported.
  schema::ElementwiseLoop elementwise[kNumDTypes] = {};
  // Elementwise ops: the op on one element in double precision (ReferenceFn).
  schema::ReferenceFn reference = nullptr;
  // Elementwise ops: the 8-lane form standing in for elementwise[Float32].
  schema::LaneForm lane_form = schema::LaneForm::kNone;
  // Background ops: the executor starts the step as early as its inputs allow
  // and finishes it just before the first step that reads an output, so the
  // steps between run while the work goes on. `kernel` (start, then finish)
  // serves eager calls. Both null for every other op.
  schema::StartFn start = nullptr;
  schema::FinishFn finish = nullptr;

  bool is(schema::OpFlags f) const { return (flags & f) != 0; }
  // Whether two nodes of this op with the same inputs and attrs may be one
  // (tracing's hash-consing, CSE), or a node a constant (folding).
  bool mergeable() const { return !is(schema::kStateful) && !is(schema::kFreshOutputs); }
};

}  // namespace kiln::detail

namespace kiln::schema {

// Every op, by name.
class OpRegistry {
 public:
  static OpRegistry& global();
  void add(const detail::OpDef& op);
  // nullptr when there is no such op.
  const detail::OpDef* find(std::string_view name) const;
  // Throws NotFound naming the op.
  const detail::OpDef& get(std::string_view name) const;
  const std::vector<const detail::OpDef*>& all() const { return ops_; }

 private:
  std::vector<const detail::OpDef*> ops_;
};

}  // namespace kiln::schema

namespace kiln::registry {

// Adds every op to `registry`, once, when OpRegistry::global() is first used,
// so every op is present in every program (a loaded graph may name any of
// them). Defined in src/registry/register_ops.cpp, the one place that knows
// every folder's ops; the schema itself knows none.
void register_all_ops(schema::OpRegistry& registry);

}  // namespace kiln::registry
