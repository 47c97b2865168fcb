// The seeds' MNIST training loop in C++: a CNN Module (the seed's CNN class),
// random batches drawn on the host as the seed's MNISTLoader.get_batch does,
// and a traced train_one_step that prints the loss from inside the graph
// with kiln::print (tf.print) on every call.
//
//   ./build/examples/mnist_seed_loop [--batches N] [--data-dir D]
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include <fmt/format.h>

#include "kiln/kiln.h"

namespace {

// The seed's `class CNN(tf.keras.Model)`: layers as tracked submodules,
// call() chains them and ends with a softmax.
class CNN : public kiln::Module {
 public:
  CNN() : kiln::Module("cnn") {
    using namespace kiln::nn;
    conv1_ = track(Conv2D(32, 5, {.padding = Padding::Same, .activation = "relu"}));
    pool1_ = track(MaxPool2D(2, {.strides = 2}));
    conv2_ = track(Conv2D(64, 5, {.padding = Padding::Same, .activation = "relu"}));
    pool2_ = track(MaxPool2D(2, {.strides = 2}));
    flatten_ = track(Flatten());
    dense1_ = track(Dense(1024, {.activation = "relu"}));
    dense2_ = track(Dense(10));
  }
  kiln::Tensor operator()(const kiln::Tensor& inputs) {
    kiln::Tensor x = (*conv1_)(inputs);  // [batch_size, 28, 28, 32]
    x = (*pool1_)(x);                    // [batch_size, 14, 14, 32]
    x = (*conv2_)(x);                    // [batch_size, 14, 14, 64]
    x = (*pool2_)(x);                    // [batch_size, 7, 7, 64]
    x = (*flatten_)(x);                  // [batch_size, 7 * 7 * 64]
    x = (*dense1_)(x);                   // [batch_size, 1024]
    x = (*dense2_)(x);                   // [batch_size, 10]
    return kiln::nn::softmax(x);
  }

 private:
  std::shared_ptr<kiln::nn::Conv2D> conv1_, conv2_;
  std::shared_ptr<kiln::nn::MaxPool2D> pool1_, pool2_;
  std::shared_ptr<kiln::nn::Flatten> flatten_;
  std::shared_ptr<kiln::nn::Dense> dense1_, dense2_;
};

}  // namespace

int main(int argc, char** argv) {
  int num_batches = 1000;
  std::string data_dir = "data/mnist";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--batches") num_batches = std::atoi(argv[i + 1]);
    else if (flag == "--data-dir") data_dir = argv[i + 1];
    else {
      std::cerr << "usage: mnist_seed_loop [--batches N] [--data-dir DIR]\n";
      return 2;
    }
  }
  const int batch_size = 50;
  kiln::data::Mnist mnist = kiln::data::load_mnist(data_dir);
  CNN model;
  kiln::nn::Adam optimizer(0.001);

  auto train_one_step = kiln::function([&](const kiln::Tensor& X, const kiln::Tensor& y) {
    kiln::GradientTape tape;
    kiln::Tensor y_pred = model(X);
    kiln::Tensor loss = kiln::mean(kiln::nn::sparse_categorical_crossentropy(y, y_pred));
    // kiln::print is a graph op: it prints on every call (std::cout would
    // print only while tracing).
    kiln::print("loss: ", loss);
    std::vector<kiln::Variable> vars = model.variables();
    optimizer.apply_gradients(tape.gradient(loss, vars), vars);
  });

  // MNISTLoader.get_batch: batch_size random indices, with replacement.
  std::mt19937 rng(0);
  const int64_t n = mnist.train_images.shape()[0];
  std::uniform_int_distribution<int32_t> pick(0, static_cast<int32_t>(n - 1));
  auto start = std::chrono::steady_clock::now();
  for (int batch = 0; batch < num_batches; ++batch) {
    std::vector<int32_t> index(batch_size);
    for (int32_t& i : index) i = pick(rng);
    kiln::Tensor idx = kiln::constant(index);
    train_one_step(kiln::gather(mnist.train_images, idx), kiln::gather(mnist.train_labels, idx));
  }
  std::cout << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << "\n";
  return 0;
}
