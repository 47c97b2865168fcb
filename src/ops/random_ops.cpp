// RandomNormal and RandomUniform, on a counter-based generator (Philox4x32-10):
// element i of a draw is a pure function of (key, counter + i), so kernels
// split work across threads and still give the same values as one thread.
#include <atomic>
#include <cmath>
#include <random>

#include "core/dtype_switch.h"
#include "core/parallel.h"
#include "kiln/random.h"
#include "runtime/dispatch.h"

namespace kiln {
namespace detail {

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

struct GlobalGenerator {
  std::atomic<uint64_t> key{std::random_device{}() | (uint64_t(std::random_device{}()) << 32)};
  std::atomic<uint64_t> counter{0};
};
GlobalGenerator& generator() {
  static GlobalGenerator g;
  return g;
}

// Uniform in [0, 1): 24 random bits for float, 53 for double.
inline float to_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * 0x1.0p-24f; }
inline double to_unit_double(uint32_t hi, uint32_t lo) {
  return static_cast<double>((uint64_t(hi) << 21) ^ (lo >> 11)) * 0x1.0p-53;
}

// Where a draw starts: a fixed key for seeded ops, else the global generator,
// advanced atomically so concurrent calls never share numbers.
void draw_position(const Attrs& attrs, int64_t blocks, uint64_t* key, uint64_t* counter) {
  int64_t seed = attrs.get_int("seed");
  if (seed >= 0) {
    *key = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull + 1;
    *counter = 0;
    return;
  }
  GlobalGenerator& g = generator();
  *key = g.key.load(std::memory_order_relaxed);
  *counter = g.counter.fetch_add(static_cast<uint64_t>(blocks), std::memory_order_relaxed);
}

// The shape comes from the "shape" attr, or from an input tensor's shape
// (the *_like forms), which may have dims known only at run time.
void random_infer(InferContext& c) {
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
void fill_blocks(Tensor& out, const Attrs& attrs, Fill fill) {
  int64_t n = out.size();
  int64_t blocks = (n + 1) / 2;
  uint64_t key, counter;
  draw_position(attrs, blocks, &key, &counter);
  T* o = data_of<T>(out);
  parallel_for(blocks, [&](int64_t b, int64_t e) {
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

void uniform_kernel(KernelContext& c) {
  double lo = c.attrs.get_float("a"), hi = c.attrs.get_float("b");
  visit_dtype(c.outputs[0].dtype(), [&]<class T>() {
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

void normal_kernel(KernelContext& c) {
  double mean = c.attrs.get_float("a"), stddev = c.attrs.get_float("b");
  visit_dtype(c.outputs[0].dtype(), [&]<class T>() {
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

std::vector<OpSample> random_samples() {
  return {{{}, Attrs{{"shape", Shape{3, 2}}, {"dtype", DType::Float32}, {"a", 0.0}, {"b", 1.0},
                     {"seed", int64_t(7)}}},
          {{constant({{1, 2, 3}, {4, 5, 6}})}, Attrs{{"dtype", DType::Float64}, {"a", -1.0}, {"b", 1.0},
                                                     {"seed", int64_t(3)}}}};
}

constexpr OpDef kRandomUniform{.name = "RandomUniform", .infer = random_infer,
                               .kernel = uniform_kernel, .flags = kStateful | kNotDifferentiable,
                               .samples = random_samples};
constexpr OpDef kRandomNormal{.name = "RandomNormal", .infer = random_infer,
                              .kernel = normal_kernel, .flags = kStateful | kNotDifferentiable,
                              .samples = random_samples};

void check_uniform_range(double minval, double maxval) {
  if (!(minval < maxval))
    throw InvalidArgument(fmt::format("RandomUniform: minval ({}) must be less than maxval ({})", minval, maxval));
}

int64_t seed_attr(const OpDef& op, std::optional<uint64_t> seed) {
  if (seed && *seed > static_cast<uint64_t>(INT64_MAX))
    throw InvalidArgument(fmt::format("{}: seed {} is too large (at most 2^63-1)", op.name, *seed));
  return seed ? static_cast<int64_t>(*seed) : -1;
}

Tensor random_op(const OpDef& op, const Shape& shape, double a, double b, DType dtype,
                 std::optional<uint64_t> seed, const SourceLocation& loc) {
  return dispatch1(op, {},
                   Attrs{{"shape", shape}, {"dtype", dtype}, {"a", a}, {"b", b}, {"seed", seed_attr(op, seed)}},
                   loc);
}

Tensor random_like_op(const OpDef& op, const Tensor& like, double a, double b, std::optional<DType> dtype,
                      std::optional<uint64_t> seed, const SourceLocation& loc) {
  DType d = dtype ? *dtype : like.dtype();
  const Tensor in[] = {like};
  return dispatch1(op, in, Attrs{{"dtype", d}, {"a", a}, {"b", b}, {"seed", seed_attr(op, seed)}}, loc);
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  r.add(kRandomUniform);
  r.add(kRandomNormal);
}

}  // namespace detail

namespace random {

void set_seed(uint64_t seed) {
  detail::GlobalGenerator& g = detail::generator();
  g.key.store(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull, std::memory_order_relaxed);
  g.counter.store(0, std::memory_order_relaxed);
}

Tensor normal(const Shape& shape, double mean, double stddev, DType dtype,
              std::optional<uint64_t> seed, SourceLocation loc) {
  return detail::random_op(detail::kRandomNormal, shape, mean, stddev, dtype, seed, loc);
}

Tensor uniform(const Shape& shape, double minval, double maxval, DType dtype,
               std::optional<uint64_t> seed, SourceLocation loc) {
  detail::check_uniform_range(minval, maxval);
  return detail::random_op(detail::kRandomUniform, shape, minval, maxval, dtype, seed, loc);
}

Tensor uniform_like(const Tensor& x, double minval, double maxval, std::optional<DType> dtype,
                    std::optional<uint64_t> seed, SourceLocation loc) {
  detail::check_uniform_range(minval, maxval);
  return detail::random_like_op(detail::kRandomUniform, x, minval, maxval, dtype, seed, loc);
}

Tensor normal_like(const Tensor& x, double mean, double stddev, std::optional<DType> dtype,
                   std::optional<uint64_t> seed, SourceLocation loc) {
  return detail::random_like_op(detail::kRandomNormal, x, mean, stddev, dtype, seed, loc);
}

}  // namespace random
}  // namespace kiln
