// ExponentialDecay and CosineDecay, in float32 as Keras' schedules.
#include "kiln/nn/schedules.h"

#include <fmt/format.h>

#include <numbers>

#include "kiln/error.h"
#include "kiln/math.h"

namespace kiln::nn {

namespace {

void check_decay_steps(const char* who, int64_t decay_steps) {
  if (decay_steps <= 0)
    throw InvalidArgument(fmt::format("{}: Argument `decay_steps` must be > 0. Received: decay_steps={}", who,
                                      decay_steps));
}

Tensor float_step(const Tensor& step) { return step.dtype() == DType::Float32 ? step : cast(step, DType::Float32); }

}  // namespace

ExponentialDecay::ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate,
                                   bool staircase)
    : initial_learning_rate_(initial_learning_rate),
      decay_steps_(decay_steps),
      decay_rate_(decay_rate),
      staircase_(staircase) {
  check_decay_steps("ExponentialDecay", decay_steps);
}

Tensor ExponentialDecay::operator()(const Tensor& step) const {
  Tensor p = float_step(step) / static_cast<float>(decay_steps_);
  if (staircase_) p = floor(p);
  return pow(constant(static_cast<float>(decay_rate_)), p) * static_cast<float>(initial_learning_rate_);
}

CosineDecay::CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha)
    : initial_learning_rate_(initial_learning_rate), decay_steps_(decay_steps), alpha_(alpha) {
  check_decay_steps("CosineDecay", decay_steps);
}

Tensor CosineDecay::operator()(const Tensor& step) const {
  const float steps = static_cast<float>(decay_steps_);
  Tensor done = minimum(float_step(step), steps) / steps;
  Tensor cosine = (cos(done * static_cast<float>(std::numbers::pi)) + 1.0f) * 0.5f;
  return (cosine * static_cast<float>(1 - alpha_) + static_cast<float>(alpha_)) * static_cast<float>(initial_learning_rate_);
}

}  // namespace kiln::nn
