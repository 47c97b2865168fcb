// The collectives as ops (docs/design-notes.md, "Data-parallel training over MPI"): Allreduce, GroupedAllreduce (one
// bucket of average_gradients), Broadcast, Reduce (to a root) and Allgather.
// Each kernel hands Work to the communication thread (start) and waits for
// it (finish); in a graph the executor starts the step as soon as its inputs
// exist and finishes it where its result is read. They are pure (same inputs,
// same result on every rank), so tracing may merge and prune them alike on
// every rank; constant folding leaves them alone (OpDef::start).
#include "distributed/collectives.h"

#include <fmt/format.h>

#include "distributed/comm.h"
#include "kiln/math.h"
#include "ops/grad_util.h"
#include "runtime/dispatch.h"

namespace kiln::distributed {

namespace {

using schema::Attrs;
using schema::GradContext;
using schema::InferContext;
using schema::KernelContext;
using detail::OpDef;
using schema::OpSample;

Reduction parse_reduction(const std::string& s) {
  if (s == "sum") return Reduction::Sum;
  if (s == "mean") return Reduction::Mean;
  if (s == "max") return Reduction::Max;
  if (s == "min") return Reduction::Min;
  throw InvalidArgument(fmt::format("kiln.distributed: unknown reduction '{}' (sum, mean, max, min)", s));
}

Reduction reduction_of(const Attrs& attrs) { return parse_reduction(attrs.get_string("reduction")); }

void check_exchangeable(InferContext& c, int i) {
  DType d = c.dtype(i);
  if (d == DType::String || d == DType::Resource)
    c.fail("{} tensors cannot be exchanged between ranks (input {})", dtype_name(d), i);
}

void check_root(InferContext& c) {
  int64_t root = c.attrs().get_int("root");
  int size = Comm::get().world().size;
  if (root < 0 || root >= size) c.fail("root {} is not a rank (the world has {})", root, size);
}

void allreduce_infer(InferContext& c) {
  Reduction r = reduction_of(c.attrs());
  DType d0 = c.dtype(0);
  for (int i = 0; i < c.num_inputs(); ++i) {
    check_exchangeable(c, i);
    if (c.dtype(i) != d0)
      c.fail("a bucket holds one dtype: input {} is {}, input 0 is {}", i, dtype_name(c.dtype(i)), dtype_name(d0));
    c.add_output(c.dtype(i), c.shape(i));
  }
  if (c.num_inputs() == 0) c.fail("needs at least one input");
  if (d0 == DType::Bool && r == Reduction::Mean)
    c.fail("the mean of bool tensors is not defined (sum and max are 'or', min is 'and')");
}

void grouped_infer(InferContext& c) {
  Reduction r = reduction_of(c.attrs());
  if (r != Reduction::Sum && r != Reduction::Mean) c.fail("buckets are summed or averaged, not '{}'", reduction_name(r));
  allreduce_infer(c);
}

void rooted_infer(InferContext& c) {
  check_exchangeable(c, 0);
  check_root(c);
  c.add_output(c.dtype(0), c.shape(0));
}

void allgather_infer(InferContext& c) {
  check_exchangeable(c, 0);
  Shape s = c.shape(0);
  if (s.has_known_rank()) {
    if (s.rank() == 0) c.fail("needs rank >= 1 (tensors are joined along dim 0), got a scalar");
    if (s[0] != None) s[0] *= Comm::get().world().size;
  }
  c.add_output(c.dtype(0), s);
}

template <Kind kKind>
void* start(KernelContext& c) {
  Comm& comm = Comm::get();
  Work* w = comm.acquire();
  w->kind = kKind;
  if constexpr (kKind == Kind::Allreduce) {
    w->op = reduction_of(c.attrs);
    if (c.attrs.has("bucket")) {
      w->bucket = static_cast<int>(c.attrs.get_int("bucket"));
      w->num_buckets = static_cast<int>(c.attrs.get_int("num_buckets"));
      w->fingerprint = static_cast<uint64_t>(c.attrs.get_int("fingerprint"));
      w->layout = &c.attrs.get_string("layout");
    }
  }
  if constexpr (kKind == Kind::Broadcast || kKind == Kind::Reduce) w->root = static_cast<int>(c.attrs.get_int("root"));
  for (const Tensor& t : c.inputs) w->inputs.push_back(t);
  for (const Tensor& t : c.outputs) w->outputs.push_back(t);
  comm.submit(w);
  return w;
}

void finish(void* token) { Comm::get().wait_and_release(static_cast<Work*>(token)); }

template <Kind kKind>
void kernel(KernelContext& c) {
  finish(start<kKind>(c));
}

// ---- Gradients (written with the public collectives, so they run eagerly,
// traced and in nested graphs alike; every rank runs the same ones) ----

// y = max/min over ranks of x: dy summed over ranks flows to the ranks whose
// x was the extreme, shared equally between ties (as kiln::max's gradient).
Tensor extreme_gradient(const Tensor& x, const Tensor& y, const Tensor& dy) {
  Tensor hit = cast(equal(x, y), x.dtype());
  return distributed::allreduce(dy, Reduction::Sum) * hit / distributed::allreduce(hit, Reduction::Sum);
}

Tensor allreduce_grad_of(Reduction r, const Tensor& x, const Tensor& y, const Tensor& dy) {
  if (r == Reduction::Max || r == Reduction::Min) return extreme_gradient(x, y, dy);
  // sum: every rank's dy reaches every x; mean: the same, divided by size.
  return distributed::allreduce(dy, r);
}

void allreduce_gradient(GradContext& c) {
  Reduction r = reduction_of(c.attrs);
  for (std::size_t i = 0; i < c.inputs.size(); ++i)
    if (c.needs(static_cast<int>(i)))
      c.set(static_cast<int>(i), allreduce_grad_of(r, c.inputs[i], c.outputs[i], c.grad_or_zeros(static_cast<int>(i))));
}

void broadcast_gradient(GradContext& c) {
  if (c.needs(0)) c.set(0, distributed::reduce_to_root(c.grad_or_zeros(0), static_cast<int>(c.attrs.get_int("root"))));
}

void reduce_gradient(GradContext& c) {
  if (c.needs(0)) c.set(0, distributed::broadcast(c.grad_or_zeros(0), static_cast<int>(c.attrs.get_int("root"))));
}

// y = every rank's x along dim 0: x's gradient is this rank's rows of the
// summed dy (SplitLike cuts it, so dim 0 may be unknown while tracing).
void allgather_gradient(GradContext& c) {
  if (!c.needs(0)) return;
  const transport::World& world = Comm::get().world();
  std::vector<Tensor> likes(static_cast<std::size_t>(world.size), c.inputs[0]);
  Tensor total = distributed::allreduce(c.grad_or_zeros(0), Reduction::Sum);
  c.set(0, world.size == 1 ? total : ops::split_like(total, likes, 0)[static_cast<std::size_t>(world.rank)]);
}

// Samples run in a world of one (the registry tests do not call init()):
// the collectives then return their input.
std::vector<OpSample> allreduce_samples() {
  return {{{constant({{1.f, -2.f, 3.f}, {0.5f, 0.f, 4.f}})}, Attrs{{"reduction", std::string("sum")}}},
          {{constant({1.5, -2.25})}, Attrs{{"reduction", std::string("mean")}}},
          {{constant({7, -3, 0})}, Attrs{{"reduction", std::string("max")}}},
          {{constant({int64_t(5), int64_t(-9)})}, Attrs{{"reduction", std::string("min")}}},
          {{constant({true, false})}, Attrs{{"reduction", std::string("max")}}}};
}
std::vector<OpSample> grouped_samples() {
  std::string layout = "bucket 0 float32: #1 (3,), #0 (2, 2)";
  return {{{constant({1.f, 2.f, 3.f}), constant({{0.5f, -1.f}, {2.f, 4.f}})},
           Attrs{{"reduction", std::string("mean")},
                 {"bucket", int64_t(0)},
                 {"num_buckets", int64_t(1)},
                 {"fingerprint", static_cast<int64_t>(fnv1a(layout.data(), layout.size()))},
                 {"layout", layout}}}};
}
std::vector<OpSample> rooted_samples() {
  return {{{constant({{1.f, 2.f}, {3.f, -4.f}})}, Attrs{{"root", int64_t(0)}}},
          {{constant({uint8_t(3), uint8_t(250)})}, Attrs{{"root", int64_t(0)}}}};
}
std::vector<OpSample> allgather_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, Attrs{}}, {{constant({1.0, -1.0})}, Attrs{}}};
}

constexpr OpDef kAllreduce{.name = "Allreduce", .infer = allreduce_infer, .kernel = kernel<Kind::Allreduce>,
                           .samples = allreduce_samples, .gradient = allreduce_gradient,
                           .start = start<Kind::Allreduce>, .finish = finish};
constexpr OpDef kGroupedAllreduce{.name = "GroupedAllreduce", .infer = grouped_infer,
                                  .kernel = kernel<Kind::Allreduce>, .samples = grouped_samples,
                                  .gradient = allreduce_gradient, .start = start<Kind::Allreduce>,
                                  .finish = finish};
constexpr OpDef kBroadcast{.name = "Broadcast", .infer = rooted_infer, .kernel = kernel<Kind::Broadcast>,
                           .samples = rooted_samples, .gradient = broadcast_gradient,
                           .start = start<Kind::Broadcast>, .finish = finish};
constexpr OpDef kReduce{.name = "Reduce", .infer = rooted_infer, .kernel = kernel<Kind::Reduce>,
                        .samples = rooted_samples, .gradient = reduce_gradient, .start = start<Kind::Reduce>,
                        .finish = finish};
constexpr OpDef kAllgather{.name = "Allgather", .infer = allgather_infer, .kernel = kernel<Kind::Allgather>,
                           .samples = allgather_samples, .gradient = allgather_gradient,
                           .start = start<Kind::Allgather>, .finish = finish};

}  // namespace

std::vector<Tensor> grouped_allreduce(std::span<const Tensor> tensors, Reduction op, int bucket, int num_buckets,
                                      uint64_t fingerprint, const std::string& layout, SourceLocation loc) {
  runtime::TensorList out = runtime::dispatch(kGroupedAllreduce, tensors,
                                              Attrs{{"reduction", std::string(reduction_name(op))},
                                                    {"bucket", int64_t(bucket)},
                                                    {"num_buckets", int64_t(num_buckets)},
                                                    {"fingerprint", static_cast<int64_t>(fingerprint)},
                                                    {"layout", layout}},
                                              loc);
  return std::vector<Tensor>(out.begin(), out.end());
}

void register_distributed_ops(schema::OpRegistry& r) {
  r.add(kAllreduce);
  r.add(kGroupedAllreduce);
  r.add(kBroadcast);
  r.add(kReduce);
  r.add(kAllgather);
}

const char* reduction_name(Reduction r) {
  switch (r) {
    case Reduction::Sum: return "sum";
    case Reduction::Mean: return "mean";
    case Reduction::Max: return "max";
    case Reduction::Min: return "min";
  }
  return "?";
}

Tensor allreduce(const Tensor& x, Reduction op, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(kAllreduce, in,
                            schema::Attrs{{"reduction", std::string(reduction_name(op))}}, loc);
}

Tensor broadcast(const Tensor& x, int root, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(kBroadcast, in, schema::Attrs{{"root", int64_t(root)}}, loc);
}

Tensor reduce_to_root(const Tensor& x, int root, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(kReduce, in, schema::Attrs{{"root", int64_t(root)}}, loc);
}

Tensor allgather(const Tensor& x, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(kAllgather, in, schema::Attrs{}, loc);
}

}  // namespace kiln::distributed
