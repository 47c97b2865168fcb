// SimpleRNN, LSTM and GRU: Keras' cells over a loop in time.
#include "kiln/nn/recurrent.h"

#include <fmt/format.h>

#include <tuple>

#include "kiln/array.h"
#include "kiln/control_flow.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/nn_ops.h"
#include "kiln/tensor_array.h"

namespace kiln::nn {

RNN::RNN(std::string_view kind, std::string_view label, int64_t units, int64_t gates, int64_t num_states,
         RecurrentOptions options)
    : Layer(kind, std::move(options.name), std::move(options.input_shape), options.dtype),
      units_(units),
      gates_(gates),
      num_states_(num_states),
      options_(std::move(options)) {
  if (units <= 0)
    throw InvalidArgument(fmt::format("{} '{}': units must be positive, got {}", label, name(), units));
}

Shape RNN::compute_output_shape(const Shape& input_shape) const {
  check_rank(input_shape, 3);
  if (!input_shape.has_known_rank()) return Shape::unknown_rank();
  if (options_.return_sequences) return Shape{input_shape[0], input_shape[1], units_};
  return Shape{input_shape[0], units_};
}

void RNN::build_weights(const Shape& input_shape) {
  check_rank(input_shape, 3);
  int64_t in = input_shape[2];
  if (in < 0)
    throw InvalidArgument(fmt::format("{}: the features dim (the last) of the inputs must be known to build the "
                                      "kernel, got shape {}",
                                      describe(), input_shape.to_string()));
  const int64_t cols = gates_ * units_;
  kernel_ = add_weight("kernel", Shape{in, cols}, Init::GlorotUniform, in, cols, options_.seed);
  // Keras seeds both initializers with the layer's seed; the recurrent kernel
  // takes the next seed so the two draws differ.
  std::optional<uint64_t> recurrent_seed;
  if (options_.seed) recurrent_seed = *options_.seed + 1;
  recurrent_kernel_ = add_variable("recurrent_kernel",
                                   [&] { return orthogonal(Shape{units_, cols}, recurrent_seed, 1.0, dtype()); });
  if (options_.use_bias) bias_ = add_variable("bias", [&] { return initial_bias(); });
}

Shape RNN::bias_shape() const { return Shape{gates_ * units_}; }

Tensor RNN::initial_bias() const { return zeros(bias_shape(), dtype()); }


Tensor RNN::call(const Tensor& x, bool) { return call_with_states(x).output; }

RecurrentResult RNN::call_with_states(const Tensor& input, const std::vector<Tensor>& initial_state) {
  if (!input.defined()) throw InvalidArgument(fmt::format("{}: the input is a null tensor", describe()));
  if (!built()) build(input.shape());
  const Tensor x = autocast(input);
  const Shape& shape = x.shape();
  check_rank(shape, 3);
  const int64_t in = kernel_.shape()[0];
  if (shape.has_known_rank() && shape[2] >= 0 && shape[2] != in)
    throw InvalidArgument(fmt::format("{}: the inputs' last dim is {} but the layer was built for {} (shape {})",
                                      describe(), shape[2], in, build_input_shape().to_string()));
  const int64_t steps = shape.has_known_rank() ? shape[1] : -1;
  if (steps == 0) throw InvalidArgument(fmt::format("{}: the inputs have no time steps (shape {})", describe(),
                                                    shape.to_string()));

  const Tensor kernel = kernel_.read_value(), recurrent_kernel = recurrent_kernel_.read_value();
  const Tensor bias = options_.use_bias ? bias_.read_value() : Tensor();
  const Tensor step_bias = bias.defined() ? input_bias(bias) : Tensor();
  // Time major: [time, batch, features]. Each step multiplies its own inputs
  // by the kernel (as Keras' cells): a matmul of all steps at once before
  // the loop would be one large product, but the loop's gradient would then
  // add a dense [time, batch, gates * units] gradient per step.
  const Tensor x_by_time = transpose(x, {1, 0, 2});
  auto next_states = [&](const Tensor& x_t, const std::vector<Tensor>& previous) {
    Tensor projected = matmul(x_t, kernel);
    if (step_bias.defined()) projected = bias_add(projected, step_bias);
    return step(projected, previous, recurrent_kernel, bias);
  };

  std::vector<Tensor> states = initial_state;
  if (states.empty()) {
    // Zeros of [batch, units], the batch known only when the graph runs.
    Tensor column = squeeze(slice(x_by_time, {0, 0, 0}, {1, -1, 1}), {0});
    for (int64_t s = 0; s < num_states_; ++s) states.push_back(tile(zeros_like(column), {1, units_}));
  } else if (static_cast<int64_t>(states.size()) != num_states_) {
    throw InvalidArgument(fmt::format("{}: expected {} initial state tensor(s), got {}", describe(), num_states_,
                                      states.size()));
  }

  if (options_.unroll && detail::control_flow_intercepted()) {
    if (steps < 0)
      throw InvalidArgument(fmt::format("{}: cannot unroll a RNN if the time dimension is undefined (shape {})",
                                        describe(), shape.to_string()));
    std::vector<Tensor> inputs = unstack(x_by_time, 0);
    std::vector<Tensor> outputs;
    for (int64_t t = 0; t < steps; ++t) {
      states = next_states(inputs[options_.go_backwards ? steps - 1 - t : t], states);
      if (options_.return_sequences) outputs.push_back(states[0]);
    }
    Tensor output = options_.return_sequences ? stack(outputs, 1) : states[0];
    return {std::move(output), std::move(states)};
  }

  const Tensor length = steps >= 0 ? constant(static_cast<int32_t>(steps)) : shape_of(x)[1];
  const Shape batch_and_features = shape.has_known_rank() ? Shape{shape[0], shape[2]} : Shape::unknown_rank();
  const TensorArray inputs = TensorArray(dtype(), length, {.element_shape = batch_and_features}).unstack(x_by_time);
  // The outputs' array only when they are returned: a loop variable costs
  // the gradient a copy per step.
  std::vector<TensorArray> outputs;
  if (options_.return_sequences) {
    Shape element = shape.has_known_rank() ? Shape{shape[0], units_} : Shape{None, units_};
    outputs.emplace_back(dtype(), length, TensorArrayOptions{.element_shape = element});
  }
  auto [final_states, written] = for_range(
      0, length, 1, std::tuple{states, outputs},
      [&](const Tensor& i, const std::vector<Tensor>& previous, const std::vector<TensorArray>& out) {
        Tensor t = options_.go_backwards ? length - 1 - i : i;
        std::vector<Tensor> next = next_states(inputs.read(t), previous);
        std::vector<TensorArray> out_next;
        for (const TensorArray& o : out) out_next.push_back(o.write(i, next[0]));
        return std::tuple{std::move(next), std::move(out_next)};
      });
  Tensor output = options_.return_sequences ? transpose(written[0].stack(), {1, 0, 2}) : final_states[0];
  return {std::move(output), std::move(final_states)};
}

SimpleRNN::SimpleRNN(int64_t units, RecurrentOptions options)
    : RNN("simple_rnn", "SimpleRNN", units, /*gates=*/1, /*num_states=*/1, std::move(options)) {}

std::vector<Tensor> SimpleRNN::step(const Tensor& projected, const std::vector<Tensor>& states,
                                    const Tensor& recurrent_kernel, const Tensor&) const {
  return {options().activation(projected + matmul(states[0], recurrent_kernel))};
}

LSTM::LSTM(int64_t units, RecurrentOptions options)
    : RNN("lstm", "LSTM", units, /*gates=*/4, /*num_states=*/2, std::move(options)) {}

Tensor LSTM::initial_bias() const {
  if (!options().unit_forget_bias) return RNN::initial_bias();
  const Shape block{units()};
  return concat({zeros(block, dtype()), ones(block, dtype()), zeros(Shape{2 * units()}, dtype())}, 0);
}

std::vector<Tensor> LSTM::step(const Tensor& projected, const std::vector<Tensor>& states,
                               const Tensor& recurrent_kernel, const Tensor&) const {
  const Activation& act = options().activation;
  const Activation& gate_act = options().recurrent_activation;
  // The gates by one split, not a slice each: the gradient is then one Concat,
  // where slices' would each fill a [batch, 4 * units] tensor with zeros and
  // add them up (much of lstm_mnist's step; figures in docs/perf-log.md).
  const std::vector<Tensor> z = split(projected + matmul(states[0], recurrent_kernel), 4, 1);
  Tensor i = gate_act(z[0]);
  Tensor f = gate_act(z[1]);
  Tensor c = f * states[1] + i * act(z[2]);
  Tensor o = gate_act(z[3]);
  return {o * act(c), c};
}

GRU::GRU(int64_t units, RecurrentOptions options)
    : RNN("gru", "GRU", units, /*gates=*/3, /*num_states=*/1, std::move(options)) {}

Shape GRU::bias_shape() const {
  if (options().reset_after) return Shape{2, 3 * units()};
  return RNN::bias_shape();
}

Tensor GRU::input_bias(const Tensor& bias) const { return options().reset_after ? bias[0] : bias; }

std::vector<Tensor> GRU::step(const Tensor& projected, const std::vector<Tensor>& states,
                              const Tensor& recurrent_kernel, const Tensor& bias) const {
  const Activation& act = options().activation;
  const Activation& gate_act = options().recurrent_activation;
  const Tensor& h = states[0];
  const int64_t u = units();
  const bool reset_after = options().reset_after;
  // h_prev @ U: every block with reset_after (plus the recurrent bias), else
  // the z and r blocks only (the h block multiplies r * h_prev below).
  Tensor inner = matmul(h, reset_after ? recurrent_kernel : slice(recurrent_kernel, {0, 0}, {-1, 2 * u}));
  if (reset_after && bias.defined()) inner = bias_add(inner, bias[1]);
  const std::vector<Tensor> x_part = split(projected, 3, 1), h_part = split(inner, reset_after ? 3 : 2, 1);
  Tensor z = gate_act(x_part[0] + h_part[0]);
  Tensor r = gate_act(x_part[1] + h_part[1]);
  Tensor recurrent_h = reset_after ? r * h_part[2] : matmul(r * h, slice(recurrent_kernel, {0, 2 * u}, {-1, u}));
  Tensor hh = act(x_part[2] + recurrent_h);
  return {z * h + (1 - z) * hh};
}

}  // namespace kiln::nn
