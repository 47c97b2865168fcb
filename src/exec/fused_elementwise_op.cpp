#include "exec/fused_elementwise.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "core/allocator.h"
#include "core/parallel.h"
#include "exec/plan.h"
#include "ops/cast_loops.h"
#include "ops/creation.h"
#include "exec/fused_contraction.h"
#include "exec/fused_lanes.h"
#include "exec/fused_adam.h"
#include "exec/fused_pool_grad.h"
#include "ops/known_ops.h"
#include "runtime/dispatch.h"

namespace kiln::exec {

using schema::ElementwiseLoop;
using schema::InferContext;
using schema::KernelContext;
using schema::TensorType;
using GraphPtr = std::shared_ptr<const graph::Graph>;

ElementwiseLoop fusible_loop(const graph::Graph& g, const graph::Node& n) {
  if (n.outputs.size() != 1 || n.is_stateful() || n.inputs.empty()) return nullptr;
  // The tiles hold elements of up to 8 bytes (kMaxElementSize): complex128 stays unfused.
  if (n.outputs[0].dtype == DType::Complex128) return nullptr;
  for (const graph::Value& in : n.inputs)
    if (g.type_of(in).dtype == DType::Complex128) return nullptr;
  if (n.op == &ops::cast_op()) return ops::cast_loop_for(g.type_of(n.inputs[0]).dtype, n.outputs[0].dtype);
  if (!n.op->is(schema::kElementwise) || !n.attrs.empty()) return nullptr;
  // Loops are indexed by the element type of the last input (the condition
  // of Select is the only input of another type, and it comes first).
  DType d = g.type_of(n.inputs[n.inputs.size() - 1]).dtype;
  if (d == DType::String || d == DType::Resource) return nullptr;
  return n.op->elementwise[static_cast<int>(d)];
}

namespace {

// Elements per tile: a few intermediates of this size fit in L1 together.
constexpr int64_t kTile = 512;
// Outputs at least this large (far beyond the caches) are written with
// non-temporal stores from a tile: the output's lines are then not read
// before being written, a fifth of a*b+c's memory traffic. Same values.
constexpr int64_t kStreamBytes = int64_t(8) << 20;
constexpr int64_t kMaxElementSize = 8;

// The body as straight-line code over registers: 0..inputs-1 are the kernel
// inputs, then temporaries of one tile each.
struct Program {
  static constexpr int kOut = FusedStep::kResult;
  using Instr = FusedStep;
  std::vector<Instr> code;
  std::vector<int> input_size;  // element size of each input
  int num_inputs = 0;
  int num_temps = 0;
  // The same code on registers, for small float32 outputs (null if the body
  // has other dtypes).
  std::unique_ptr<LaneProgram> lanes;
  // Runs the body op by op, for inputs that broadcast other than by repeating one element.
  std::unique_ptr<Plan> fallback;
};

std::shared_ptr<const void> compile(const graph::Graph& body) {
  auto p = std::make_shared<Program>();
  p->num_inputs = static_cast<int>(body.parameters().size());
  for (const graph::Node* in : body.parameters())
    p->input_size.push_back(static_cast<int>(dtype_size(in->outputs[0].dtype)));
  const auto& nodes = body.nodes();
  // Last use of each node's value, to recycle temporaries.
  std::vector<int> last_use(nodes.size(), -1);
  for (const auto& n : nodes)
    for (const graph::Value& v : n->inputs) last_use[v.node->id] = n->id;
  std::vector<int> reg(nodes.size(), -2);
  for (int i = 0; i < p->num_inputs; ++i) reg[body.parameters()[i]->id] = i;
  std::vector<int> free_temps;
  const graph::Node* result = body.results().at(0).node;
  for (const auto& n : nodes) {
    if (n->op == &ops::placeholder_op()) continue;
    Program::Instr ins{};
    ins.loop = fusible_loop(body, *n);
    if (!ins.loop) throw Internal(fmt::format("FusedElementwise: node '{}' ({}) cannot be fused", n->name, n->op->name));
    ins.lane_form = ins.loop == n->op->elementwise[static_cast<int>(DType::Float32)] ? n->op->lane_form
                                                                                     : schema::LaneForm::kNone;
    ins.arity = static_cast<int>(n->inputs.size());
    for (int k = 0; k < ins.arity; ++k) ins.in[k] = reg[n->inputs[k].node->id];
    if (n.get() == result) {
      ins.out = Program::kOut;
    } else if (!free_temps.empty()) {
      ins.out = free_temps.back();
      free_temps.pop_back();
    } else {
      ins.out = p->num_inputs + p->num_temps++;
    }
    reg[n->id] = ins.out;
    // Inputs used for the last time free their temporaries only now, so an
    // output never shares a buffer with an input of another element size.
    for (const graph::Value& v : n->inputs) {
      int r = reg[v.node->id];
      if (last_use[v.node->id] == n->id && r >= p->num_inputs &&
          std::find(free_temps.begin(), free_temps.end(), r) == free_temps.end())
        free_temps.push_back(r);
    }
    p->code.push_back(ins);
  }
  if (p->code.empty() || p->code.back().out != Program::kOut)
    throw Internal("FusedElementwise: the body's result must be its last node");
  const bool all_float32 = std::all_of(nodes.begin(), nodes.end(), [](const auto& n) {
    return n->outputs.size() == 1 && n->outputs[0].dtype == DType::Float32;
  });
  if (all_float32) p->lanes = LaneProgram::make(p->code, p->num_inputs, p->num_temps);
  p->fallback = std::make_unique<Plan>(GraphPtr(std::shared_ptr<const void>(), &body));
  return p;
}

const GraphPtr& body_of(const schema::Attrs& attrs) { return attrs.get<GraphPtr>("body"); }

void fused_infer(InferContext& c) {
  const GraphPtr& body = body_of(c.attrs());
  if (!body || body->results().size() != 1) c.fail("attr body must be a graph with one result");
  const auto& params = body->parameters();
  if (c.num_inputs() != static_cast<int>(params.size()))
    c.fail("body takes {} inputs, got {}", params.size(), c.num_inputs());
  // The body's types for these inputs: every node's inference in turn.
  std::vector<TensorType> types(body->nodes().size());
  for (int i = 0; i < c.num_inputs(); ++i) {
    if (c.dtype(i) != params[i]->outputs[0].dtype)
      c.fail("input {} has dtype {} but the body expects {}", i, dtype_name(c.dtype(i)),
             dtype_name(params[i]->outputs[0].dtype));
    types[params[i]->id] = {c.dtype(i), c.shape(i)};
  }
  for (const auto& n : body->nodes()) {
    if (n->op == &ops::placeholder_op()) continue;
    detail::SmallVector<TensorType, 3> in;
    for (const graph::Value& v : n->inputs) in.push_back(types[v.node->id]);
    InferContext ic(*n->op, std::span<const TensorType>(in.data(), in.size()), n->attrs);
    n->op->infer(ic);
    types[n->id] = ic.outputs()[0];
  }
  const TensorType& out = types[body->results()[0].node->id];
  c.add_output(out.dtype, out.shape);
}

// Each thread's tile buffers, kept between calls.
std::byte* scratch(std::size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes + core::kBufferAlignment) buffer.resize(bytes + core::kBufferAlignment);
  auto addr = reinterpret_cast<std::uintptr_t>(buffer.data());
  return buffer.data() + ((core::kBufferAlignment - addr % core::kBufferAlignment) % core::kBufferAlignment);
}

// Copies `bytes` to 16-byte aligned `dst` with non-temporal stores.
void stream_out(std::byte* dst, const std::byte* src, int64_t bytes) {
#if defined(__SSE2__)
  int64_t k = 0;
  for (; k + 16 <= bytes; k += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), _mm_load_si128(reinterpret_cast<const __m128i*>(src + k)));
  std::memcpy(dst + k, src + k, static_cast<std::size_t>(bytes - k));
#else
  std::memcpy(dst, src, static_cast<std::size_t>(bytes));
#endif
}

// Orders this thread's non-temporal stores before what follows the kernel.
void finish_streaming() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void run_tiles(const Program& p, const KernelContext& c, int64_t n, int64_t first_tile, int64_t end_tile) {
  const int64_t tile_bytes = kTile * kMaxElementSize;
  const int num_regs = p.num_inputs + p.num_temps;
  // Registers, then a tile per temporary, then a tile per repeated input.
  // The tiles start on a cache line after the registers: size for that padding.
  const std::size_t regs_bytes = (static_cast<std::size_t>(num_regs) * sizeof(void*) + 63) / 64 * 64;
  // One more tile: the result before it is streamed out.
  std::byte* base = scratch(regs_bytes + static_cast<std::size_t>(num_regs + 1) * tile_bytes);
  auto** regs = reinterpret_cast<std::byte**>(base);
  std::byte* tiles = base + regs_bytes;
  const int64_t fill = std::min(kTile, n);
  for (int r = 0; r < p.num_temps; ++r) regs[p.num_inputs + r] = tiles + r * tile_bytes;
  std::byte* splats = tiles + p.num_temps * tile_bytes;
  for (int i = 0; i < p.num_inputs; ++i) {
    const Tensor& t = c.inputs[i];
    if (t.size() == n) continue;
    // One element for the whole output: a tile of copies, so every body op
    // runs its same-shape loop.
    std::byte* s = splats + i * tile_bytes;
    const auto* v = static_cast<const std::byte*>(core::raw_data(t));
    const int es = p.input_size[i];
    for (int64_t k = 0; k < fill; ++k) std::memcpy(s + k * es, v, static_cast<std::size_t>(es));
  }
  auto* out = static_cast<std::byte*>(core::raw_data(c.outputs[0]));
  const int64_t out_size = static_cast<int64_t>(dtype_size(c.outputs[0].dtype()));
  std::byte* result_tile = tiles + num_regs * tile_bytes;
  const bool stream = n * out_size >= kStreamBytes && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  const void* ins[3];
  for (int64_t tile = first_tile; tile < end_tile; ++tile) {
    const int64_t off = tile * kTile, len = std::min(kTile, n - off);
    for (int i = 0; i < p.num_inputs; ++i) {
      const Tensor& t = c.inputs[i];
      regs[i] = t.size() == n ? static_cast<std::byte*>(const_cast<void*>(core::raw_data(t))) + off * p.input_size[i]
                              : splats + i * tile_bytes;
    }
    std::byte* result = stream ? result_tile : out + off * out_size;
    for (const Program::Instr& in : p.code) {
      for (int k = 0; k < in.arity; ++k) ins[k] = regs[in.in[k]];
      in.loop(ins, in.out == Program::kOut ? result : regs[in.out], len);
    }
    if (stream) stream_out(out + off * out_size, result_tile, len * out_size);
  }
  if (stream) finish_streaming();
}

void fused_kernel(KernelContext& c) {
  const graph::Graph& body = *body_of(c.attrs);
  const auto& p = *static_cast<const Program*>(body.compiled(compile));
  const int64_t n = c.outputs[0].size();
  if (n == 0) return;
  // With check_numerics on, the body runs op by op so that a NaN or Inf is
  // reported by the op (and source line) that produced it.
  bool streamable = !runtime::check_numerics_enabled.load(std::memory_order_relaxed);
  for (const Tensor& t : c.inputs) streamable &= t.size() == n || t.size() == 1;
  if (!streamable) {
    detail::ResultLeaves out = p.fallback->run(c.inputs);
    std::memcpy(core::raw_data(c.outputs[0]), core::raw_data(out[0]),
                static_cast<std::size_t>(n) * dtype_size(out[0].dtype()));
    return;
  }
  // A few elements: the chain's latency, not memory, bounds it.
  if (p.lanes && n <= LaneProgram::kMaxElements) {
    p.lanes->run(c.inputs, static_cast<float*>(core::raw_data(c.outputs[0])), n, scratch(p.lanes->memory_bytes(n)));
    return;
  }
  const int64_t tiles = (n + kTile - 1) / kTile;
  // Split over threads by the cost of the chain, not by elements alone.
  const int64_t grain = std::max<int64_t>(1, core::kParallelGrain / (kTile * static_cast<int64_t>(p.code.size())));
  core::parallel_for(tiles, [&](int64_t b, int64_t e) { run_tiles(p, c, n, b, e); }, grain);
}

// x * y + 1 and a cast: a broadcast scalar, a full tensor, two dtypes.
std::vector<schema::OpSample> fused_samples() {
  auto body = std::make_shared<graph::Graph>("fused");
  graph::Value x{body->add_parameter({DType::Float32, Shape{3}}, "in0"), 0};
  graph::Value y{body->add_parameter({DType::Float32, Shape{}}, "in1"), 0};
  graph::Value one{body->add_parameter({DType::Float32, Shape{}}, "in2"), 0};
  graph::Value xy{body->add_node(ops::mul_op(), std::array{x, y}, {}, SourceLocation()), 0};
  graph::Value s{body->add_node(ops::add_op(), std::array{xy, one}, {}, SourceLocation()), 0};
  graph::Value d{
      body->add_node(ops::cast_op(), std::array{s}, schema::Attrs{{"dtype", DType::Float64}}, SourceLocation()), 0};
  body->results().push_back(d);
  return {{{constant({1.5f, -2.f, 3.25f}), ops::make_scalar(Scalar(2.f), DType::Float32),
            ops::make_scalar(Scalar(1.f), DType::Float32)},
           schema::Attrs{{"body", GraphPtr(body)}}}};
}

// Fusion runs on graphs after differentiation: nothing differentiates it.
constexpr detail::OpDef kFusedElementwise{.name = "FusedElementwise", .infer = fused_infer, .kernel = fused_kernel,
                                          .flags = schema::kMayRunInPlace | schema::kNotDifferentiable,
                                          .samples = fused_samples};

}  // namespace

const detail::OpDef& fused_elementwise_op() { return kFusedElementwise; }

void register_fused_ops(schema::OpRegistry& r) {
  r.add(fused_elementwise_op());
  r.add(fused_matmul_op());
  r.add(fused_conv2d_op());
  r.add(fused_depthwise_conv2d_op());
  r.add(fused_max_pool_grad_op());
  r.add(fused_apply_adam_op());
}

}  // namespace kiln::exec
