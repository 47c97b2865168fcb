// Sequential: a chain of layers, and Keras' summary table.
#include "kiln/nn/sequential.h"

#include <fmt/format.h>

#include "kiln/error.h"

namespace kiln::nn {

Sequential::Sequential(std::string name) : Layer("sequential", std::move(name)) {}

Sequential::Sequential(std::vector<std::shared_ptr<Layer>> layers, std::string name)
    : Sequential(std::move(name)) {
  for (auto& layer : layers) add(std::move(layer));
}

void Sequential::add(std::shared_ptr<Layer> layer) {
  if (!layer) throw InvalidArgument(fmt::format("{}: add() got a null layer", describe()));
  if (layer.get() == this) throw InvalidArgument(fmt::format("{}: cannot add a model to itself", describe()));
  track(layer);
  layers_.push_back(layer);
  if (layers_.size() == 1 && !built()) {
    // The model's input shape: the first layer's, when it knows it.
    if (layer->built()) {
      build(layer->build_input_shape());
    } else if (layer->declared_input_shape()) {
      Shape input{None};
      for (int64_t d : layer->declared_input_shape()->dims()) input.push_back(d);
      build(input);
    }
  } else if (built() && !layer->built()) {
    Shape input = build_input_shape();
    for (std::size_t i = 0; i + 1 < layers_.size(); ++i) input = layers_[i]->compute_output_shape(input);
    layer->build(input);
  }
}

Shape Sequential::compute_output_shape(const Shape& input_shape) const {
  Shape s = input_shape;
  for (const auto& layer : layers_) s = layer->compute_output_shape(s);
  return s;
}

void Sequential::build_weights(const Shape& input_shape) {
  if (layers_.empty())
    throw FailedPrecondition(fmt::format("{}: the model has no layers; add() some first", describe()));
  Shape s = input_shape;
  for (const auto& layer : layers_) {
    if (!layer->built()) layer->build(s);
    s = layer->compute_output_shape(s);
  }
}

Tensor Sequential::call(const Tensor& x, bool training) {
  Tensor y = x;
  for (const auto& layer : layers_) y = (*layer)(y, training);
  return y;
}

namespace {

// Python's "{:,}".
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

int64_t count(const std::vector<Variable>& vars) {
  int64_t n = 0;
  for (const Variable& v : vars) n += v.shape().num_elements();
  return n;
}

// Keras' print_row: each field cut or padded to end at its column; a field
// that overflows keeps one space before the next.
std::string row(const std::vector<std::string>& fields, const std::vector<std::size_t>& ends) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0 && !line.empty()) line.back() = ' ';
    line += fields[i];
    if (line.size() > ends[i]) line.resize(ends[i]);
    line.append(ends[i] - line.size(), ' ');
  }
  return line + "\n";
}

}  // namespace

std::string Sequential::summary() const {
  if (!built())
    throw FailedPrecondition(fmt::format(
        "{}: summary() needs the model built: give the first layer an input_shape, call build(), or call the "
        "model once",
        describe()));
  constexpr std::size_t kWidth = 65;
  const std::vector<std::size_t> ends = {29, 55, 65};  // Keras' positions .45, .85, 1 of 65
  const std::string thin(kWidth, '_'), thick(kWidth, '=');
  std::string out = fmt::format("Model: \"{}\"\n", name());
  out += thin + "\n";
  out += row({"Layer (type)", "Output Shape", "Param #"}, ends);
  out += thick + "\n";
  Shape shape = build_input_shape();
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layer = *layers_[i];
    shape = layer.compute_output_shape(shape);
    out += row({fmt::format("{} ({})", layer.name(), layer.class_name()), shape.to_string(),
                std::to_string(layer.count_params())},
               ends);
    out += (i + 1 == layers_.size() ? thick : thin) + "\n";
  }
  int64_t trainable = count(trainable_variables()), all = count(variables());
  out += fmt::format("Total params: {}\n", with_commas(all));
  out += fmt::format("Trainable params: {}\n", with_commas(trainable));
  out += fmt::format("Non-trainable params: {}\n", with_commas(all - trainable));
  out += thin + "\n";
  return out;
}

}  // namespace kiln::nn
