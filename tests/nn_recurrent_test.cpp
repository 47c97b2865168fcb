// SimpleRNN, LSTM and GRU: values against a hand-written reference of Keras'
// equations (double precision), shapes, traced (while loop and unrolled) =
// eager, gradients against finite differences, saved-model round trips, the
// orthogonal initializer and the errors.
#include "layer_gradient_check.h"
#include "layer_saved_model_check.h"
#include "test_util.h"
#include "wave_values.h"

#include <cmath>
#include <functional>

#include <kiln/saved_model.h>

#include "function/traced_graph.h"
#include "graph/graph.h"
#include "kiln/kiln.h"
#include "passes/passes.h"

using namespace kiln;
using kiln::testing::check_layer_gradients;
using kiln::testing::check_layer_saved_model;
using kiln::testing::expect_error;
using kiln::testing::LayerGradientCheck;
using kiln::testing::wave;
using kiln::testing::expect_tensor_near;

namespace {

using Matrix = std::vector<double>;  // row-major

double sigmoid_ref(double v) { return 1 / (1 + std::exp(-v)); }

// [rows, cols] @ [cols, n] plus `bias` (n values, or none).
Matrix affine(const Matrix& a, int64_t rows, int64_t cols, const Matrix& w, int64_t n, const double* bias) {
  Matrix out(rows * n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias ? bias[j] : 0;
      for (int64_t k = 0; k < cols; ++k) s += a[r * cols + k] * w[k * n + j];
      out[r * n + j] = s;
    }
  return out;
}

struct Weights {
  Matrix kernel, recurrent, bias;
};

// Keras' step equations in double: the new states (h first) from the step's
// inputs [batch, features] and the previous states.
using Step = std::function<std::vector<Matrix>(const Matrix& x, const std::vector<Matrix>& states)>;

Step simple_rnn_ref(const Weights& w, int64_t batch, int64_t in, int64_t u) {
  return [=](const Matrix& x, const std::vector<Matrix>& s) {
    Matrix a = affine(x, batch, in, w.kernel, u, w.bias.data());
    Matrix b = affine(s[0], batch, u, w.recurrent, u, nullptr);
    for (std::size_t k = 0; k < a.size(); ++k) a[k] = std::tanh(a[k] + b[k]);
    return std::vector<Matrix>{a};
  };
}

Step lstm_ref(const Weights& w, int64_t batch, int64_t in, int64_t u) {
  return [=](const Matrix& x, const std::vector<Matrix>& s) {
    Matrix z = affine(x, batch, in, w.kernel, 4 * u, w.bias.data());
    Matrix r = affine(s[0], batch, u, w.recurrent, 4 * u, nullptr);
    Matrix h(batch * u), c(batch * u);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < u; ++j) {
        auto at = [&](int g) { return z[b * 4 * u + g * u + j] + r[b * 4 * u + g * u + j]; };
        double i = sigmoid_ref(at(0)), f = sigmoid_ref(at(1)), o = sigmoid_ref(at(3));
        c[b * u + j] = f * s[1][b * u + j] + i * std::tanh(at(2));
        h[b * u + j] = o * std::tanh(c[b * u + j]);
      }
    return std::vector<Matrix>{h, c};
  };
}

Step gru_ref(const Weights& w, int64_t batch, int64_t in, int64_t u, bool reset_after) {
  return [=](const Matrix& x, const std::vector<Matrix>& s) {
    const Matrix& hp = s[0];
    Matrix mx = affine(x, batch, in, w.kernel, 3 * u, w.bias.data());
    Matrix inner = affine(hp, batch, u, w.recurrent, 3 * u, reset_after ? w.bias.data() + 3 * u : nullptr);
    Matrix h(batch * u);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < u; ++j) {
        double z = sigmoid_ref(mx[b * 3 * u + j] + inner[b * 3 * u + j]);
        double r = sigmoid_ref(mx[b * 3 * u + u + j] + inner[b * 3 * u + u + j]);
        double rh;
        if (reset_after) {
          rh = r * inner[b * 3 * u + 2 * u + j];
        } else {
          // (r * h_prev) @ U_h: r is per unit, so recompute the row.
          rh = 0;
          for (int64_t k = 0; k < u; ++k) {
            double rk = sigmoid_ref(mx[b * 3 * u + u + k] + inner[b * 3 * u + u + k]);
            rh += rk * hp[b * u + k] * w.recurrent[k * 3 * u + 2 * u + j];
          }
        }
        double hh = std::tanh(mx[b * 3 * u + 2 * u + j] + rh);
        h[b * u + j] = z * hp[b * u + j] + (1 - z) * hh;
      }
    return std::vector<Matrix>{h};
  };
}

// Runs `step` over x [batch, steps, in]: every step's h and the final states.
struct RefResult {
  Matrix sequence;  // [batch, steps, units]
  std::vector<Matrix> states;
};
RefResult run_ref(const Step& step, const Matrix& x, int64_t batch, int64_t steps, int64_t in, int64_t u,
                  int num_states, bool go_backwards) {
  RefResult r{Matrix(batch * steps * u), std::vector<Matrix>(num_states, Matrix(batch * u, 0.0))};
  for (int64_t i = 0; i < steps; ++i) {
    int64_t t = go_backwards ? steps - 1 - i : i;
    Matrix xt(batch * in);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t k = 0; k < in; ++k) xt[b * in + k] = x[(b * steps + t) * in + k];
    r.states = step(xt, r.states);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t j = 0; j < u; ++j) r.sequence[(b * steps + i) * u + j] = r.states[0][b * u + j];
  }
  return r;
}

// Gives the layer's weights values of its shapes from `wave`, returns them.
Weights set_weights(nn::RNN& layer) {
  Weights w;
  auto fill_var = [](const Variable& v, double phase, Matrix& out) {
    out = wave(v.shape().num_elements(), 0.77, phase, 0.6);
    v.assign(constant(out, v.shape(), v.dtype()));
  };
  fill_var(layer.kernel(), 0.1, w.kernel);
  fill_var(layer.recurrent_kernel(), 0.5, w.recurrent);
  if (layer.bias()) fill_var(layer.bias(), 0.9, w.bias);
  else w.bias = Matrix(layer.kernel().shape()[1] * 2, 0.0);
  return w;
}

constexpr int64_t kBatch = 3, kSteps = 5, kIn = 4, kUnits = 6;

Tensor inputs(DType dtype = DType::Float64) {
  return constant(wave(kBatch * kSteps * kIn, 1.3, 0.2, 1.0), Shape{kBatch, kSteps, kIn}, dtype);
}

// Checks output, sequence and states of `layer` (float64, built and weighted)
// against the reference, eagerly.
void check_against_reference(nn::RNN& layer, const Step& step, int num_states, bool go_backwards) {
  Matrix x = wave(kBatch * kSteps * kIn, 1.3, 0.2, 1.0);
  RefResult want = run_ref(step, x, kBatch, kSteps, kIn, kUnits, num_states, go_backwards);
  nn::RecurrentResult got = layer.call_with_states(inputs());
  ASSERT_EQ(got.states.size(), static_cast<std::size_t>(num_states));
  for (int s = 0; s < num_states; ++s)
    expect_tensor_near<double>(got.states[s], {kBatch, kUnits}, want.states[s], 1e-12);
  expect_tensor_near<double>(got.output, {kBatch, kUnits}, want.states[0], 1e-12);
}

}  // namespace

TEST(NnRecurrent, SimpleRnnLstmGruMatchKerasEquations) {
  for (bool backwards : {false, true}) {
    nn::SimpleRNN rnn(kUnits, {.go_backwards = backwards, .dtype = DType::Float64});
    rnn.build(Shape{None, kSteps, kIn});
    Weights w = set_weights(rnn);
    check_against_reference(rnn, simple_rnn_ref(w, kBatch, kIn, kUnits), 1, backwards);

    nn::LSTM lstm(kUnits, {.go_backwards = backwards, .dtype = DType::Float64});
    lstm.build(Shape{None, kSteps, kIn});
    w = set_weights(lstm);
    check_against_reference(lstm, lstm_ref(w, kBatch, kIn, kUnits), 2, backwards);

    for (bool reset_after : {true, false}) {
      nn::GRU gru(kUnits, {.go_backwards = backwards, .reset_after = reset_after, .dtype = DType::Float64});
      gru.build(Shape{None, kSteps, kIn});
      w = set_weights(gru);
      check_against_reference(gru, gru_ref(w, kBatch, kIn, kUnits, reset_after), 1, backwards);
    }
  }
}

TEST(NnRecurrent, ReturnSequencesGivesEveryStepInProcessingOrder) {
  for (bool backwards : {false, true}) {
    nn::LSTM lstm(kUnits, {.return_sequences = true, .go_backwards = backwards, .dtype = DType::Float64});
    lstm.build(Shape{None, kSteps, kIn});
    Weights w = set_weights(lstm);
    RefResult want = run_ref(lstm_ref(w, kBatch, kIn, kUnits), wave(kBatch * kSteps * kIn, 1.3, 0.2, 1.0), kBatch,
                             kSteps, kIn, kUnits, 2, backwards);
    expect_tensor_near<double>(lstm(inputs()), {kBatch, kSteps, kUnits}, want.sequence, 1e-12);
    EXPECT_EQ(lstm.compute_output_shape(Shape{None, 7, kIn}), (Shape{None, 7, kUnits}));
  }
  nn::GRU gru(2);
  EXPECT_EQ(gru(inputs(DType::Float32)).shape(), (Shape{kBatch, 2}));
  EXPECT_EQ(gru.compute_output_shape(Shape{None, None, kIn}), (Shape{None, 2}));
}

TEST(NnRecurrent, InitialStateIsUsed) {
  nn::LSTM lstm(kUnits, {.dtype = DType::Float64});
  lstm.build(Shape{None, kSteps, kIn});
  Weights w = set_weights(lstm);
  Matrix h0 = wave(kBatch * kUnits, 0.4, 1.0, 0.5), c0 = wave(kBatch * kUnits, 0.3, 2.0, 0.5);
  Step step = lstm_ref(w, kBatch, kIn, kUnits);
  // The reference from (h0, c0): its first step by hand, then the rest.
  Matrix x = wave(kBatch * kSteps * kIn, 1.3, 0.2, 1.0);
  std::vector<Matrix> states{h0, c0};
  for (int64_t t = 0; t < kSteps; ++t) {
    Matrix xt(kBatch * kIn);
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t k = 0; k < kIn; ++k) xt[b * kIn + k] = x[(b * kSteps + t) * kIn + k];
    states = step(xt, states);
  }
  nn::RecurrentResult got = lstm.call_with_states(
      inputs(), {constant(h0, Shape{kBatch, kUnits}), constant(c0, Shape{kBatch, kUnits})});
  expect_tensor_near<double>(got.states[0], {kBatch, kUnits}, states[0], 1e-12);
  expect_tensor_near<double>(got.states[1], {kBatch, kUnits}, states[1], 1e-12);
}

TEST(NnRecurrent, WeightsHaveKerasShapesNamesAndInitializers) {
  nn::clear_session();
  nn::LSTM lstm(3, {.seed = 5});
  lstm.build(Shape{None, 2, 7});
  EXPECT_EQ(lstm.kernel().name(), "lstm/kernel:0");
  EXPECT_EQ(lstm.kernel().shape(), (Shape{7, 12}));
  EXPECT_EQ(lstm.recurrent_kernel().name(), "lstm/recurrent_kernel:0");
  EXPECT_EQ(lstm.recurrent_kernel().shape(), (Shape{3, 12}));
  // unit_forget_bias: the forget block starts at one.
  expect_tensor_near<float>(lstm.bias().read_value(), {12}, {0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0}, 0);
  // The recurrent kernel's rows are orthonormal (3 rows of 12).
  Tensor rk = lstm.recurrent_kernel().read_value();
  Tensor gram = matmul(rk, rk, false, true);
  expect_tensor_near<float>(gram, {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-6);
  // Glorot uniform: within sqrt(6 / (7 + 12)).
  EXPECT_LE(max(abs(lstm.kernel().read_value())).item<float>(), std::sqrt(6.0 / 19.0));
  EXPECT_EQ(lstm.count_params(), 7 * 12 + 3 * 12 + 12);

  nn::GRU gru(3), gru_v1(3, {.reset_after = false});
  gru.build(Shape{None, 2, 7});
  gru_v1.build(Shape{None, 2, 7});
  EXPECT_EQ(gru.bias().shape(), (Shape{2, 9}));
  EXPECT_EQ(gru_v1.bias().shape(), (Shape{9}));
  nn::SimpleRNN plain(3, {.use_bias = false});
  plain.build(Shape{None, 2, 7});
  EXPECT_FALSE(plain.bias());
  EXPECT_EQ(plain.variables().size(), 2u);
}

TEST(NnRecurrent, OrthogonalInitializerIsKeras) {
  // Tall: orthonormal columns; wide: orthonormal rows; a seed repeats.
  Tensor tall = nn::orthogonal(Shape{8, 3}, 11, 1.0, DType::Float64);
  expect_tensor_near<double>(matmul(tall, tall, true, false), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-12);
  Tensor wide = nn::orthogonal(Shape{3, 8}, 11, 2.0, DType::Float64);
  expect_tensor_near<double>(matmul(wide, wide, false, true), {3, 3}, {4, 0, 0, 0, 4, 0, 0, 0, 4}, 1e-12);
  // Wide is tall's transpose (the same draw), times the gain.
  expect_tensor_near<double>(wide, {3, 8}, (transpose(tall) * 2.0).to_vector<double>(), 1e-12);
  expect_tensor_near<double>(nn::orthogonal(Shape{8, 3}, 11, 1.0, DType::Float64), {8, 3}, tall.to_vector<double>(),
                             0);
  // Q of the draw's QR with R's diagonal positive: Q^T draw is upper triangular with a positive diagonal.
  Tensor draw = random::stateless_normal(Shape{8, 3}, 11, 0.0, 1.0, DType::Float64);
  std::vector<double> r = matmul(tall, draw, true, false).to_vector<double>();
  for (int i = 0; i < 3; ++i) {
    EXPECT_GT(r[i * 3 + i], 0);
    for (int j = 0; j < i; ++j) EXPECT_NEAR(r[i * 3 + j], 0, 1e-12);
  }
  // Higher rank: rows are the product of the leading dims.
  EXPECT_EQ(nn::orthogonal(Shape{2, 2, 5}).shape(), (Shape{2, 2, 5}));
  expect_error<InvalidArgument>([] { nn::orthogonal(Shape{4}); }, {"orthogonal", "rank 2 or more"});
}

TEST(NnRecurrent, TracedLoopAndUnrolledEqualEager) {
  for (bool sequences : {false, true}) {
    nn::LSTM lstm(kUnits, {.return_sequences = sequences, .seed = 1});
    nn::LSTM unrolled(kUnits, {.return_sequences = sequences, .unroll = true, .seed = 1});
    Tensor x = inputs(DType::Float32);
    Tensor eager = lstm(x);
    auto traced = kiln::function([&](const Tensor& in) { return lstm(in); });
    auto traced_unrolled = kiln::function([&](const Tensor& in) { return unrolled(in); });
    std::vector<float> want = eager.to_vector<float>();
    expect_tensor_near<float>(traced(x), eager.shape(), want, 1e-6);
    expect_tensor_near<float>(traced_unrolled(x), eager.shape(), want, 1e-6);
    // The loop is one While op whatever the length; the unrolled graph grows.
    std::string loop_graph = traced.get_concrete_function(x).graph().to_string();
    EXPECT_NE(loop_graph.find("While"), std::string::npos);
    EXPECT_EQ(traced_unrolled.get_concrete_function(x).graph().to_string().find("While"), std::string::npos);
  }
}

TEST(NnRecurrent, UnknownTimeAndBatchDimsTraceOnce) {
  nn::GRU gru(kUnits, {.return_sequences = true, .seed = 2});
  auto f = kiln::function([&](const Tensor& in) { return gru(in); },
                          {.input_signature = std::vector{TensorSpec({None, None, kIn})}});
  for (int64_t steps : {1, 4, 9}) {
    Tensor x = constant(wave(2 * steps * kIn, 0.9, 0.1, 1.0), Shape{2, steps, kIn}, DType::Float32);
    Tensor y = f(x);
    EXPECT_EQ(y.shape(), (Shape{2, steps, kUnits}));
    expect_tensor_near<float>(y, y.shape(), gru(x).to_vector<float>(), 1e-6);
  }
  EXPECT_EQ(f.tracing_count(), 1);
}

// Every third element of the input and of each weight, float64: the traced
// gradients equal the eager ones to 1e-10.
TEST(NnRecurrent, GradientsMatchFiniteDifferencesEagerAndTraced) {
  Tensor x = inputs();
  const LayerGradientCheck check{.traced_tol = 1e-10, .stride = 3};
  nn::SimpleRNN rnn(kUnits, {.return_sequences = true, .seed = 3, .dtype = DType::Float64});
  check_layer_gradients(rnn, x, check);
  nn::LSTM lstm(kUnits, {.seed = 4, .dtype = DType::Float64});
  check_layer_gradients(lstm, x, check);
  nn::LSTM lstm_seq(kUnits, {.return_sequences = true, .go_backwards = true, .seed = 4, .dtype = DType::Float64});
  check_layer_gradients(lstm_seq, x, check);
  nn::GRU gru(kUnits, {.return_sequences = true, .seed = 5, .dtype = DType::Float64});
  check_layer_gradients(gru, x, check);
  nn::GRU gru_v1(kUnits, {.reset_after = false, .seed = 6, .dtype = DType::Float64});
  check_layer_gradients(gru_v1, x, check);
  nn::LSTM unrolled(kUnits, {.unroll = true, .seed = 7, .dtype = DType::Float64});
  check_layer_gradients(unrolled, x, check);
}

// Each kind, saved with an unknown batch and time: the loaded signature gives
// the same values on the inputs and on a longer sequence of another batch.
TEST(NnRecurrent, SavedAndLoaded) {
  nn::LSTM lstm(kUnits, {.return_sequences = true, .seed = 8});
  nn::SimpleRNN rnn(kUnits, {.return_sequences = true, .seed = 9});
  nn::GRU gru(kUnits, {.seed = 10});
  nn::GRU gru_v1(kUnits, {.return_sequences = true, .go_backwards = true, .reset_after = false, .seed = 11});
  Tensor x = inputs(DType::Float32);
  Tensor longer = constant(wave(2 * 7 * kIn, 0.7, 0.4, 1.0), Shape{2, 7, kIn}, DType::Float32);
  for (nn::Layer* layer : std::initializer_list<nn::Layer*>{&lstm, &rnn, &gru, &gru_v1}) {
    SCOPED_TRACE(layer->class_name());
    check_layer_saved_model(*layer, x, TensorSpec({None, None, kIn}), {longer});
    EXPECT_EQ(layer->variables().size(), 3u);  // kernel, recurrent_kernel, bias
  }
}

// call_with_states casts floating inputs to the layer's dtype, as a call does.
TEST(NnRecurrent, CallWithStatesCastsFloatingInputsToTheLayersDtype) {
  nn::GRU gru(kUnits, {.seed = 5});
  nn::RecurrentResult from_float64 = gru.call_with_states(inputs(DType::Float64));
  EXPECT_EQ(from_float64.output.dtype(), DType::Float32);
  EXPECT_EQ(from_float64.states[0].dtype(), DType::Float32);
  EXPECT_EQ(from_float64.output.to_vector<float>(), gru(inputs(DType::Float32)).to_vector<float>());
}

TEST(NnRecurrent, BadInputsAreNamed) {
  nn::clear_session();
  nn::LSTM lstm(4);
  expect_error<InvalidArgument>([&] { lstm(zeros({2, 3})); }, {"LSTM 'lstm'", "expected inputs of rank 3", "(None, 3)"});
  lstm(zeros({2, 3, 5}));
  expect_error<InvalidArgument>([&] { lstm(zeros({2, 3, 6})); }, {"LSTM 'lstm'", "last dim is 6", "built for 5"});
  expect_error<InvalidArgument>([&] { lstm.call_with_states(zeros({2, 3, 5}), {zeros({2, 4})}); },
                                {"expected 2 initial state tensor(s), got 1"});
  expect_error<InvalidArgument>([&] { lstm(zeros({2, 0, 5})); }, {"no time steps"});
  expect_error<InvalidArgument>([] { nn::GRU(0); }, {"GRU", "units must be positive, got 0"});
  nn::SimpleRNN unrolled(2, {.unroll = true});
  auto f = kiln::function([&](const Tensor& in) { return unrolled(in); },
                          {.input_signature = std::vector{TensorSpec({None, None, 3})}});
  expect_error<InvalidArgument>([&] { f(zeros({1, 2, 3})); }, {"cannot unroll a RNN if the time dimension is undefined"});
}

// The layers read their weights before the loop, so it is stateless and the
// passes take its results from the gradient's re-run: a training step loops
// over the sequence twice (re-run, backward), not three times.
TEST(NnRecurrent, ATracedTrainingStepLoopsTwiceOverTheSequence) {
  nn::LSTM lstm(kUnits, {.seed = 9});
  auto step = kiln::function([&](const Tensor& x) {
    GradientTape tape;
    Tensor loss = sum(lstm(x));
    return tape.gradient(loss, lstm.trainable_variables());
  });
  Tensor x = inputs(DType::Float32);
  step(x);
  const graph::Graph& traced = *step.get_concrete_function(x).impl()->graph;
  auto count_while = [](const graph::Graph& g) {
    int n = 0;
    for (const auto& node : g.nodes()) n += node->op->name == std::string_view("While");
    return n;
  };
  EXPECT_EQ(count_while(traced), 3);
  EXPECT_EQ(count_while(*passes::optimize(traced, {})), 2);
  EXPECT_EQ(count_while(*passes::optimize(traced, {.replays = false})), 3);
}
