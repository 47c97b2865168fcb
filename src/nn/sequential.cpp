// Sequential: a chain of layers, and Keras 2.15's summary table (the text tf.keras prints).
#include "kiln/nn/sequential.h"

#include <fmt/format.h>

#include <algorithm>

#include "kiln/dtype.h"
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

int64_t count(const std::vector<Variable>& vars) {
  int64_t n = 0;
  for (const Variable& v : vars) n += v.shape().num_elements();
  return n;
}

int64_t memory_bytes(const std::vector<Variable>& vars) {
  int64_t n = 0;
  for (const Variable& v : vars) n += v.shape().num_elements() * static_cast<int64_t>(dtype_size(v.dtype()));
  return n;
}

// Keras' readable_memory_size: "12.00 Byte", "1.63 KB", units of 1024.
std::string readable_memory(double size) {
  static const char* const kUnits[] = {"Byte", "KB", "MB", "GB", "TB"};
  for (const char* unit : kUnits) {
    if (size / 1024 < 1) return fmt::format("{:.2f} {}", size, unit);
    size /= 1024;
  }
  return fmt::format("{:.2f} PB", size);
}

// Keras 2.15's print_row: a leading space, each column cut two characters (three before the last
// column) short of its end, a field's rest continued on the next line, broken after "),", "],"...
std::string row(std::vector<std::string> fields, const std::vector<std::size_t>& ends) {
  std::string out;
  const std::size_t last = ends.size() - 1;
  auto any_left = [&] {
    for (const auto& f : fields)
      if (!f.empty()) return true;
    return false;
  };
  while (any_left()) {
    std::string line;
    for (std::size_t col = 0; col < fields.size(); ++col) {
      const std::size_t start = col ? ends[col - 1] : 0, space = col == last ? 0 : 2;
      std::size_t cutoff = ends[col] - start - space - (col == last ? 0 : 1);
      std::string piece = fields[col].substr(0, cutoff);
      std::size_t brk = std::string::npos;
      for (const char* mark : {"),", "},", "],", "',"}) {
        std::size_t at = piece.find(mark);
        if (at != std::string::npos) brk = std::min(brk, at + 2);
      }
      if (brk != std::string::npos) piece = piece.substr(0, cutoff = brk);
      if (col == 0) line += ' ';
      line += piece + std::string(space, ' ');
      fields[col] = cutoff < fields[col].size() ? fields[col].substr(cutoff) : "";
      if (line.size() < ends[col]) line.append(ends[col] - line.size(), ' ');
    }
    out += line + "\n";
  }
  return out;
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
  const std::string thin(kWidth, '_'), thick(kWidth, '='), blank(kWidth, ' ');
  std::string out = fmt::format("Model: \"{}\"\n", name());
  out += thin + "\n";
  out += row({"Layer (type)", "Output Shape", "Param #"}, ends);
  out += thick + "\n";
  Shape shape = build_input_shape();
  for (const auto& layer : layers_) {
    shape = layer->compute_output_shape(shape);
    out += row({fmt::format("{} ({})", layer->name(), layer->class_name()), shape.to_string(),
                std::to_string(layer->count_params())},
               ends);
    out += blank + "\n";
  }
  out += thick + "\n";
  const auto trainable = trainable_variables(), frozen = non_trainable_variables();
  const int64_t n_trainable = count(trainable), n_frozen = count(frozen);
  const int64_t m_trainable = memory_bytes(trainable), m_frozen = memory_bytes(frozen);
  out += fmt::format("Total params: {} ({})\n", n_trainable + n_frozen,
                     readable_memory(static_cast<double>(m_trainable + m_frozen)));
  out += fmt::format("Trainable params: {} ({})\n", n_trainable, readable_memory(static_cast<double>(m_trainable)));
  out += fmt::format("Non-trainable params: {} ({})\n", n_frozen, readable_memory(static_cast<double>(m_frozen)));
  out += thin + "\n";
  return out;
}

}  // namespace kiln::nn
