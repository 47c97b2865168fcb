#pragma once
// Learning-rate schedules, as Keras' (tf.keras.optimizers.schedules): the
// rate as a function of the optimizer's step count. An optimizer given one
// computes the rate from its `iterations` variable on every
// apply_gradients, inside the traced step when traced, so one trace serves
// every step.
//
//   kiln::nn::Adam adam(kiln::nn::CosineDecay(1e-3, /*decay_steps=*/1000));
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/tensor.h"

namespace kiln::nn {

class LearningRateSchedule {
 public:
  virtual ~LearningRateSchedule() = default;
  // The rate (float32 scalar) at `step`: the number of updates before this
  // one (an integer or floating scalar tensor).
  virtual Tensor operator()(const Tensor& step) const = 0;
  // Keras' class name: "ExponentialDecay", "CosineDecay".
  virtual std::string class_name() const = 0;
};

// initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent
// floored with `staircase`.
class ExponentialDecay : public LearningRateSchedule {
 public:
  ExponentialDecay(double initial_learning_rate, int64_t decay_steps, double decay_rate, bool staircase = false);
  Tensor operator()(const Tensor& step) const override;
  std::string class_name() const override { return "ExponentialDecay"; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
};

// initial_learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step,
// decay_steps) / decay_steps)) + alpha): Loshchilov & Hutter's SGDR without
// restarts (and without Keras 2.13's warmup).
class CosineDecay : public LearningRateSchedule {
 public:
  CosineDecay(double initial_learning_rate, int64_t decay_steps, double alpha = 0.0);
  Tensor operator()(const Tensor& step) const override;
  std::string class_name() const override { return "CosineDecay"; }

 private:
  double initial_learning_rate_;
  int64_t decay_steps_;
  double alpha_;
};

// An optimizer's learning_rate argument: a number or a schedule (copied).
class LearningRate {
 public:
  LearningRate(double value) : value_(value) {}
  template <class S>
    requires std::derived_from<S, LearningRateSchedule>
  LearningRate(S schedule) : schedule_(std::make_shared<S>(std::move(schedule))) {}
  // Null for a number.
  const std::shared_ptr<const LearningRateSchedule>& schedule() const { return schedule_; }
  // The number (0 for a schedule).
  double value() const { return value_; }

 private:
  double value_ = 0;
  std::shared_ptr<const LearningRateSchedule> schedule_;
};

}  // namespace kiln::nn
