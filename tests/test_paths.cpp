// The paths of this checkout and build, given by CMake to this file only.
#include "test_util.h"

namespace kiln::testing {

void expect_golden(const std::string& name, const std::string& text) {
  std::string path = std::string(KILN_GOLDEN_DIR) + "/" + name;
  if (const char* update = std::getenv("KILN_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(path) << text;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with KILN_UPDATE_GOLDEN=1)";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(text, ss.str()) << "golden file " << path;
}

std::string saved_model_corpus_dir() { return std::string(KILN_GOLDEN_DIR) + "/../fuzz_corpus/saved_model"; }
std::string kiln_cli_path() { return KILN_CLI; }

#ifdef KILN_MPIEXEC
std::string mpiexec_path() { return KILN_MPIEXEC; }
#else
std::string mpiexec_path() { return ""; }
#endif

#ifdef KILN_MNIST_TRAIN
std::string mnist_train_path() { return KILN_MNIST_TRAIN; }
std::string mnist_seed_loop_path() { return KILN_MNIST_SEED_LOOP; }
std::string lstm_mnist_path() { return KILN_LSTM_MNIST; }
std::string transformer_mnist_path() { return KILN_TRANSFORMER_MNIST; }
#else
std::string mnist_train_path() { return ""; }
std::string mnist_seed_loop_path() { return ""; }
std::string lstm_mnist_path() { return ""; }
std::string transformer_mnist_path() { return ""; }
#endif

#ifdef KILN_ONNX_TESTDATA
std::string onnx_testdata_dir() { return KILN_ONNX_TESTDATA; }
std::string python_path() { return KILN_PYTHON; }
#endif

}  // namespace kiln::testing
