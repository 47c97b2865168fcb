// kiln_mpi_tests: GoogleTest under mpirun (ctest runs it with 2 and 3 ranks).
// Every rank runs every test, in the same order, so the collectives inside
// them pair up. Rank 0 prints as usual; the others print only failures,
// prefixed with their rank. The exit code is the worst over all ranks.
#include <gtest/gtest.h>

#include <cstdio>

#include "kiln/distributed.h"

namespace {

class FailuresOnly : public ::testing::EmptyTestEventListener {
 public:
  explicit FailuresOnly(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", rank_, r.file_name() ? r.file_name() : "?",
                 r.line_number(), r.summary());
  }
  void OnTestEnd(const ::testing::TestInfo& info) override {
    if (info.result()->Failed())
      std::fprintf(stderr, "[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

 private:
  int rank_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  kiln::distributed::init();
  const int rank = kiln::distributed::rank();
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailuresOnly(rank));
  }
  int failed = RUN_ALL_TESTS() != 0;
  // Every rank exits with the same code: a failure anywhere fails the job.
  kiln::Tensor any = kiln::distributed::allreduce(kiln::constant(failed), kiln::distributed::Reduction::Max);
  failed = any.item<int32_t>();
  kiln::distributed::finalize();
  return failed;
}
