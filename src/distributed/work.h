#pragma once
// One collective handed to the communication thread: what to do, on which
// tensors (held here, so they outlive the caller's step), and how the caller
// learns that it is done.
#include <atomic>
#include <cstdint>
#include <string>

#include "core/small_vector.h"
#include "kiln/distributed.h"
#include "kiln/tensor.h"

namespace kiln::distributed {

enum class Kind : uint8_t { Allreduce, Broadcast, Reduce, Allgather, Barrier, Finalize, Call };
const char* kind_name(Kind k);

struct Work {
  Kind kind = Kind::Allreduce;
  Reduction op = Reduction::Sum;
  int root = 0;
  // Bucket `bucket` of the `num_buckets` that one average_gradients call
  // issues (-1: a collective of its own). The communication thread runs a
  // group's buckets in index order whatever order they arrive in, so ranks
  // whose backward passes finish them in different orders still agree.
  int bucket = -1;
  int num_buckets = 0;
  // What every rank must agree on, checked across ranks the first time this
  // process sees it: for buckets the whole bucket plan (`layout`, which
  // describes it, lives in the op's attrs until the work is finished); 0 for
  // other collectives, whose kind, dtype and shape are hashed instead.
  uint64_t fingerprint = 0;
  const std::string* layout = nullptr;
  detail::SmallVector<Tensor, 4> inputs, outputs;
  // Kind::Call: a function run on the communication thread (benchmarks
  // calling MPI themselves, which only that thread may do).
  void (*call)(void* argument) = nullptr;
  void* argument = nullptr;

  // Set by the communication thread before `done`.
  std::string error;
  std::atomic<uint32_t> done{0};

  // The communication thread's queue and the free list.
  Work* next = nullptr;
};

// FNV-1a, the same on every rank and build (std::hash need not be).
inline uint64_t fnv1a(const void* data, std::size_t n, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace kiln::distributed
