#pragma once
// What the example programs share: reading flags, the datasets, the
// training loop and timing steps.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kiln/data.h"
#include "kiln/nn/metrics.h"
#include "kiln/nn/progbar.h"

namespace examples {

// The flags as (name, value) pairs, "--name value" or "--name=value"; a name
// in `switches` takes no value (its value is empty). `usage(error)` reports a
// flag missing its value and does not return.
template <class Usage>
std::vector<std::pair<std::string, std::string>> split_flags(int argc, char** argv,
                                                             const std::vector<std::string>& switches, Usage usage) {
  std::vector<std::pair<std::string, std::string>> flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    if (arg == "--help" || arg == "-h") usage("");
    if (std::find(switches.begin(), switches.end(), arg) != switches.end()) {
      flags.emplace_back(arg, "");
      continue;
    }
    if (auto eq = arg.find('='); eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (i + 1 < argc) {
      value = argv[++i];
    } else {
      usage(arg + " needs a value");
    }
    flags.emplace_back(arg, value);
  }
  return flags;
}

// An integer flag's value, at least `min`; else usage(error).
template <class Usage> long parse_int(const std::string& flag, const std::string& text, long min, Usage usage) {
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min) usage(fmt::format("{} needs an integer >= {}, got '{}'", flag, min, text));
  return v;
}

// --dataset's value: "mnist" or "fashion"; else usage(error).
template <class Usage> std::string parse_dataset(const std::string& value, Usage usage) {
  if (value != "mnist" && value != "fashion") usage("--dataset needs mnist or fashion, got '" + value + "'");
  return value;
}

// Where a dataset's IDX files are when --data-dir is not given: data/mnist
// (scripts/mnist_data.sh), Debian's dataset-fashion-mnist.
inline std::string default_data_dir(const std::string& dataset) {
  return dataset == "fashion" ? "/usr/share/datasets/fashion-mnist" : "data/mnist";
}

// The training digits as the examples feed them: a new shuffle every epoch,
// full batches only (one traced step shape), two batches prepared ahead.
inline kiln::data::Dataset training_batches(const kiln::Tensor& images, const kiln::Tensor& labels, uint64_t seed,
                                            int64_t batch_size) {
  return kiln::data::Dataset::from_tensor_slices({images, labels})
      .shuffle(images.shape()[0], seed)
      .batch(batch_size, /*drop_remainder=*/true)
      .prefetch(2);
}

// The steps an epoch runs: every full batch, or at most max_steps when it is positive.
inline int64_t steps_per_epoch(int64_t examples, int64_t batch_size, int64_t max_steps) {
  return max_steps > 0 ? std::min<int64_t>(max_steps, examples / batch_size) : examples / batch_size;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `epochs` epochs of `steps_per_epoch` batches of `train` through `step`
// (images, labels -> loss, accuracy), a progress bar each, then a line
// "epoch N: S s" and whatever `note` adds.
template <class Step>
void train_epochs(const kiln::data::Dataset& train, int epochs, int64_t steps_per_epoch, int64_t batch_size,
                  Step&& step, const std::function<std::string()>& note = {}) {
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    kiln::nn::Progbar bar(steps_per_epoch, {.title = fmt::format("Epoch {}/{}", epoch, epochs)});
    int64_t done = 0;
    auto epoch_start = std::chrono::steady_clock::now();
    for (const kiln::data::Element& batch : train) {
      if (done == steps_per_epoch) break;
      auto [loss, accuracy] = step(batch[0], batch[1]);
      bar.step(batch_size, {{"loss", loss.template item<float>()}, {"accuracy", accuracy.template item<float>()}});
      ++done;
    }
    bar.finish();
    fmt::print("epoch {}: {:.1f} s{}\n", epoch, seconds_since(epoch_start), note ? note() : "");
  }
}

// The accuracy of `predict` (images -> logits) on the test images, in batches of 500.
template <class Predict> float test_accuracy(const kiln::data::Mnist& mnist, Predict&& predict) {
  kiln::nn::SparseCategoricalAccuracy accuracy;
  kiln::data::Dataset test = kiln::data::Dataset::from_tensor_slices({mnist.test_images, mnist.test_labels}).batch(500);
  for (const kiln::data::Element& batch : test) accuracy.update_state(batch[1], predict(batch[0]));
  return accuracy.result().item<float>();
}

inline double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace examples
