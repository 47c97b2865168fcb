// An LSTM classifier over the rows of the MNIST digits: each 28x28 image is a
// sequence of 28 steps of 28 features, read by LSTM(128), then Dense(10).
// Trains with a traced step (the LSTM's time loop one While op over
// TensorArrays), reports test accuracy, then times the same training step
// three ways in one run: traced with the While loop, eager, and traced with
// the loop unrolled (the 28 steps repeated in the graph, Keras' unroll=True).
//
//   ./build/examples/lstm_mnist --epochs 2 --batch-size 128
//
// Flags: --epochs N, --batch-size N, --units N, --data-dir D (default
// data/mnist, made by scripts/mnist_data.sh; --dataset fashion reads
// /usr/share/datasets/fashion-mnist), --seed N, --max-steps N (stop each
// epoch early), --timing-steps N (steps per variant in the timing, default
// 15), --profile FILE (profile 10 traced steps of each traced variant: the
// per-op tables, and the loop's Chrome trace in FILE).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "kiln/kiln.h"
#include "kiln/nn/progbar.h"
#include "example_util.h"

namespace {

struct Flags {
  int epochs = 2;
  int batch_size = 128;
  int units = 128;
  std::string dataset = "mnist";
  std::string data_dir;
  uint64_t seed = 1;
  int max_steps = 0;
  int timing_steps = 15;
  std::string profile_file;
};

[[noreturn]] void usage(const std::string& error) {
  if (!error.empty()) std::cerr << "lstm_mnist: " << error << "\n";
  std::cerr << "usage: lstm_mnist [--epochs N] [--batch-size N] [--units N] [--dataset mnist|fashion] "
               "[--data-dir DIR] [--seed N] [--max-steps N] [--timing-steps N] [--profile FILE]\n";
  std::exit(error.empty() ? 0 : 2);
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (const auto& [arg, value] : examples::split_flags(argc, argv, {}, usage)) {
    auto integer = [&](long min) { return static_cast<int>(examples::parse_int(arg, value, min, usage)); };
    if (arg == "--epochs") f.epochs = integer(0);
    else if (arg == "--batch-size") f.batch_size = integer(1);
    else if (arg == "--units") f.units = integer(1);
    else if (arg == "--data-dir") f.data_dir = value;
    else if (arg == "--dataset") f.dataset = examples::parse_dataset(value, usage);
    else if (arg == "--seed") f.seed = static_cast<uint64_t>(integer(0));
    else if (arg == "--max-steps") f.max_steps = integer(1);
    else if (arg == "--timing-steps") f.timing_steps = integer(1);
    else if (arg == "--profile") f.profile_file = value;
    else usage("unknown flag " + arg);
  }
  if (f.data_dir.empty()) f.data_dir = examples::default_data_dir(f.dataset);
  return f;
}

// Images [batch, 28, 28, 1] -> rows as time steps -> LSTM -> 10 logits.
kiln::nn::Sequential make_model(const Flags& flags, bool unroll) {
  using namespace kiln::nn;
  Sequential model(unroll ? "lstm_classifier_unrolled" : "lstm_classifier");
  model.add(Reshape(kiln::Shape{28, 28}, {.input_shape = kiln::Shape{28, 28, 1}}));
  model.add(LSTM(flags.units, {.unroll = unroll, .seed = flags.seed}));
  model.add(Dense(10, {.seed = flags.seed + 2}));
  return model;
}

using examples::median;
using examples::seconds_since;

// A model with its optimizer and its training step, eager and traced (the
// same code). Holds `this` in its step: not to be moved.
struct Trainer {
  using Step = std::function<std::pair<kiln::Tensor, kiln::Tensor>(const kiln::Tensor&, const kiln::Tensor&)>;
  kiln::nn::Sequential model;
  kiln::nn::Adam optimizer{1e-3};
  kiln::nn::SparseCategoricalCrossentropy loss_fn{{.from_logits = true}};
  Step eager;
  kiln::Function<Step> traced;

  Trainer(kiln::nn::Sequential m, const char* name)
      : model(std::move(m)), eager([this](const kiln::Tensor& images, const kiln::Tensor& labels) {
          kiln::GradientTape tape;
          kiln::Tensor logits = model(images, /*training=*/true);
          kiln::Tensor loss = loss_fn(labels, logits);
          std::vector<kiln::Variable> vars = model.trainable_variables();
          optimizer.apply_gradients(tape.gradient(loss, vars), vars);
          kiln::Tensor accuracy = kiln::mean(kiln::nn::sparse_categorical_accuracy(labels, logits));
          return std::pair{loss, accuracy};
        }),
        traced(kiln::function(eager, {.name = name})) {}
  Trainer(const Trainer&) = delete;
};

}  // namespace

int run(const Flags& flags) {
  kiln::random::set_seed(flags.seed);
  kiln::data::Mnist mnist = kiln::data::load_mnist(flags.data_dir);
  const int64_t n_train = mnist.train_images.shape()[0], n_test = mnist.test_images.shape()[0];
  fmt::print("{}: {} training and {} test images from {}\n", flags.dataset, n_train, n_test, flags.data_dir);

  Trainer trainer(make_model(flags, /*unroll=*/false), "train_step");
  std::cout << trainer.model.summary();

  kiln::data::Dataset train = examples::training_batches(mnist.train_images, mnist.train_labels, flags.seed,
                                                         flags.batch_size);
  const int64_t steps_per_epoch = examples::steps_per_epoch(n_train, flags.batch_size, flags.max_steps);
  examples::train_epochs(train, flags.epochs, steps_per_epoch, flags.batch_size, trainer.traced);

  auto predict = kiln::function([&](const kiln::Tensor& images) { return trainer.model(images); }, {.name = "predict"});
  fmt::print("test accuracy: {:.2f}% on {} held-out images\n", 100 * examples::test_accuracy(mnist, predict), n_test);

  // The same step three ways on one batch, alternated so all three see the
  // same machine; medians. The unrolled model starts from the same weights.
  Trainer unrolled(make_model(flags, /*unroll=*/true), "train_step_unrolled");
  std::vector<kiln::Variable> from = trainer.model.variables(), to = unrolled.model.variables();
  for (std::size_t i = 0; i < from.size(); ++i) to[i].assign(from[i].read_value());
  kiln::data::Element batch = *train.begin();
  auto time_step = [&](auto& fn) {
    auto t0 = std::chrono::steady_clock::now();
    std::pair<kiln::Tensor, kiln::Tensor> out = fn(batch[0], batch[1]);
    (void)out.first.item<float>();  // reading the loss waits for the step
    return 1e3 * seconds_since(t0);
  };
  time_step(trainer.traced);
  time_step(trainer.eager);
  time_step(unrolled.traced);  // traces
  std::vector<double> loop_ms, eager_ms, unrolled_ms;
  for (int i = 0; i < flags.timing_steps; ++i) {
    loop_ms.push_back(time_step(trainer.traced));
    eager_ms.push_back(time_step(trainer.eager));
    unrolled_ms.push_back(time_step(unrolled.traced));
  }
  const double loop = median(loop_ms), eager = median(eager_ms), unroll = median(unrolled_ms);
  fmt::print("training step, batch {}, LSTM({}) over 28 steps (medians of {}):\n", flags.batch_size, flags.units,
             flags.timing_steps);
  fmt::print("  traced, while_loop + TensorArrays: {:7.2f} ms\n", loop);
  fmt::print("  traced, unrolled:                  {:7.2f} ms (loop / unrolled = {:.2f})\n", unroll, loop / unroll);
  fmt::print("  eager:                             {:7.2f} ms (eager / loop = {:.2f})\n", eager, eager / loop);

  if (!flags.profile_file.empty()) {
    for (auto* t : {&trainer, &unrolled}) {
      kiln::profiler::start();
      for (int i = 0; i < 10; ++i) time_step(t->traced);
      kiln::profiler::Profile profile = kiln::profiler::stop();
      fmt::print("profile of 10 steps of {}:\n{}", t->model.name(), profile.table(25));
      if (t == &trainer) profile.write_chrome_trace(flags.profile_file);
    }
    fmt::print("wrote the loop's Chrome trace to {}\n", flags.profile_file);
  }
  return 0;
}

int main(int argc, char** argv) {
  Flags flags = parse_flags(argc, argv);
  try {
    return run(flags);
  } catch (const kiln::Error& e) {
    std::cerr << "lstm_mnist: " << e.what() << "\n";
    return 1;
  }
}
