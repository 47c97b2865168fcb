#pragma once
// kiln::nn::Sequential: layers called one after the other (Keras' Sequential).
//
//   kiln::nn::Sequential model;
//   model.add(kiln::nn::Dense(4, {.input_shape = kiln::Shape{10}}));
//   model.add(kiln::nn::Dense(1));
//   std::cout << model.summary();
#include <concepts>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/nn/layer.h"

namespace kiln::nn {

class Sequential : public Layer {
 public:
  explicit Sequential(std::string name = "");
  Sequential(std::vector<std::shared_ptr<Layer>> layers, std::string name = "");

  // Appends a layer. When the model knows its input shape (the first layer
  // has an input_shape), the layer is built at once, so summary() works
  // before any data has flowed.
  void add(std::shared_ptr<Layer> layer);
  template <class L>
    requires(std::derived_from<std::remove_cvref_t<L>, Layer> && !std::is_lvalue_reference_v<L>)
  void add(L&& layer) {
    add(std::make_shared<std::remove_cvref_t<L>>(std::move(layer)));
  }
  const std::vector<std::shared_ptr<Layer>>& layers() const { return layers_; }

  std::string class_name() const override { return "Sequential"; }
  Shape compute_output_shape(const Shape& input_shape) const override;

  // Keras' model.summary() text: one row per layer (name (type), output
  // shape, parameter count), then total, trainable and non-trainable
  // parameter counts. The model must be built.
  std::string summary() const;

 protected:
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
};

}  // namespace kiln::nn
