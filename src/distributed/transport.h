#pragma once
// The MPI calls, and nothing else (src/distributed/mpi_transport.cpp, the
// only file that includes <mpi.h>). Every function runs on the communication
// thread. Each collective starts a nonblocking MPI operation and polls it
// until it completes or the deadline passes; past the deadline the job is
// aborted (MPI_Abort) with a message naming the operation, since a pending
// MPI request cannot be cancelled and the other ranks may be gone.
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dtype.h"
#include "kiln/distributed.h"

namespace kiln::distributed::transport {

struct World {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
};

// Describes the operation being waited for, for the timeout message (called
// only then).
struct Waiting {
  double timeout_seconds;
  std::string (*describe)(const void* context);
  const void* context;
};

bool built();
World init();
void finalize(const Waiting& waiting);  // a barrier with the deadline first
[[noreturn]] void abort_job(const std::string& message);

// `send == recv` reduces in place. `count` elements of `dtype`.
void allreduce(const void* send, void* recv, int64_t count, DType dtype, distributed::Reduction op,
               const Waiting& waiting);
void broadcast(void* buffer, int64_t count, DType dtype, int root, const Waiting& waiting);
// The sum to `recv` on root; `recv` is not written elsewhere.
void reduce(const void* send, void* recv, int64_t count, DType dtype, int root, const Waiting& waiting);
// `count` elements from each rank into `recv`, in rank order.
void allgather(const void* send, void* recv, int64_t count, DType dtype, const Waiting& waiting);
void barrier(const Waiting& waiting);

// On a communicator of its own (so that it never pairs with a collective of
// the data path): every rank's fingerprint, and every rank's text.
std::vector<uint64_t> gather_fingerprints(uint64_t mine, const Waiting& waiting);
std::vector<std::string> gather_texts(const std::string& mine, const Waiting& waiting);

}  // namespace kiln::distributed::transport
