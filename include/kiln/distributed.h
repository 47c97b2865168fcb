#pragma once
// kiln::distributed: data-parallel training over MPI, in the style of Horovod
// (docs/design-notes.md, "Data-parallel training over MPI"). Every process (rank) runs the same program on its own
// shard of the data; gradients are averaged across ranks before each update.
//
//   distributed::init();                       // under mpirun -np N
//   auto shard = ds.shard(distributed::size(), distributed::rank());
//   distributed::broadcast_variables(model.variables(), 0);
//   auto step = kiln::function([&](const Tensor& x, const Tensor& y) {
//     GradientTape tape;
//     Tensor loss = ...;
//     auto grads = distributed::average_gradients(tape.gradient(loss, vars));
//     opt.apply_gradients(grads, vars);
//     return loss;
//   });
//
// The collectives are ops (eager, traced, differentiable). All MPI calls run
// on one communication thread (so MPI needs only MPI_THREAD_FUNNELED): an op
// hands its work to that thread and the graph waits for it only where its
// result is read, so a traced step overlaps gradient averaging with the rest
// of the backward pass. Every rank must run the same collectives in the same
// order (the same traced graphs): a step whose buckets differ between ranks
// is refused with an error naming the difference, and a rank that dies or
// stops taking part makes the others abort the job after a timeout.
//
// Without init() (or in a build without MPI) the world is one process: rank
// 0 of 1, and the collectives return their input.
#include <cstdint>
#include <vector>

#include "kiln/tensor.h"
#include "kiln/variable.h"

namespace kiln::distributed {

struct InitOptions {
  // How long a collective may wait for the other ranks before the job is
  // aborted with a message naming it (seconds). <= 0: the environment's
  // KILN_DISTRIBUTED_TIMEOUT, else 300. A rank still computing (loading data,
  // tracing a function) counts as waiting, so keep it well above a step.
  double timeout_seconds = 0;
};

// Initializes MPI (on the communication thread). Call once, before any
// collective, in every rank; a second call does nothing. In a build without
// MPI the world is one process.
void init(const InitOptions& options = {});
// Waits for every rank (with the timeout), then shuts MPI down. Called at
// exit when the program does not. Collectives after it are an error.
void finalize();
bool initialized();
// Whether this build has MPI (KILN_WITH_MPI).
bool built_with_mpi();

int rank();        // 0 .. size() - 1
int size();        // the number of ranks
int local_rank();  // the rank among the processes on this machine
int local_size();

enum class Reduction { Sum, Mean, Max, Min };
// "sum", "mean", "max", "min".
const char* reduction_name(Reduction r);

// The elementwise reduction of `x` over all ranks, on every rank. Every rank
// passes the same dtype and shape. Numeric dtypes; bool with Sum/Max (or)
// and Min (and). Integer means truncate toward zero.
// Gradients: Sum -> allreduce(dy, Sum); Mean -> allreduce(dy, Mean); Max/Min
// -> allreduce(dy, Sum) where x was the extreme, shared between ties.
Tensor allreduce(const Tensor& x, Reduction op = Reduction::Sum,
                 SourceLocation loc = SourceLocation::current());
// Root's `x` on every rank (others pass a tensor of the same dtype and
// shape). Gradient: the sum of dy over ranks, to root (zeros elsewhere).
Tensor broadcast(const Tensor& x, int root = 0, SourceLocation loc = SourceLocation::current());
// The sum of `x` over ranks on root, zeros elsewhere (MPI_Reduce).
// Gradient: broadcast(dy, root).
Tensor reduce_to_root(const Tensor& x, int root = 0, SourceLocation loc = SourceLocation::current());
// Every rank's `x` (same dtype and shape, rank >= 1) concatenated along
// dim 0 in rank order. Gradient: this rank's rows of allreduce(dy, Sum).
Tensor allgather(const Tensor& x, SourceLocation loc = SourceLocation::current());
// Waits for every rank.
void barrier();

// What this process's collectives have cost since it started.
struct Stats {
  int64_t collectives = 0;  // collectives handed to the communication thread
  int64_t bytes = 0;        // their input bytes
  // Time callers spent blocked on unfinished collectives (a step waiting
  // for its gradients): the communication that was not overlapped.
  double wait_seconds = 0;
};
Stats stats();

// Sets every variable to root's value (after building a model, so that all
// ranks start from the same weights). Eager: call it outside kiln::function.
void broadcast_variables(const std::vector<Variable>& variables, int root = 0);

struct AverageOptions {
  // Gradients are packed into buckets of at most this many bytes (one
  // allreduce each; a larger tensor is a bucket of its own), last gradients
  // first (the backward pass computes them first, so in a traced step their
  // allreduce starts while earlier layers' gradients are still computed).
  int64_t bucket_bytes = 25 << 20;
  Reduction op = Reduction::Mean;
};
// The mean (by default) over ranks of each gradient, in its position; an
// undefined gradient stays undefined (every rank must agree on which).
std::vector<Tensor> average_gradients(const std::vector<Tensor>& gradients, const AverageOptions& options = {});

}  // namespace kiln::distributed
