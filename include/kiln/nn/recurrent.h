#pragma once
// Keras' recurrent layers: SimpleRNN, LSTM and GRU over [batch, time,
// features] inputs, with Keras' weights, gate order, equations and defaults.
//
//   kiln::nn::LSTM lstm(128);                      // [batch, 28, 28] -> [batch, 128]
//   kiln::Tensor h = lstm(x);
//   auto [out, states] = lstm.call_with_states(x); // states: {h, c}
//
// The time loop is a kiln::for_range over the steps: eagerly a C++ loop,
// while kiln::function traces one While op whose body reads the step's
// inputs from a TensorArray and writes the outputs to another (the graph
// does not grow with the sequence length, which may be unknown). With
// `unroll` a traced call instead repeats the step's ops once per step (the
// length must be known), as Keras' unroll=True.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/nn/layer.h"

namespace kiln::nn {

struct RecurrentOptions {
  Activation activation = "tanh";
  // The gates' activation (LSTM and GRU; SimpleRNN has no gates).
  Activation recurrent_activation = "sigmoid";
  bool use_bias = true;
  // The output at every step ([batch, time, units]) instead of the last one.
  bool return_sequences = false;
  // Runs over the steps last to first (the outputs in that order, as Keras').
  bool go_backwards = false;
  // Keras' unroll: a traced call repeats the step instead of looping.
  bool unroll = false;
  // LSTM: the forget gate's bias starts at 1 (Keras' unit_forget_bias).
  bool unit_forget_bias = true;
  // GRU: the reset gate applies after the recurrent matmul and the bias is
  // [2, 3 * units] (input and recurrent biases), TF2's default; false gives
  // Keras 1's GRU (reset before the matmul, one [3 * units] bias).
  bool reset_after = true;
  std::optional<Shape> input_shape;
  std::string name;
  // Seeds the kernel's Glorot-uniform and the recurrent kernel's orthogonal
  // values; without one they come from kiln::random's global generator.
  std::optional<uint64_t> seed;
  DType dtype = DType::Float32;
};

// The output (the last step's, or every step's with return_sequences) and the
// final states (h; for LSTM h then c), each [batch, units].
struct RecurrentResult {
  Tensor output;
  std::vector<Tensor> states;
};

// What the three layers share: the weights (kernel [input, gates * units],
// Glorot uniform; recurrent_kernel [units, gates * units], orthogonal; bias,
// zeros) and the loop over time. A subclass supplies the step.
class RNN : public Layer {
 public:
  Shape compute_output_shape(const Shape& input_shape) const override;
  // The output and the final states, starting from `initial_state` (one
  // [batch, units] tensor per state; empty: zeros).
  RecurrentResult call_with_states(const Tensor& x, const std::vector<Tensor>& initial_state = {});
  int64_t units() const { return units_; }
  // Null until built (bias also without use_bias).
  const Variable& kernel() const { return kernel_; }
  const Variable& recurrent_kernel() const { return recurrent_kernel_; }
  const Variable& bias() const { return bias_; }

 protected:
  // `kind` as Layer's; `label` ("LSTM") starts the construction errors;
  // `gates`: how many blocks of `units` columns the kernels have.
  RNN(std::string_view kind, std::string_view label, int64_t units, int64_t gates, int64_t num_states,
      RecurrentOptions options);
  void build_weights(const Shape& input_shape) override;
  Tensor call(const Tensor& x, bool training) override;
  // The bias variable's shape and initial value (for use_bias).
  virtual Shape bias_shape() const;
  virtual Tensor initial_bias() const;
  // The bias added to x @ kernel before the loop (all of it by default).
  virtual Tensor input_bias(const Tensor& bias) const { return bias; }
  // One step: the step's inputs already multiplied by the kernel (input bias
  // added), and the previous states; returns the new states, the output
  // first.
  virtual std::vector<Tensor> step(const Tensor& projected, const std::vector<Tensor>& states,
                                   const Tensor& recurrent_kernel, const Tensor& bias) const = 0;
  const RecurrentOptions& options() const { return options_; }

 private:
  int64_t units_, gates_, num_states_;
  RecurrentOptions options_;
  Variable kernel_, recurrent_kernel_, bias_;
};

// h = activation(x @ kernel + bias + h_prev @ recurrent_kernel).
class SimpleRNN : public RNN {
 public:
  explicit SimpleRNN(int64_t units, RecurrentOptions options = {});
  std::string class_name() const override { return "SimpleRNN"; }

 protected:
  std::vector<Tensor> step(const Tensor& projected, const std::vector<Tensor>& states,
                           const Tensor& recurrent_kernel, const Tensor& bias) const override;
};

// Hochreiter & Schmidhuber (1997), Keras' gate order i, f, c, o:
// z = x @ kernel + h @ recurrent_kernel + bias; i, f, o = recurrent_activation
// of their blocks; c = f * c_prev + i * activation(z_c); h = o * activation(c).
class LSTM : public RNN {
 public:
  explicit LSTM(int64_t units, RecurrentOptions options = {});
  std::string class_name() const override { return "LSTM"; }

 protected:
  Tensor initial_bias() const override;
  std::vector<Tensor> step(const Tensor& projected, const std::vector<Tensor>& states,
                           const Tensor& recurrent_kernel, const Tensor& bias) const override;
};

// Cho et al. (2014), Keras' gate order z (update), r (reset), h:
// z, r = recurrent_activation(x_z + h_prev @ U_z, x_r + h_prev @ U_r);
// hh = activation(x_h + r * (h_prev @ U_h)) (reset_after; else (r * h_prev) @ U_h);
// h = z * h_prev + (1 - z) * hh.
class GRU : public RNN {
 public:
  explicit GRU(int64_t units, RecurrentOptions options = {});
  std::string class_name() const override { return "GRU"; }

 protected:
  Shape bias_shape() const override;
  Tensor input_bias(const Tensor& bias) const override;
  std::vector<Tensor> step(const Tensor& projected, const std::vector<Tensor>& states,
                           const Tensor& recurrent_kernel, const Tensor& bias) const override;
};

// Keras' Orthogonal initializer: a [rows, cols] matrix (rows = the product of
// all dims but the last) with orthonormal rows or columns, whichever are
// fewer, times `gain`: the Q of a normal matrix's QR decomposition, signs
// fixed so R's diagonal is positive. `shape` has rank 2 or more.
Tensor orthogonal(const Shape& shape, std::optional<uint64_t> seed = std::nullopt, double gain = 1.0,
                  DType dtype = DType::Float32);

}  // namespace kiln::nn
