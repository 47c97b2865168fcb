// Layer: lazy building, unique names, weights, activations by name.
#include "kiln/nn/layer.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <mutex>

#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "kiln/random.h"

namespace kiln::nn {

namespace {

struct NameCounters {
  std::mutex mutex;
  std::map<std::string, int64_t, std::less<>> next;
};
NameCounters& name_counters() {
  static NameCounters counters;
  return counters;
}

}  // namespace

std::string unique_name(std::string_view kind) {
  NameCounters& c = name_counters();
  std::lock_guard lock(c.mutex);
  auto it = c.next.find(kind);
  if (it == c.next.end()) it = c.next.emplace(std::string(kind), 0).first;
  int64_t n = it->second++;
  return n == 0 ? std::string(kind) : fmt::format("{}_{}", kind, n);
}

void clear_session() {
  NameCounters& c = name_counters();
  std::lock_guard lock(c.mutex);
  c.next.clear();
}

Activation::Activation(std::string name) : name_(std::move(name)) {
  using Fn = Tensor (*)(const Tensor&);
  static const std::pair<std::string_view, Fn> kByName[] = {
      {"relu", [](const Tensor& x) { return relu(x); }},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); }},
      {"tanh", [](const Tensor& x) { return tanh(x); }},
      {"softmax", [](const Tensor& x) { return softmax(x); }},
      {"elu", [](const Tensor& x) { return elu(x); }},
      {"selu", [](const Tensor& x) { return selu(x); }},
      {"softplus", [](const Tensor& x) { return softplus(x); }},
      {"softsign", [](const Tensor& x) { return softsign(x); }},
      {"gelu", [](const Tensor& x) { return gelu(x); }},
      {"swish", [](const Tensor& x) { return silu(x); }},
      {"silu", [](const Tensor& x) { return silu(x); }},
      {"exponential", [](const Tensor& x) { return exp(x); }},
  };
  if (name_ == "linear" || name_.empty()) {
    name_ = "linear";
    return;
  }
  for (const auto& [known, fn] : kByName) {
    if (name_ == known) {
      fn_ = fn;
      return;
    }
  }
  std::vector<std::string_view> names{"linear"};
  for (const auto& entry : kByName) names.push_back(entry.first);
  throw InvalidArgument(fmt::format("Activation: unknown activation '{}' (known: {}; or pass a function Tensor -> Tensor)",
                                    name_, fmt::join(names, ", ")));
}

Activation::Activation(std::function<Tensor(const Tensor&)> fn, std::string name)
    : name_(std::move(name)), fn_(std::move(fn)) {
  if (!fn_) throw InvalidArgument("Activation: the function is empty");
}

Layer::Layer(std::string_view kind, std::string name, std::optional<Shape> input_shape, DType dtype)
    : Module(name.empty() ? unique_name(kind) : std::move(name)),
      declared_input_shape_(std::move(input_shape)),
      dtype_(dtype) {
  if (!is_floating(dtype_))
    throw InvalidArgument(fmt::format("layer '{}': the dtype must be float32 or float64, got {}", this->name(),
                                      dtype_name(dtype_)));
}

std::string Layer::describe() const { return fmt::format("{} '{}'", class_name(), name()); }

void Layer::build(const Shape& input_shape) {
  if (built_) throw FailedPrecondition(fmt::format("{}: build() called on a layer already built", describe()));
  if (!input_shape.has_known_rank())
    throw InvalidArgument(fmt::format("{}: cannot build for inputs of unknown rank", describe()));
  Shape shape = input_shape;
  if (shape.rank() > 0) shape[0] = None;
  build_weights(shape);
  build_input_shape_ = shape;
  built_ = true;
}

const Shape& Layer::build_input_shape() const {
  if (!built_) throw FailedPrecondition(fmt::format("{}: the layer is not built yet", describe()));
  return build_input_shape_;
}

Tensor Layer::operator()(const Tensor& x, bool training) {
  if (!x.defined()) throw InvalidArgument(fmt::format("{}: the input is a null tensor", describe()));
  if (!built_) build(x.shape());
  return call(autocast(x), training);
}

Tensor Layer::autocast(const Tensor& x) const {
  return is_floating(x.dtype()) && x.dtype() != dtype_ ? cast(x, dtype_) : x;
}

int64_t Layer::count_params() const {
  if (!built_)
    throw FailedPrecondition(fmt::format(
        "{}: count_params() needs the layer built (call it once, or give it an input_shape)", describe()));
  int64_t n = 0;
  for (const Variable& v : variables()) n += v.shape().num_elements();
  return n;
}

Variable Layer::add_weight(std::string_view name, const Shape& shape, Init init, int64_t fan_in,
                           int64_t fan_out, std::optional<uint64_t> seed, bool trainable) {
  if (!shape.is_fully_defined())
    throw InvalidArgument(fmt::format("{}: the weight '{}' needs a fully defined shape, got {}", describe(),
                                      name, shape.to_string()));
  return add_variable(
      name,
      [&] {
        if (init == Init::Zeros) return zeros(shape, dtype_);
        if (init == Init::Ones) return ones(shape, dtype_);
        // Glorot & Bengio (2010): U(-l, l) with l = sqrt(6 / (fan_in + fan_out)).
        double limit = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
        // A seeded initializer gives the same values on every call (Keras').
        if (seed) return random::stateless_uniform(shape, *seed, -limit, limit, dtype_);
        return random::uniform(shape, -limit, limit, dtype_);
      },
      trainable);
}

void Layer::check_rank(const Shape& input_shape, int rank, bool at_least) const {
  if (!input_shape.has_known_rank()) return;
  int r = input_shape.rank();
  if (at_least ? r >= rank : r == rank) return;
  throw InvalidArgument(fmt::format("{}: expected inputs of rank {}{}, got shape {}", describe(),
                                    at_least ? ">= " : "", rank, input_shape.to_string()));
}

}  // namespace kiln::nn
