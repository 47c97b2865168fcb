// A Transformer encoder classifier over the rows of the MNIST digits: each
// 28x28 image is a sequence of 28 row tokens, embedded by Dense(dim) plus a
// learned position embedding, then one post-norm encoder block
// (MultiHeadAttention and a feed-forward Dense pair, each with a residual and
// LayerNormalization), the mean over the rows and Dense(10). Trains with a
// traced step and Adam on a cosine-decayed learning rate (the rate computed
// from the step count inside the graph), then reports the test accuracy.
//
//   ./build/examples/transformer_mnist --epochs 1 --batch-size 128
//
// Flags: --epochs N, --batch-size N, --dim N (model width), --heads N,
// --data-dir D (default data/mnist, made by scripts/mnist_data.sh; --dataset
// fashion reads /usr/share/datasets/fashion-mnist), --seed N, --max-steps N
// (stop each epoch early).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "kiln/kiln.h"
#include "example_util.h"

namespace {

struct Flags {
  int epochs = 1;
  int batch_size = 128;
  int dim = 64;
  int heads = 4;
  std::string dataset = "mnist";
  std::string data_dir;
  uint64_t seed = 1;
  int max_steps = 0;
};

[[noreturn]] void usage(const std::string& error) {
  if (!error.empty()) std::cerr << "transformer_mnist: " << error << "\n";
  std::cerr << "usage: transformer_mnist [--epochs N] [--batch-size N] [--dim N] [--heads N] "
               "[--dataset mnist|fashion] [--data-dir DIR] [--seed N] [--max-steps N]\n";
  std::exit(error.empty() ? 0 : 2);
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (const auto& [arg, value] : examples::split_flags(argc, argv, {}, usage)) {
    auto integer = [&](long min) { return static_cast<int>(examples::parse_int(arg, value, min, usage)); };
    if (arg == "--epochs") f.epochs = integer(1);
    else if (arg == "--batch-size") f.batch_size = integer(1);
    else if (arg == "--dim") f.dim = integer(1);
    else if (arg == "--heads") f.heads = integer(1);
    else if (arg == "--data-dir") f.data_dir = value;
    else if (arg == "--dataset") f.dataset = examples::parse_dataset(value, usage);
    else if (arg == "--seed") f.seed = static_cast<uint64_t>(integer(0));
    else if (arg == "--max-steps") f.max_steps = integer(1);
    else usage("unknown flag " + arg);
  }
  if (f.data_dir.empty()) f.data_dir = examples::default_data_dir(f.dataset);
  if (f.dim % f.heads != 0) usage(fmt::format("--dim ({}) must be a multiple of --heads ({})", f.dim, f.heads));
  return f;
}

using kiln::nn::Dense;
using kiln::nn::LayerNormalization;
using kiln::nn::MultiHeadAttention;

// Images [batch, 28, 28, 1] -> 10 logits.
struct TransformerClassifier : kiln::Module {
  std::shared_ptr<Dense> embed, hidden, back, classify;
  std::shared_ptr<MultiHeadAttention> attention;
  std::shared_ptr<LayerNormalization> norm1, norm2;
  kiln::Variable positions;

  explicit TransformerClassifier(const Flags& f)
      : kiln::Module("transformer_classifier"),
        embed(track(Dense(f.dim, {.seed = f.seed}))),
        hidden(track(Dense(2 * f.dim, {.activation = "relu", .seed = f.seed + 1}))),
        back(track(Dense(f.dim, {.seed = f.seed + 2}))),
        classify(track(Dense(10, {.seed = f.seed + 3}))),
        attention(track(MultiHeadAttention(f.heads, f.dim / f.heads, {.seed = f.seed + 4}))),
        norm1(track(LayerNormalization())),
        norm2(track(LayerNormalization())),
        positions(add_variable("positions", kiln::random::stateless_normal({28, f.dim}, f.seed + 5, 0.0, 0.02))) {}
  TransformerClassifier(TransformerClassifier&&) = delete;

  kiln::Tensor operator()(const kiln::Tensor& images, bool training) {
    kiln::Tensor x = (*embed)(kiln::reshape(images, kiln::Shape{-1, 28, 28})) + positions.read_value();
    x = (*norm1)(x + (*attention)(x, x, {.training = training}));
    x = (*norm2)(x + (*back)((*hidden)(x)));
    return (*classify)(kiln::mean(x, kiln::Axes(1)));
  }
};

}  // namespace

int run(const Flags& flags) {
  kiln::random::set_seed(flags.seed);
  kiln::data::Mnist mnist = kiln::data::load_mnist(flags.data_dir);
  const int64_t n_train = mnist.train_images.shape()[0], n_test = mnist.test_images.shape()[0];
  fmt::print("{}: {} training and {} test images from {}\n", flags.dataset, n_train, n_test, flags.data_dir);

  const int64_t steps_per_epoch = examples::steps_per_epoch(n_train, flags.batch_size, flags.max_steps);
  TransformerClassifier model(flags);
  kiln::nn::Adam optimizer(kiln::nn::CosineDecay(1e-3, flags.epochs * steps_per_epoch, 0.1));
  kiln::nn::SparseCategoricalCrossentropy loss_fn({.from_logits = true});
  auto train_step = kiln::function([&](const kiln::Tensor& images, const kiln::Tensor& labels) {
    kiln::GradientTape tape;
    kiln::Tensor logits = model(images, /*training=*/true);
    kiln::Tensor loss = loss_fn(labels, logits);
    std::vector<kiln::Variable> vars = model.trainable_variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
    return std::pair{loss, kiln::mean(kiln::nn::sparse_categorical_accuracy(labels, logits))};
  }, {.name = "train_step"});

  kiln::data::Dataset train = examples::training_batches(mnist.train_images, mnist.train_labels, flags.seed,
                                                         flags.batch_size);
  examples::train_epochs(train, flags.epochs, steps_per_epoch, flags.batch_size, train_step,
                         [&] { return fmt::format(", learning rate now {:.2e}", optimizer.learning_rate()); });

  auto predict = kiln::function([&](const kiln::Tensor& images) { return model(images, false); }, {.name = "predict"});
  fmt::print("test accuracy: {:.2f}% on {} held-out images ({} trainable weights)\n",
             100 * examples::test_accuracy(mnist, predict), n_test, [&] {
               int64_t n = 0;
               for (const kiln::Variable& v : model.trainable_variables()) n += v.shape().num_elements();
               return n;
             }());
  return 0;
}

int main(int argc, char** argv) {
  Flags flags = parse_flags(argc, argv);
  try {
    return run(flags);
  } catch (const kiln::Error& e) {
    std::cerr << "transformer_mnist: " << e.what() << "\n";
    return 1;
  }
}
