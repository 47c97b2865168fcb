#pragma once
// The seeds' MNIST CNN (3,274,634 parameters), with fixed seeds, as
// bench_mnist trains it and bench_saved_model saves and serves it.
#include "kiln/kiln.h"

namespace bench {

inline void add_mnist_cnn(kiln::nn::Sequential& model) {
  using namespace kiln::nn;
  model.add(Conv2D(32, 5, {.padding = Padding::Same, .activation = "relu", .input_shape = kiln::Shape{28, 28, 1},
                           .seed = 1}));
  model.add(MaxPool2D(2));
  model.add(Conv2D(64, 5, {.padding = Padding::Same, .activation = "relu", .seed = 2}));
  model.add(MaxPool2D(2));
  model.add(Flatten());
  model.add(Dense(1024, {.activation = "relu", .seed = 3}));
  model.add(Dense(10, {.seed = 4}));
  model.add(Softmax());
}

}  // namespace bench
