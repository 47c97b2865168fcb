// The main job's programs run end to end, on a tiny synthetic MNIST written
// with write_idx (the real digits need the network once; tests do not).
#include "test_util.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>

#include "kiln/data.h"

using namespace kiln;
using namespace kiln::testing;

namespace kiln::testing {
// In test_paths.cpp, beside mnist_train_path (declared here: only this file runs it).
std::string lstm_mnist_path();
std::string transformer_mnist_path();
}  // namespace kiln::testing

namespace {

// Writes digits whose class shows in their pixels (a bright row at the
// label's index), so a few steps already learn something.
// Returns their directory, inside `tmp`.
std::string synthetic_mnist(const TempDir& tmp, int train, int test) {
  std::string dir = tmp.path("mnist");
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& prefix, int n) {
    std::vector<uint8_t> pixels(static_cast<std::size_t>(n) * 28 * 28, 0), labels(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      labels[i] = static_cast<uint8_t>(i % 10);
      for (int c = 0; c < 28; ++c) pixels[(static_cast<std::size_t>(i) * 28 + 2 + 2 * labels[i]) * 28 + c] = 255;
    }
    data::write_idx(dir + "/" + prefix + "-images-idx3-ubyte", constant(pixels, Shape{n, 28, 28}));
    data::write_idx(dir + "/" + prefix + "-labels-idx1-ubyte", constant(labels, Shape{n}));
  };
  write("train", train);
  write("t10k", test);
  return dir;
}

// Runs a command, returning its exit status and its output.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, out};
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  int status = pclose(pipe);
  return {status, out};
}

}  // namespace

TEST(Examples, MnistTrainTrainsAndReports) {
  if (mnist_train_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 200, 50);
  auto [status, out] = run(mnist_train_path() + " --epochs 2 --batch-size 20 --seed 3 --data-dir " + dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("MNIST: 200 training and 50 test digits"), std::string::npos) << out;
  EXPECT_NE(out.find("Total params: 3274634 (12.49 MB)"), std::string::npos) << out;  // Keras 2.15's text
  EXPECT_NE(out.find("Epoch 2/2  10/10 ["), std::string::npos) << out;
  EXPECT_NE(out.find("test accuracy: 100.00% on 50 held-out digits"), std::string::npos) << out;
  EXPECT_NE(out.find("training step, batch 20: traced"), std::string::npos) << out;
  // The loop's time split: step + waiting for the batch (the input pipeline) + the rest.
  std::smatch split;
  ASSERT_TRUE(std::regex_search(out, split, std::regex(R"(training loop: ([\d.]+) ms per step = step ([\d.]+) \+ )"
                                                         R"(waiting for the batch ([\d.]+) \(([\d.]+)% of the loop\) )"
                                                         R"(\+ the rest ([\d.]+)\n)")))
      << out;
  double loop = std::stod(split[1]), step = std::stod(split[2]), wait = std::stod(split[3]), rest = std::stod(split[5]);
  EXPECT_NEAR(loop, step + wait + rest, 0.02) << out;
  EXPECT_NEAR(std::stod(split[4]), 100 * wait / loop, 0.02) << out;
  EXPECT_NE(out.find("each later epoch's first batch (the shuffle buffer filling): "), std::string::npos) << out;
}

// --distributed under mpirun: two ranks, each on its shard, report per rank.
TEST(Examples, MnistTrainDistributedOnTwoRanks) {
  if (mnist_train_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  if (mpiexec_path().empty()) GTEST_SKIP() << "built without MPI";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 200, 50);
  auto [status, out] = run("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 "
                           "KILN_DISTRIBUTED_TIMEOUT=60 " + mpiexec_path() + " --oversubscribe -np 2 " +
                           mnist_train_path() + " --distributed --epochs 2 --batch-size 10 --seed 3 --data-dir " + dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("MNIST: 200 training digits in 2 shards of 100 (batch 10 per rank, 20 in all)"), std::string::npos)
      << out;
  EXPECT_NE(out.find("Epoch 2/2  10/10 ["), std::string::npos) << out;
  EXPECT_NE(out.find("test accuracy: "), std::string::npos) << out;
  for (const char* rank : {"rank 0/2: ", "rank 1/2: "}) {
    EXPECT_NE(out.find(std::string(rank) + "step with overlap (1 MB buckets)"), std::string::npos) << out;
    EXPECT_NE(out.find("% of the step), 13.1 MB averaged per step"), std::string::npos) << out;
  }
}

// --dataset fashion reads the same IDX files (here synthetic) and says images.
TEST(Examples, MnistTrainOnFashionReportsImagesAndEpochSeconds) {
  if (mnist_train_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 100, 20);
  auto [status, out] =
      run(mnist_train_path() + " --dataset fashion --epochs 1 --batch-size 20 --seed 3 --data-dir " + dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("Fashion-MNIST: 100 training and 20 test images"), std::string::npos) << out;
  EXPECT_NE(out.find("epoch 1: "), std::string::npos) << out;
  EXPECT_NE(out.find("on 20 held-out images"), std::string::npos) << out;
}

TEST(Examples, MnistTrainRejectsBadFlagsAndMissingData) {
  if (mnist_train_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  auto [status, out] = run(mnist_train_path() + " --epochs zero");
  EXPECT_NE(status, 0);
  EXPECT_NE(out.find("--epochs needs an integer >= 1, got 'zero'"), std::string::npos) << out;
  auto [status2, out2] = run(mnist_train_path() + " --data-dir /nonexistent/kiln");
  EXPECT_NE(status2, 0);
  EXPECT_NE(out2.find("scripts/mnist_data.sh"), std::string::npos) << out2;
  auto [status3, out3] = run(mnist_train_path() + " --dataset cifar");
  EXPECT_NE(status3, 0);
  EXPECT_NE(out3.find("--dataset needs mnist or fashion, got 'cifar'"), std::string::npos) << out3;
  auto [status4, out4] = run(mnist_train_path() + " --dataset fashion --data-dir /nonexistent/kiln");
  EXPECT_NE(status4, 0);
  EXPECT_NE(out4.find("install Debian's dataset-fashion-mnist"), std::string::npos) << out4;
}

TEST(Examples, SeedLoopPrintsTheLossFromInsideTheGraphEveryStep) {
  if (mnist_seed_loop_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 200, 50);
  auto [status, out] = run(mnist_seed_loop_path() + " --batches 3 --data-dir " + dir);
  ASSERT_EQ(status, 0) << out;
  int lines = 0;
  for (std::size_t at = out.find("loss: "); at != std::string::npos; at = out.find("loss: ", at + 1)) ++lines;
  EXPECT_EQ(lines, 3) << out;
}

// The trained model, saved by mnist_train --save, served by kiln-cli on
// digits it has not seen: the class it prints is the digit's label.
TEST(Examples, MnistTrainSavesAModelThatKilnCliServes) {
  if (mnist_train_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 200, 50);
  std::string model = tmp.path("model");
  auto [status, out] = run(mnist_train_path() + " --epochs 2 --batch-size 20 --seed 3 --data-dir " + dir +
                           " --save " + model);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("saved the model to " + model), std::string::npos) << out;
  for (int digit : {3, 7}) {
    // Test digit i has label i % 10.
    auto [s, served] = run(kiln_cli_path() + " run --dir " + model + " --signature_def serving_default --input_idx images=" +
                           dir + "/t10k-images-idx3-ubyte:" + std::to_string(digit));
    ASSERT_EQ(s, 0) << served;
    ASSERT_EQ(served.rfind("Result for output key output_0:\n[[", 0), 0u) << served;
    std::vector<double> probs;
    std::istringstream values(served.substr(served.find("[[") + 2));
    for (double p; values >> p;) probs.push_back(p);
    ASSERT_EQ(probs.size(), 10u) << served;
    EXPECT_EQ(std::max_element(probs.begin(), probs.end()) - probs.begin(), digit) << served;
  }
  auto [s, shown] = run(kiln_cli_path() + " show --dir " + model + " --signature_def serving_default");
  ASSERT_EQ(s, 0) << shown;
  EXPECT_NE(shown.find("shape: (-1, 28, 28, 1)"), std::string::npos) << shown;
  EXPECT_NE(shown.find("shape: (-1, 10)"), std::string::npos) << shown;
}

// The recurrent example: trains traced on the rows of the digits, reports
// accuracy and the step three ways.
TEST(Examples, LstmMnistTrainsAndTimesTheLoopUnrolledAndEager) {
  if (lstm_mnist_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 200, 50);
  auto [status, out] = run(lstm_mnist_path() + " --epochs 3 --batch-size 20 --units 16 --timing-steps 2 --data-dir " +
                           dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find(" lstm (LSTM)                 (None, 16)                2880"), std::string::npos) << out;
  EXPECT_NE(out.find("Epoch 3/3  10/10 ["), std::string::npos) << out;
  EXPECT_NE(out.find("test accuracy: "), std::string::npos) << out;
  EXPECT_NE(out.find("traced, while_loop + TensorArrays:"), std::string::npos) << out;
  EXPECT_NE(out.find("traced, unrolled:"), std::string::npos) << out;
  EXPECT_NE(out.find("eager:"), std::string::npos) << out;
  auto [bad_status, bad] = run(lstm_mnist_path() + " --units 0");
  EXPECT_NE(bad_status, 0);
  EXPECT_NE(bad.find("--units needs an integer >= 1, got '0'"), std::string::npos) << bad;
}

// The attention example: a Transformer block over the rows of the digits,
// trained traced on a cosine-decayed rate, reports its test accuracy.
TEST(Examples, TransformerMnistTrainsOnACosineDecayedRate) {
  if (transformer_mnist_path().empty()) GTEST_SKIP() << "examples are not built (KILN_BUILD_EXAMPLES=OFF)";
  TempDir tmp;
  std::string dir = synthetic_mnist(tmp, 200, 50);
  auto [status, out] = run(transformer_mnist_path() + " --epochs 2 --batch-size 20 --dim 8 --heads 2 --data-dir " + dir);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("Epoch 2/2  10/10 ["), std::string::npos) << out;
  // The cosine schedule has reached its floor, alpha * 1e-3, after its 20 steps.
  EXPECT_NE(out.find("epoch 2: "), std::string::npos) << out;
  EXPECT_NE(out.find("learning rate now 1.00e-04"), std::string::npos) << out;
  EXPECT_NE(out.find("test accuracy: "), std::string::npos) << out;
  auto [bad_status, bad] = run(transformer_mnist_path() + " --dim 10 --heads 4");
  EXPECT_NE(bad_status, 0);
  EXPECT_NE(bad.find("--dim (10) must be a multiple of --heads (4)"), std::string::npos) << bad;
}
