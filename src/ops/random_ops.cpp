// RandomNormal and RandomUniform, on a counter-based generator (Philox4x32-10):
// element i of a draw is a pure function of (key, counter + i), so kernels
// split work across threads and still give the same values as one thread.
// Seeds follow TF2 (draw_position): an op seed with the global seed makes the
// sequence of calls reproducible, each call drawing new values; the
// stateless forms give the same values on every call.
#include <atomic>
#include <mutex>
#include <unordered_map>
#include <cmath>
#include <random>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "kiln/random.h"
#include "runtime/dispatch.h"
#include "ops/widen_bridge.h"

namespace kiln {
namespace ops {

namespace {

struct Philox {
  static void run(uint64_t key, uint64_t counter, uint32_t out[4]) {
    uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
    uint32_t c2 = 0, c3 = 0;
    uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
    for (int round = 0; round < 10; ++round) {
      uint64_t p0 = uint64_t(0xD2511F53u) * c0;
      uint64_t p1 = uint64_t(0xCD9E8D57u) * c2;
      uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
      uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
      c1 = static_cast<uint32_t>(p1);
      c3 = static_cast<uint32_t>(p0);
      c0 = n0;
      c2 = n2;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
  }
};

// TF's DEFAULT_GRAPH_SEED: the global seed of op-seeded draws until
// random::set_seed gives one.
constexpr uint64_t kDefaultGlobalSeed = 87654321;

struct GlobalGenerator {
  std::atomic<uint64_t> key{std::random_device{}() | (uint64_t(std::random_device{}()) << 32)};
  std::atomic<uint64_t> counter{0};
  std::atomic<uint64_t> seed{kDefaultGlobalSeed};
  // Op-seeded streams: the next counter of each (op seed, site). Site 0 is
  // every eager call with that op seed (TF2's eager ops share one kernel per
  // seed pair); a traced op has a site of its own (its node's counter, as a
  // TF graph op's kernel keeps its state). set_seed clears them.
  std::mutex mutex;
  std::unordered_map<uint64_t, std::unordered_map<int64_t, uint64_t>> streams;
  // Sites start at a random point, so a loaded graph's sites do not meet
  // this process's (they affect no value: every site starts at counter 0).
  std::atomic<int64_t> next_site{static_cast<int64_t>(std::random_device{}() % (uint64_t(1) << 30)) + 1};
};
GlobalGenerator& generator() {
  static GlobalGenerator g;
  return g;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [0, 1): 24 random bits for float, 53 for double.
inline float to_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * 0x1.0p-24f; }
inline double to_unit_double(uint32_t hi, uint32_t lo) {
  return static_cast<double>((uint64_t(hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
}

// Where a draw starts (docs/design-notes.md, "Foundation", random seeds):
// - stateless (random::stateless_*): a key from the seed, counter 0, so the
//   same values on every call;
// - an op seed: a key from (global seed, op seed) and the next counter of the
//   op's stream, so the sequence of calls is reproducible and each call
//   draws new values (TF2);
// - no seed: the global generator, advanced atomically so concurrent calls
//   never share numbers.
void draw_position(const schema::Attrs& attrs, int64_t blocks, uint64_t* key, uint64_t* counter) {
  int64_t seed = attrs.get_int("seed");
  GlobalGenerator& g = generator();
  if (seed >= 0 && attrs.get_or<bool>("stateless", false)) {
    *key = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull + 1;
    *counter = 0;
    return;
  }
  if (seed >= 0) {
    std::lock_guard<std::mutex> lock(g.mutex);
    uint64_t global = g.seed.load(std::memory_order_relaxed);
    *key = splitmix64(global ^ splitmix64(static_cast<uint64_t>(seed)));
    uint64_t& next = g.streams[static_cast<uint64_t>(seed)][attrs.get_or<int64_t>("site", 0)];
    *counter = next;
    next += static_cast<uint64_t>(blocks);
    return;
  }
  *key = g.key.load(std::memory_order_relaxed);
  *counter = g.counter.fetch_add(static_cast<uint64_t>(blocks), std::memory_order_relaxed);
}

// The shape comes from the "shape" attr, or from an input tensor's shape
// (the *_like forms), which may have dims known only at run time.
void random_infer(schema::InferContext& c) {
  DType dtype = c.attrs().get_dtype("dtype");
  if (!is_floating(dtype)) c.fail("dtype must be float32 or float64, got {}", dtype_name(dtype));
  if (c.num_inputs() == 1) {
    c.add_output(dtype, c.shape(0));
    return;
  }
  const Shape& shape = c.attrs().get_shape("shape");
  if (!shape.is_fully_defined()) c.fail("the shape {} must be fully defined", shape.to_string());
  c.add_output(dtype, shape);
}

// Each Philox block gives 4 words: two values (two words each for double
// precision, and Box-Muller consumes pairs), so one block per 2 elements.
template <class T, class Fill>
void fill_blocks(Tensor& out, const schema::Attrs& attrs, Fill fill) {
  int64_t n = out.size();
  int64_t blocks = (n + 1) / 2;
  uint64_t key, counter;
  draw_position(attrs, blocks, &key, &counter);
  T* o = core::data_of<T>(out);
  core::parallel_for(blocks, [&](int64_t b, int64_t e) {
    uint32_t w[4];
    for (int64_t i = b; i < e; ++i) {
      Philox::run(key, counter + static_cast<uint64_t>(i), w);
      T pair[2];
      fill(w, pair);
      o[2 * i] = pair[0];
      if (2 * i + 1 < n) o[2 * i + 1] = pair[1];
    }
  }, 4096);
}

template <class T> void unit_pair(const uint32_t w[4], T u[2]) {
  if constexpr (std::is_same_v<T, float>) {
    u[0] = to_unit_float(w[0]);
    u[1] = to_unit_float(w[1]);
  } else {
    u[0] = to_unit_double(w[0], w[1]);
    u[1] = to_unit_double(w[2], w[3]);
  }
}

void uniform_kernel(schema::KernelContext& c) {
  double lo = c.attrs.get_float("a"), hi = c.attrs.get_float("b");
  core::visit_dtype(c.outputs[0].dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      fill_blocks<T>(c.outputs[0], c.attrs, [&](const uint32_t w[4], T out[2]) {
        T u[2];
        unit_pair<T>(w, u);
        out[0] = static_cast<T>(lo + (hi - lo) * u[0]);
        out[1] = static_cast<T>(lo + (hi - lo) * u[1]);
      });
    }
  });
}

void normal_kernel(schema::KernelContext& c) {
  double mean = c.attrs.get_float("a"), stddev = c.attrs.get_float("b");
  core::visit_dtype(c.outputs[0].dtype(), [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      fill_blocks<T>(c.outputs[0], c.attrs, [&](const uint32_t w[4], T out[2]) {
        T u[2];
        unit_pair<T>(w, u);
        // Box-Muller; 1 - u keeps the log argument in (0, 1].
        double r = std::sqrt(-2.0 * std::log(1.0 - static_cast<double>(u[0])));
        double theta = 2.0 * M_PI * static_cast<double>(u[1]);
        out[0] = static_cast<T>(mean + stddev * r * std::cos(theta));
        out[1] = static_cast<T>(mean + stddev * r * std::sin(theta));
      });
    }
  });
}

// Stateless, so that every run of a sample draws the same values.
std::vector<schema::OpSample> random_samples() {
  return {{{}, schema::Attrs{{"shape", Shape{3, 2}}, {"dtype", DType::Float32}, {"a", 0.0}, {"b", 1.0},
                             {"seed", int64_t(7)}, {"stateless", true}}},
          {{constant({{1, 2, 3}, {4, 5, 6}})}, schema::Attrs{{"dtype", DType::Float64}, {"a", -1.0}, {"b", 1.0},
                                                             {"seed", int64_t(3)}, {"stateless", true}}}};
}

constexpr detail::OpDef kRandomUniform{.name = "RandomUniform", .infer = random_infer, .kernel = widened<uniform_kernel>,
                                       .flags = schema::kStateful | schema::kNotDifferentiable,
                                       .samples = random_samples};
constexpr detail::OpDef kRandomNormal{.name = "RandomNormal", .infer = random_infer,
                                      .kernel = widened<normal_kernel>, .flags = schema::kStateful | schema::kNotDifferentiable,
                                      .samples = random_samples};

void check_uniform_range(double minval, double maxval) {
  if (!(minval < maxval))
    throw InvalidArgument(fmt::format("RandomUniform: minval ({}) must be less than maxval ({})", minval, maxval));
}

enum class Seeding { kStateful, kStateless };

// The seed attrs: "seed" (-1: none), "stateless", and for an op-seeded draw
// being traced, "site": the node's own stream.
schema::Attrs seed_attrs(const detail::OpDef& op, std::optional<uint64_t> seed, Seeding seeding, schema::Attrs attrs) {
  if (seed && *seed > static_cast<uint64_t>(INT64_MAX))
    throw InvalidArgument(fmt::format("{}: seed {} is too large (at most 2^63-1)", op.name, *seed));
  attrs.set("seed", seed ? static_cast<int64_t>(*seed) : int64_t(-1));
  if (seeding == Seeding::kStateless) attrs.set("stateless", true);
  else if (seed && runtime::thread_state.handler) attrs.set("site", generator().next_site.fetch_add(1));
  return attrs;
}

Tensor random_op(const detail::OpDef& op, const Shape& shape, double a, double b, DType dtype,
                 std::optional<uint64_t> seed, Seeding seeding, const SourceLocation& loc) {
  return runtime::dispatch1(
      op, {}, seed_attrs(op, seed, seeding, schema::Attrs{{"shape", shape}, {"dtype", dtype}, {"a", a}, {"b", b}}),
      loc);
}

Tensor random_like_op(const detail::OpDef& op, const Tensor& like, double a, double b, std::optional<DType> dtype,
                      std::optional<uint64_t> seed, const SourceLocation& loc) {
  DType d = dtype ? *dtype : like.dtype();
  const Tensor in[] = {like};
  return runtime::dispatch1(
      op, in, seed_attrs(op, seed, Seeding::kStateful, schema::Attrs{{"dtype", d}, {"a", a}, {"b", b}}), loc);
}

}  // namespace

void register_random_ops(schema::OpRegistry& r) {
  r.add(kRandomUniform);
  r.add(kRandomNormal);
}

}  // namespace ops

namespace random {

void set_seed(uint64_t seed) {
  ops::GlobalGenerator& g = ops::generator();
  g.key.store(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull, std::memory_order_relaxed);
  g.counter.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(g.mutex);
  g.seed.store(seed, std::memory_order_relaxed);
  g.streams.clear();
}

Tensor normal(const Shape& shape, double mean, double stddev, DType dtype,
              std::optional<uint64_t> seed, SourceLocation loc) {
  return ops::random_op(ops::kRandomNormal, shape, mean, stddev, dtype, seed, ops::Seeding::kStateful, loc);
}

Tensor uniform(const Shape& shape, double minval, double maxval, DType dtype,
               std::optional<uint64_t> seed, SourceLocation loc) {
  ops::check_uniform_range(minval, maxval);
  return ops::random_op(ops::kRandomUniform, shape, minval, maxval, dtype, seed, ops::Seeding::kStateful,
                        loc);
}

Tensor stateless_normal(const Shape& shape, uint64_t seed, double mean, double stddev, DType dtype,
                        SourceLocation loc) {
  return ops::random_op(ops::kRandomNormal, shape, mean, stddev, dtype, seed, ops::Seeding::kStateless,
                        loc);
}

Tensor stateless_uniform(const Shape& shape, uint64_t seed, double minval, double maxval, DType dtype,
                         SourceLocation loc) {
  ops::check_uniform_range(minval, maxval);
  return ops::random_op(ops::kRandomUniform, shape, minval, maxval, dtype, seed, ops::Seeding::kStateless,
                        loc);
}

Tensor uniform_like(const Tensor& x, double minval, double maxval, std::optional<DType> dtype,
                    std::optional<uint64_t> seed, SourceLocation loc) {
  ops::check_uniform_range(minval, maxval);
  return ops::random_like_op(ops::kRandomUniform, x, minval, maxval, dtype, seed, loc);
}

Tensor normal_like(const Tensor& x, double mean, double stddev, std::optional<DType> dtype,
                   std::optional<uint64_t> seed, SourceLocation loc) {
  return ops::random_like_op(ops::kRandomNormal, x, mean, stddev, dtype, seed, loc);
}

}  // namespace random
}  // namespace kiln
