#pragma once
// kiln::nn::Layer: a Module called on a tensor, whose weights are made on the
// first call from the input's shape (Keras' build), so a layer needs no input
// size up front. Works eagerly and inside kiln::function: a layer first
// called while a function traces creates its variables in that first trace
// (kiln::function allows variables only there, docs/design-notes.md, "kiln::function") and reuses them
// on every later trace and call.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "kiln/module.h"
#include "kiln/shape.h"
#include "kiln/tensor.h"

namespace kiln::nn {

// Keras' default layer names: the first "dense", then "dense_1", "dense_2", ...
// One counter per kind for the whole process (Keras: per session), so names
// are unique across models as in Keras. Thread-safe.
std::string unique_name(std::string_view kind);
// Restarts every counter (Keras' clear_session for names): the next Dense is
// "dense" again. Layers that exist keep their names.
void clear_session();

// An activation: a name (Keras': "linear", "relu", "sigmoid", "tanh",
// "softmax", "elu", "selu", "softplus", "softsign", "gelu", "swish"/"silu",
// "exponential") or any function Tensor -> Tensor. The default is linear.
class Activation {
 public:
  Activation() = default;
  Activation(const char* name) : Activation(std::string(name)) {}
  Activation(std::string name);
  Activation(std::function<Tensor(const Tensor&)> fn, std::string name = "custom");
  Tensor operator()(const Tensor& x) const { return fn_ ? fn_(x) : x; }
  const std::string& name() const { return name_; }
  bool is_linear() const { return !fn_; }

 private:
  std::string name_ = "linear";
  std::function<Tensor(const Tensor&)> fn_;
};

class Layer : public Module {
 public:
  // Calls the layer, building it first when needed. `training` switches
  // layers that behave differently while training (Dropout).
  Tensor operator()(const Tensor& x, bool training = false);

  // Creates the weights for inputs of `input_shape` (batch dim included; it
  // may be None). Called by the first call; call it directly to build
  // without data. Building twice is an error.
  void build(const Shape& input_shape);
  bool built() const { return built_; }
  // The input shape the layer was built for, batch dim None.
  const Shape& build_input_shape() const;
  // The shape the layer would give for inputs of `input_shape`.
  virtual Shape compute_output_shape(const Shape& input_shape) const = 0;
  // Keras' class name: "Dense", "Conv2D", "MaxPooling2D", ...
  virtual std::string class_name() const = 0;
  // The number of weights (elements of every variable); the layer must be built.
  int64_t count_params() const;
  // The input shape given at construction (Keras' `input_shape`, batch dim
  // excluded), if any.
  const std::optional<Shape>& declared_input_shape() const { return declared_input_shape_; }
  // The dtype of the layer's weights and of the inputs it computes with;
  // floating inputs of another dtype are cast to it (Keras' autocast).
  DType dtype() const { return dtype_; }

 protected:
  // `kind` names the layer when `name` is empty: unique_name(kind).
  Layer(std::string_view kind, std::string name, std::optional<Shape> input_shape = std::nullopt,
        DType dtype = DType::Float32);
  // Creates the weights (add_weight) for this input shape.
  virtual void build_weights(const Shape& input_shape) {}
  // The layer's computation, on inputs already cast to dtype().
  virtual Tensor call(const Tensor& x, bool training) = 0;
  // A weight named scoped_name(name): Glorot-uniform (kernels), zeros or ones.
  enum class Init { GlorotUniform, Zeros, Ones };
  Variable add_weight(std::string_view name, const Shape& shape, Init init,
                      int64_t fan_in = 0, int64_t fan_out = 0, std::optional<uint64_t> seed = std::nullopt,
                      bool trainable = true);
  // `x` cast to dtype() when it is floating of another dtype (Keras'
  // autocast), else `x` itself.
  Tensor autocast(const Tensor& x) const;
  // "Dense 'dense'", to start error messages.
  std::string describe() const;
  // Throws InvalidArgument unless `input_shape` has rank `rank` (or more
  // when `at_least`).
  void check_rank(const Shape& input_shape, int rank, bool at_least = false) const;

 private:
  std::optional<Shape> declared_input_shape_;
  DType dtype_;
  bool built_ = false;
  Shape build_input_shape_;
};

}  // namespace kiln::nn
