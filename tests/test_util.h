#pragma once
// Shared assertions for Kiln's tests.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <kiln/kiln.h>

namespace kiln::testing {

// Asserts dtype, shape and exact values.
template <class T>
void expect_tensor(const Tensor& t, const Shape& shape, const std::vector<T>& values) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.dtype(), dtype_of<T>) << "dtype " << dtype_name(t.dtype());
  ASSERT_EQ(t.shape(), shape) << "shape " << t.shape().to_string() << " vs " << shape.to_string();
  std::vector<T> got = t.to_vector<T>();
  ASSERT_EQ(got.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(got[i], values[i]) << "element " << i;
}

// Asserts dtype, shape and values within a relative/absolute tolerance.
template <class T>
void expect_tensor_near(const Tensor& t, const Shape& shape, const std::vector<T>& values,
                        double tol = 1e-5) {
  ASSERT_TRUE(t.defined());
  ASSERT_EQ(t.dtype(), dtype_of<T>) << "dtype " << dtype_name(t.dtype());
  ASSERT_EQ(t.shape(), shape) << "shape " << t.shape().to_string() << " vs " << shape.to_string();
  std::vector<T> got = t.to_vector<T>();
  ASSERT_EQ(got.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::isnan(static_cast<double>(values[i]))) {
      EXPECT_TRUE(std::isnan(static_cast<double>(got[i]))) << "element " << i;
      continue;
    }
    double scale = std::max(1.0, std::abs(static_cast<double>(values[i])));
    EXPECT_NEAR(got[i], values[i], tol * scale) << "element " << i;
  }
}

// Asserts that `fn` throws exactly E (or a subclass) and that every fragment
// appears in the message.
template <class E>
void expect_error(const std::function<void()>& fn, const std::vector<std::string>& fragments) {
  try {
    fn();
  } catch (const E& e) {
    std::string msg = e.what();
    for (const std::string& f : fragments)
      EXPECT_NE(msg.find(f), std::string::npos) << "missing \"" << f << "\" in: " << msg;
    return;
  } catch (const std::exception& e) {
    FAIL() << "threw another exception type: " << e.what();
  }
  FAIL() << "did not throw";
}

// The variables' names, in order.
inline std::vector<std::string> names(const std::vector<Variable>& vars) {
  std::vector<std::string> out;
  for (const Variable& v : vars) out.push_back(v.name());
  return out;
}

// Compares text with tests/golden/<name>; KILN_UPDATE_GOLDEN=1 rewrites it.
void expect_golden(const std::string& name, const std::string& text);

// Where the build put the example programs (empty when examples are not
// built). Defined in test_paths.cpp, the one file that sees this
// checkout's paths, so other test files compile the same in every clone
// (and hit ccache).
std::string mnist_train_path();
// mpirun, when Kiln is built with MPI, else empty.
std::string mpiexec_path();
std::string mnist_seed_loop_path();
// tests/fuzz_corpus/saved_model (the saved-model fuzz seeds) and the kiln-cli
// executable.
std::string saved_model_corpus_dir();
std::string kiln_cli_path();

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("kiln_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln::testing
