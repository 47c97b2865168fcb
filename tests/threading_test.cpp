// kiln/threading.h: the pool's size (TF's tf.config.threading) and Kiln's
// OpenMP wait policy, which Kiln's tools adopt by executing themselves again.
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "kiln/threading.h"
#include "test_util.h"

namespace {

TEST(Threading, IntraOpThreadsSizeThePoolOfTheCallingThread) {
  const int before = omp_get_max_threads();
  kiln::config::set_intra_op_parallelism_threads(1);
  EXPECT_EQ(omp_get_max_threads(), 1);
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), 1);
  EXPECT_THROW(kiln::config::set_intra_op_parallelism_threads(-1), std::invalid_argument);
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), 1);  // a bad value changes nothing
  kiln::config::set_intra_op_parallelism_threads(0);  // the machine's choice again
  EXPECT_EQ(omp_get_max_threads(), before);
  EXPECT_EQ(kiln::config::get_intra_op_parallelism_threads(), 0);
}

std::string output_of(const std::string& command) {
  std::string out;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe)) out += buffer;
  pclose(pipe);
  return out;
}

// libgomp prints its settings (OMP_DISPLAY_ENV) each time it starts: once
// with its default, then once more after kiln-cli executed itself again.
TEST(Threading, ToolsAdoptTheShortSpinUnlessTheUserChoseAPolicy) {
  const std::string cli = "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_DISPLAY_ENV=verbose " + kiln::testing::kiln_cli_path();
  const std::string adopted = output_of(cli);
  EXPECT_NE(adopted.find("GOMP_SPINCOUNT = '1000'"), std::string::npos) << adopted;
  const std::string users = output_of("env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=7 OMP_DISPLAY_ENV=verbose " +
                                      kiln::testing::kiln_cli_path());
  EXPECT_NE(users.find("GOMP_SPINCOUNT = '7'"), std::string::npos) << users;
  EXPECT_EQ(users.find("GOMP_SPINCOUNT = '1000'"), std::string::npos) << users;
}

}  // namespace
