// Kiln's main job: train the seeds' MNIST CNN on real digits with a traced
// training step (forward, gradients and Adam update in one graph), then
// report test accuracy and the traced step's speed against the same step run
// eagerly.
//
//   ./build/examples/mnist_train --epochs 3 --batch-size 50
//
// Flags: --epochs N, --batch-size N, --eager (train without tracing),
// --dataset mnist|fashion (fashion: the full Fashion-MNIST, 60,000 train and
// 10,000 test images, from Debian's dataset-fashion-mnist that scripts/setup.sh
// installs), --data-dir D (default data/mnist, made by scripts/mnist_data.sh,
// or /usr/share/datasets/fashion-mnist with --dataset fashion), --seed N,
// --max-steps N (stop each epoch early; for smoke tests), --save DIR (save
// the trained model with a serving signature; serve it with
//   kiln-cli run --dir DIR --signature_def serving_default
//       --input_idx images=data/mnist/t10k-images-idx3-ubyte:0),
// --profile FILE (profile 10 steps after training, traced or with --eager
// eager: print the per-op table and write a Chrome trace to FILE for
// Perfetto / chrome://tracing).
//
// Data-parallel, over MPI (kiln::distributed):
//   mpirun -np 2 ./build/examples/mnist_train --distributed
// Each rank trains on its shard of the digits (the batch size is per rank),
// starting from rank 0's weights, with gradients averaged across ranks in
// buckets of --bucket-mb MB (default 1: the dense layer's 12.8 MB kernel
// gradient travels alone while the conv layers' gradients are computed).
// Every rank prints its throughput and the share of its steps spent
// waiting on communication, and the step is timed with and without overlap.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "kiln/distributed.h"
#include "kiln/kiln.h"
#include "kiln/nn/progbar.h"
#include "example_util.h"

namespace {

struct Flags {
  int epochs = 5;
  int batch_size = 50;
  bool eager = false;
  std::string dataset = "mnist";
  std::string data_dir;  // empty: the dataset's default
  uint64_t seed = 1;
  int max_steps = 0;  // 0: whole epochs
  std::string save_dir;
  std::string profile_file;
  bool distributed = false;
  double bucket_mb = 1;
};

[[noreturn]] void usage(const std::string& error) {
  if (!error.empty()) std::cerr << "mnist_train: " << error << "\n";
  std::cerr << "usage: mnist_train [--epochs N] [--batch-size N] [--eager] [--dataset mnist|fashion] [--data-dir DIR] "
               "[--seed N] [--max-steps N] [--save DIR] [--profile FILE] [--distributed [--bucket-mb MB]]\n";
  std::exit(error.empty() ? 0 : 2);
}

double parse_double(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v > 0)) usage(fmt::format("{} needs a positive number, got '{}'", flag, text));
  return v;
}

Flags parse_flags(int argc, char** argv) {
  Flags f;
  for (const auto& [arg, value] : examples::split_flags(argc, argv, {"--eager", "--distributed"}, usage)) {
    auto integer = [&](long min) { return examples::parse_int(arg, value, min, usage); };
    if (arg == "--eager") f.eager = true;
    else if (arg == "--distributed") f.distributed = true;
    else if (arg == "--epochs") f.epochs = static_cast<int>(integer(1));
    else if (arg == "--batch-size") f.batch_size = static_cast<int>(integer(1));
    else if (arg == "--data-dir") f.data_dir = value;
    else if (arg == "--dataset") f.dataset = examples::parse_dataset(value, usage);
    else if (arg == "--seed") f.seed = static_cast<uint64_t>(integer(0));
    else if (arg == "--max-steps") f.max_steps = static_cast<int>(integer(1));
    else if (arg == "--save") f.save_dir = value;
    else if (arg == "--profile") f.profile_file = value;
    else if (arg == "--bucket-mb") f.bucket_mb = parse_double(arg, value);
    else usage("unknown flag " + arg);
  }
  if (f.data_dir.empty()) f.data_dir = examples::default_data_dir(f.dataset);
  return f;
}

// Both datasets are 28x28 grey images in 10 classes in the same IDX files.
kiln::data::Mnist load_dataset(const Flags& flags) {
  if (flags.dataset == "fashion" && !std::filesystem::exists(flags.data_dir + "/train-images-idx3-ubyte.gz") &&
      !std::filesystem::exists(flags.data_dir + "/train-images-idx3-ubyte"))
    throw std::runtime_error("no Fashion-MNIST files in " + flags.data_dir +
                             "; install Debian's dataset-fashion-mnist (bash scripts/setup.sh does)");
  return kiln::data::load_mnist(flags.data_dir);
}

const char* dataset_title(const Flags& flags) { return flags.dataset == "fashion" ? "Fashion-MNIST" : "MNIST"; }
const char* items(const Flags& flags) { return flags.dataset == "fashion" ? "images" : "digits"; }

// The seeds' CNN: conv5x5x32 same relu, maxpool 2, conv5x5x64 same relu,
// maxpool 2, flatten, dense 1024 relu, dense 10, softmax.
kiln::nn::Sequential make_model(uint64_t seed) {
  using namespace kiln::nn;
  Sequential model("cnn");
  model.add(Conv2D(32, 5, {.padding = Padding::Same, .activation = "relu",
                           .input_shape = kiln::Shape{28, 28, 1}, .seed = seed}));
  model.add(MaxPool2D(2));
  model.add(Conv2D(64, 5, {.padding = Padding::Same, .activation = "relu", .seed = seed + 1}));
  model.add(MaxPool2D(2));
  model.add(Flatten());
  model.add(Dense(1024, {.activation = "relu", .seed = seed + 2}));
  model.add(Dense(10, {.seed = seed + 3}));
  model.add(Softmax());
  return model;
}

using examples::median;
using examples::seconds_since;

}  // namespace

int train(const Flags& flags) {
  kiln::random::set_seed(flags.seed);
  kiln::data::Mnist mnist = load_dataset(flags);
  const int64_t n_train = mnist.train_images.shape()[0], n_test = mnist.test_images.shape()[0];
  fmt::print("{}: {} training and {} test {} from {}\n", dataset_title(flags), n_train, n_test, items(flags),
             flags.data_dir);

  kiln::nn::Sequential model = make_model(flags.seed);
  std::cout << model.summary();
  kiln::nn::Adam optimizer(1e-3);
  kiln::nn::SparseCategoricalCrossentropy loss_fn;

  // One training step: forward, loss, gradients, Adam update. Traced into one
  // graph by kiln::function; with --eager the same code runs op by op.
  auto step_body = [&](const kiln::Tensor& images, const kiln::Tensor& labels) {
    kiln::GradientTape tape;
    kiln::Tensor probs = model(images, /*training=*/true);
    kiln::Tensor loss = loss_fn(labels, probs);
    std::vector<kiln::Variable> vars = model.trainable_variables();
    std::vector<kiln::Tensor> grads = tape.gradient(loss, vars);
    optimizer.apply_gradients(grads, vars);
    kiln::Tensor accuracy = kiln::mean(kiln::nn::sparse_categorical_accuracy(labels, probs));
    return std::pair{loss, accuracy};
  };
  auto traced_step = kiln::function(step_body, {.name = "train_step"});
  auto run_step = [&](const kiln::Tensor& x, const kiln::Tensor& y) {
    return flags.eager ? step_body(x, y) : traced_step(x, y);
  };

  kiln::data::Dataset train = examples::training_batches(mnist.train_images, mnist.train_labels, flags.seed,
                                                         flags.batch_size);
  const int64_t steps_per_epoch = examples::steps_per_epoch(n_train, flags.batch_size, flags.max_steps);

  // Where the loop's time goes, over the steps after the first (which traces):
  // the step, waiting for the next batch (the input pipeline, a new epoch's
  // shuffle included), and the rest (the progress bar).
  double train_seconds = 0, wait_seconds = 0, first_wait_seconds = 0, loop_seconds = 0;
  int64_t train_steps = 0;
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    kiln::nn::Progbar bar(steps_per_epoch, {.title = fmt::format("Epoch {}/{}", epoch, flags.epochs)});
    int64_t done = 0;
    auto epoch_start = std::chrono::steady_clock::now();
    auto body_end = epoch_start;
    for (const kiln::data::Element& batch : train) {
      if (done == steps_per_epoch) break;
      auto t0 = std::chrono::steady_clock::now();
      auto [loss, accuracy] = run_step(batch[0], batch[1]);
      double l = loss.item<float>(), a = accuracy.item<float>();  // waits for the step
      double step_seconds = seconds_since(t0);
      bar.step(flags.batch_size, {{"loss", l}, {"accuracy", a}});
      if (epoch > 1 || done > 0) {  // the first step traces: not a training-speed sample
        train_seconds += step_seconds;
        double waited = std::chrono::duration<double>(t0 - body_end).count();
        wait_seconds += waited;
        if (done == 0) first_wait_seconds += waited;
        loop_seconds += seconds_since(body_end);
        ++train_steps;
      }
      body_end = std::chrono::steady_clock::now();
      ++done;
    }
    bar.finish();
    // Wall time with the input pipeline (epoch 1 also traces the step).
    fmt::print("epoch {}: {:.1f} s\n", epoch, seconds_since(epoch_start));
  }

  // Test accuracy, batch by batch, with a traced forward pass.
  auto predict = kiln::function([&](const kiln::Tensor& images) { return model(images); }, {.name = "predict"});
  kiln::nn::SparseCategoricalAccuracy test_accuracy;
  kiln::data::Dataset test = kiln::data::Dataset::from_tensor_slices({mnist.test_images, mnist.test_labels}).batch(500);
  for (const kiln::data::Element& batch : test) test_accuracy.update_state(batch[1], predict(batch[0]));
  double acc = test_accuracy.result().item<float>();
  fmt::print("test accuracy: {:.2f}% on {} held-out {}\n", 100 * acc, n_test, items(flags));
  if (!flags.save_dir.empty()) {
    // Images of any batch size in, class probabilities out.
    kiln::ConcreteFunction serve = predict.get_concrete_function(kiln::TensorSpec({kiln::None, 28, 28, 1}));
    kiln::saved_model::save(model, flags.save_dir, {{"serving_default", {serve, {"images"}}}});
    fmt::print("saved the model to {}\n", flags.save_dir);
  }

  // The traced step against the same step run eagerly, on one batch (this
  // trains the model a few steps further, after the accuracy above). The two
  // alternate, so both see the same machine, and each gives its median.
  kiln::data::Element batch = *train.begin();
  auto time_step = [&](auto&& fn) {
    auto t0 = std::chrono::steady_clock::now();
    std::pair<kiln::Tensor, kiln::Tensor> out = fn(batch[0], batch[1]);
    (void)out.first.item<float>();  // reading the loss waits for the step
    return 1e3 * seconds_since(t0);
  };
  time_step(traced_step);  // warm up (and trace)
  time_step(step_body);
  std::vector<double> traced_times, eager_times;
  for (int i = 0; i < 15; ++i) {
    traced_times.push_back(time_step(traced_step));
    eager_times.push_back(time_step(step_body));
  }
  double traced_ms = median(traced_times), eager_ms = median(eager_times);
  fmt::print("training step, batch {}: traced {:.1f} ms, eager {:.1f} ms ({:.2f}x)\n", flags.batch_size, traced_ms,
             eager_ms, eager_ms / traced_ms);
  if (train_steps > 0) {
    fmt::print("training: {:.1f} ms per step, {:.0f} {}/s ({})\n", 1e3 * train_seconds / train_steps,
               train_steps * flags.batch_size / train_seconds, items(flags), flags.eager ? "eager" : "traced");
    const double per_step = 1e3 / static_cast<double>(train_steps);
    fmt::print("training loop: {:.2f} ms per step = step {:.2f} + waiting for the batch {:.3f} ({:.2f}% of the loop) "
               "+ the rest {:.3f}\n", loop_seconds * per_step, train_seconds * per_step, wait_seconds * per_step,
               100 * wait_seconds / loop_seconds, (loop_seconds - train_seconds - wait_seconds) * per_step);
    if (flags.epochs > 1)
      fmt::print("  of the waiting, each later epoch's first batch (the shuffle buffer filling): {:.1f} ms\n",
                 1e3 * first_wait_seconds / (flags.epochs - 1));
  }
  if (!flags.profile_file.empty()) {
    kiln::profiler::start();
    for (int i = 0; i < 10; ++i) flags.eager ? time_step(step_body) : time_step(traced_step);
    kiln::profiler::Profile profile = kiln::profiler::stop();
    fmt::print("profile of 10 {} steps, batch {}:\n{}", flags.eager ? "eager" : "traced", flags.batch_size,
               profile.table(20));
    profile.write_chrome_trace(flags.profile_file);
    fmt::print("wrote the Chrome trace to {} (open it in https://ui.perfetto.dev or chrome://tracing)\n",
               flags.profile_file);
  }
  return 0;
}

// ---- --distributed: data-parallel over MPI ----------------------------------

namespace {

// Every rank's `values`, on every rank (rank order), as doubles.
std::vector<double> gather(const std::vector<double>& values) {
  return kiln::distributed::allgather(kiln::constant(values, kiln::Shape{1, static_cast<int64_t>(values.size())}))
      .to_vector<double>();
}

}  // namespace

int train_distributed(const Flags& flags) {
  namespace dist = kiln::distributed;
  dist::init();
  const int rank = dist::rank(), size = dist::size();
  const bool root = rank == 0;
  kiln::random::set_seed(flags.seed);
  kiln::data::Mnist mnist = load_dataset(flags);
  const int64_t n_train = mnist.train_images.shape()[0], n_test = mnist.test_images.shape()[0];
  // The same number of steps on every rank (shards differ by one digit at most).
  const int64_t per_rank = n_train / size;
  const int64_t steps_per_epoch =
      flags.max_steps > 0 ? std::min<int64_t>(flags.max_steps, per_rank / flags.batch_size) : per_rank / flags.batch_size;
  if (root)
    fmt::print("{}: {} training {} in {} shards of {} (batch {} per rank, {} in all), {} test {}\n", dataset_title(flags),
               n_train, items(flags), size, per_rank, flags.batch_size, flags.batch_size * size, n_test, items(flags));

  kiln::nn::Sequential model = make_model(flags.seed);
  if (root) std::cout << model.summary();
  dist::broadcast_variables(model.variables(), 0);  // every rank starts from rank 0's weights
  kiln::nn::Adam optimizer(1e-3);
  kiln::nn::SparseCategoricalCrossentropy loss_fn;
  auto make_step = [&](int64_t bucket_bytes, const char* name) {
    return kiln::function(
        [&, bucket_bytes](const kiln::Tensor& images, const kiln::Tensor& labels) {
          kiln::GradientTape tape;
          kiln::Tensor probs = model(images, /*training=*/true);
          kiln::Tensor loss = loss_fn(labels, probs);
          std::vector<kiln::Variable> vars = model.trainable_variables();
          std::vector<kiln::Tensor> grads =
              dist::average_gradients(tape.gradient(loss, vars), {.bucket_bytes = bucket_bytes});
          optimizer.apply_gradients(grads, vars);
          kiln::Tensor accuracy = kiln::mean(kiln::nn::sparse_categorical_accuracy(labels, probs));
          return std::pair{loss, accuracy};
        },
        {.name = name});
  };
  auto step = make_step(static_cast<int64_t>(flags.bucket_mb * (1 << 20)), "train_step");

  kiln::data::Dataset train = kiln::data::Dataset::from_tensor_slices({mnist.train_images, mnist.train_labels})
                                  .shard(size, rank)
                                  .shuffle(per_rank, flags.seed + static_cast<uint64_t>(rank))
                                  .batch(flags.batch_size, /*drop_remainder=*/true)
                                  .prefetch(2);
  double train_seconds = 0;
  int64_t train_steps = 0;
  dist::Stats before{};
  for (int epoch = 1; epoch <= flags.epochs; ++epoch) {
    std::optional<kiln::nn::Progbar> bar;
    if (root) bar.emplace(steps_per_epoch, kiln::nn::ProgbarOptions{.title = fmt::format("Epoch {}/{}", epoch, flags.epochs)});
    int64_t done = 0;
    for (const kiln::data::Element& batch : train) {
      if (done == steps_per_epoch) break;
      if (epoch == 1 && done == 1) before = dist::stats();  // after the first (tracing) step
      auto t0 = std::chrono::steady_clock::now();
      auto [loss, accuracy] = step(batch[0], batch[1]);
      double l = loss.item<float>(), a = accuracy.item<float>();
      if (epoch > 1 || done > 0) {
        train_seconds += seconds_since(t0);
        ++train_steps;
      }
      if (bar) bar->step(flags.batch_size * size, {{"loss", l}, {"accuracy", a}});  // rank 0's shard
      ++done;
    }
    if (bar) bar->finish();
  }
  const dist::Stats after = dist::stats();

  // Every rank holds the same model: rank 0 evaluates it (and saves it).
  if (root) {
    auto predict = kiln::function([&](const kiln::Tensor& images) { return model(images); }, {.name = "predict"});
    kiln::nn::SparseCategoricalAccuracy test_accuracy;
    kiln::data::Dataset test = kiln::data::Dataset::from_tensor_slices({mnist.test_images, mnist.test_labels}).batch(500);
    for (const kiln::data::Element& batch : test) test_accuracy.update_state(batch[1], predict(batch[0]));
    fmt::print("test accuracy: {:.2f}% on {} held-out {}\n", 100 * test_accuracy.result().item<float>(), n_test,
               items(flags));
    if (!flags.save_dir.empty()) {
      kiln::ConcreteFunction serve = predict.get_concrete_function(kiln::TensorSpec({kiln::None, 28, 28, 1}));
      kiln::saved_model::save(model, flags.save_dir, {{"serving_default", {serve, {"images"}}}});
      fmt::print("saved the model to {}\n", flags.save_dir);
    }
  }

  // Per rank: throughput and the share of the step spent blocked on
  // communication (what the overlap did not hide).
  if (train_steps > 0) {
    const double ms = 1e3 * train_seconds / static_cast<double>(train_steps);
    const double wait_ms = 1e3 * (after.wait_seconds - before.wait_seconds) / static_cast<double>(train_steps);
    const double mb = static_cast<double>(after.bytes - before.bytes) / static_cast<double>(train_steps) / 1e6;
    std::vector<double> all = gather({ms, wait_ms, mb});
    if (root)
      for (int r = 0; r < size; ++r) {
        const double* v = &all[static_cast<std::size_t>(3 * r)];
        fmt::print("rank {}/{}: {:.1f} ms per step, {:.0f} digits/s, waiting on communication {:.1f} ms "
                   "({:.1f}% of the step), {:.1f} MB averaged per step\n",
                   r, size, v[0], flags.batch_size / v[0] * 1e3, v[1], 100 * v[1] / v[0], v[2]);
      }
  }

  // The step with overlap (buckets of --bucket-mb, each started as soon as
  // its gradients exist) against without (one bucket of every gradient,
  // which can start only when the backward pass is over), alternated on the
  // same batch; medians over every rank.
  kiln::data::Element batch = *train.begin();
  auto no_overlap = make_step(int64_t(1) << 40, "train_step_one_bucket");
  auto time_step = [&](auto& fn) {
    double wait0 = dist::stats().wait_seconds;
    auto t0 = std::chrono::steady_clock::now();
    std::pair<kiln::Tensor, kiln::Tensor> out = fn(batch[0], batch[1]);
    (void)out.first.item<float>();  // reading the loss waits for the step
    return std::pair{1e3 * seconds_since(t0), 1e3 * (dist::stats().wait_seconds - wait0)};
  };
  time_step(step);
  time_step(no_overlap);  // traces
  std::vector<double> with_ms, with_wait, without_ms, without_wait;
  for (int i = 0; i < 9; ++i) {
    auto [a, aw] = time_step(step);
    auto [b, bw] = time_step(no_overlap);
    with_ms.push_back(a);
    with_wait.push_back(aw);
    without_ms.push_back(b);
    without_wait.push_back(bw);
  }
  std::vector<double> all = gather({median(with_ms), median(with_wait), median(without_ms), median(without_wait)});
  if (root)
    for (int r = 0; r < size; ++r) {
      const double* v = &all[static_cast<std::size_t>(4 * r)];
      fmt::print("rank {}/{}: step with overlap ({} MB buckets) {:.1f} ms, {:.1f}% waiting; without (one bucket) "
                 "{:.1f} ms, {:.1f}% waiting\n",
                 r, size, flags.bucket_mb, v[0], 100 * v[1] / v[0], v[2], 100 * v[3] / v[2]);
    }
  dist::finalize();
  return 0;
}

int main(int argc, char** argv) {
  kiln::config::adopt_fair_wait_policy(argc, argv);
  Flags flags = parse_flags(argc, argv);
  try {
    if (flags.distributed) return train_distributed(flags);
    return train(flags);
  } catch (const kiln::Error& e) {
    std::cerr << "mnist_train: " << e.what() << "\n";
    return 1;
  }
}
