// The MPI calls of kiln::distributed (see transport.h). Without MPI
// (KILN_WITH_MPI unset) the world is one process and nothing here is called
// but built() and init().
#include "distributed/transport.h"

#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "kiln/error.h"

#if KILN_WITH_MPI
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <climits>
#endif

namespace kiln::distributed::transport {

#if KILN_WITH_MPI

namespace {

MPI_Comm control_comm = MPI_COMM_NULL;  // fingerprints: never pairs with data collectives
int my_rank = 0;

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::UInt8:
    case DType::Bool: return MPI_UINT8_T;
    default: throw Internal(fmt::format("kiln.distributed: no MPI type for {}", dtype_name(d)));
  }
}

MPI_Op mpi_op(distributed::Reduction op, DType d) {
  using distributed::Reduction;
  // Bools are 0/1 bytes: max is "or", min is "and"; a sum of bools is "or".
  if (d == DType::Bool) return op == Reduction::Min ? MPI_MIN : MPI_MAX;
  switch (op) {
    case Reduction::Max: return MPI_MAX;
    case Reduction::Min: return MPI_MIN;
    default: return MPI_SUM;  // the mean divides afterwards
  }
}

// Polls `request` until it completes. Open MPI progresses a nonblocking
// collective only inside MPI calls (no progress thread), so the loop keeps
// calling MPI_Test, as a blocking call spins inside; sched_yield gives the
// core to the compute thread whenever it is runnable (2 cores, several
// ranks), which is what Open MPI's own blocking calls do when oversubscribed.
void wait(MPI_Request* request, const Waiting& waiting) {
  int flag = 0;
  MPI_Test(request, &flag, MPI_STATUS_IGNORE);
  if (flag) return;
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const auto limit = std::chrono::duration<double>(waiting.timeout_seconds);
  const auto warn_after = std::min(limit / 2, std::chrono::duration<double>(60));
  bool warned = false;
  for (uint64_t i = 1;; ++i) {
    MPI_Test(request, &flag, MPI_STATUS_IGNORE);
    if (flag) return;
    if ((i & 127) == 0) {
      auto waited = clock::now() - start;
      if (waited > limit)
        abort_job(fmt::format(
            "kiln.distributed: rank {}: {} did not complete within {} s: another rank has died, hung, "
            "or is running different collectives (timeout: InitOptions::timeout_seconds or "
            "KILN_DISTRIBUTED_TIMEOUT). Aborting the job.",
            my_rank, waiting.describe(waiting.context), waiting.timeout_seconds));
      if (!warned && waited > warn_after) {
        warned = true;
        std::fprintf(stderr, "kiln.distributed: rank %d: still waiting for %s after %.0f s\n", my_rank,
                     waiting.describe(waiting.context).c_str(),
                     std::chrono::duration<double>(waited).count());
      }
    }
    sched_yield();
  }
}

// MPI counts are ints: larger buffers go in chunks.
constexpr int64_t kMaxChunk = int64_t(1) << 30;

}  // namespace

bool built() { return true; }

World init() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  World w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  MPI_Comm_free(&local);
  MPI_Comm_dup(MPI_COMM_WORLD, &control_comm);
  my_rank = w.rank;
  return w;
}

void finalize(const Waiting& waiting) {
  barrier(waiting);
  MPI_Comm_free(&control_comm);
  MPI_Finalize();
}

void abort_job(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();  // MPI_Abort does not return; if it did, do not go on
}

void allreduce(const void* send, void* recv, int64_t count, DType dtype, distributed::Reduction op,
               const Waiting& waiting) {
  const std::size_t esize = dtype_size(dtype);
  for (int64_t at = 0; at < count; at += kMaxChunk) {
    int n = static_cast<int>(std::min(kMaxChunk, count - at));
    char* r = static_cast<char*>(recv) + at * esize;
    const void* s = send == recv ? MPI_IN_PLACE : static_cast<const char*>(send) + at * esize;
    MPI_Request req;
    MPI_Iallreduce(s, r, n, mpi_type(dtype), mpi_op(op, dtype), MPI_COMM_WORLD, &req);
    wait(&req, waiting);
  }
}

void broadcast(void* buffer, int64_t count, DType dtype, int root, const Waiting& waiting) {
  const std::size_t esize = dtype_size(dtype);
  for (int64_t at = 0; at < count; at += kMaxChunk) {
    int n = static_cast<int>(std::min(kMaxChunk, count - at));
    MPI_Request req;
    MPI_Ibcast(static_cast<char*>(buffer) + at * esize, n, mpi_type(dtype), root, MPI_COMM_WORLD, &req);
    wait(&req, waiting);
  }
}

void reduce(const void* send, void* recv, int64_t count, DType dtype, int root, const Waiting& waiting) {
  const std::size_t esize = dtype_size(dtype);
  for (int64_t at = 0; at < count; at += kMaxChunk) {
    int n = static_cast<int>(std::min(kMaxChunk, count - at));
    MPI_Request req;
    MPI_Ireduce(static_cast<const char*>(send) + at * esize, static_cast<char*>(recv) + at * esize, n,
                mpi_type(dtype), mpi_op(distributed::Reduction::Sum, dtype), root, MPI_COMM_WORLD, &req);
    wait(&req, waiting);
  }
}

void allgather(const void* send, void* recv, int64_t count, DType dtype, const Waiting& waiting) {
  if (count > INT_MAX)
    throw Unimplemented(fmt::format("kiln.distributed: allgather of {} elements per rank (at most {})", count, INT_MAX));
  MPI_Request req;
  MPI_Iallgather(send, static_cast<int>(count), mpi_type(dtype), recv, static_cast<int>(count), mpi_type(dtype),
                 MPI_COMM_WORLD, &req);
  wait(&req, waiting);
}

void barrier(const Waiting& waiting) {
  MPI_Request req;
  MPI_Ibarrier(MPI_COMM_WORLD, &req);
  wait(&req, waiting);
}

std::vector<uint64_t> gather_fingerprints(uint64_t mine, const Waiting& waiting) {
  int size = 1;
  MPI_Comm_size(control_comm, &size);
  std::vector<uint64_t> all(static_cast<std::size_t>(size));
  MPI_Request req;
  MPI_Iallgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, control_comm, &req);
  wait(&req, waiting);
  return all;
}

std::vector<std::string> gather_texts(const std::string& mine, const Waiting& waiting) {
  int size = 1;
  MPI_Comm_size(control_comm, &size);
  int length = static_cast<int>(std::min<std::size_t>(mine.size(), 1 << 20));
  std::vector<int> lengths(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size));
  MPI_Request req;
  MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, control_comm, &req);
  wait(&req, waiting);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lengths[static_cast<std::size_t>(r)];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, control_comm,
                  &req);
  wait(&req, waiting);
  std::vector<std::string> texts;
  for (int r = 0; r < size; ++r)
    texts.push_back(all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                               static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)])));
  return texts;
}

#else  // a world of one process

namespace {
[[noreturn]] void no_mpi() { throw Internal("kiln.distributed: this build has no MPI"); }
}  // namespace

bool built() { return false; }
World init() { return {}; }
void finalize(const Waiting&) {}
void abort_job(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::abort();
}
void allreduce(const void*, void*, int64_t, DType, distributed::Reduction, const Waiting&) { no_mpi(); }
void broadcast(void*, int64_t, DType, int, const Waiting&) { no_mpi(); }
void reduce(const void*, void*, int64_t, DType, int, const Waiting&) { no_mpi(); }
void allgather(const void*, void*, int64_t, DType, const Waiting&) { no_mpi(); }
void barrier(const Waiting&) { no_mpi(); }
std::vector<uint64_t> gather_fingerprints(uint64_t mine, const Waiting&) { return {mine}; }
std::vector<std::string> gather_texts(const std::string& mine, const Waiting&) { return {mine}; }

#endif

}  // namespace kiln::distributed::transport
