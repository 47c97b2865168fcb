// Gradient averaging in buckets, and the initial broadcast of variables.
#include <fmt/format.h>

#include "distributed/collectives.h"
#include "distributed/work.h"
#include "kiln/distributed.h"

namespace kiln::distributed {

namespace {

struct Bucket {
  DType dtype;
  int64_t bytes = 0;
  std::vector<std::size_t> members;  // gradient positions, last first
};

}  // namespace

std::vector<Tensor> average_gradients(const std::vector<Tensor>& gradients, const AverageOptions& options) {
  if (options.op != Reduction::Sum && options.op != Reduction::Mean)
    throw InvalidArgument(fmt::format("average_gradients: gradients are summed or averaged, not '{}'",
                                      reduction_name(options.op)));
  if (options.bucket_bytes <= 0)
    throw InvalidArgument(fmt::format("average_gradients: bucket_bytes must be positive, got {}", options.bucket_bytes));
  // A world of one: the mean of one gradient is itself.
  if (size() == 1) return gradients;

  // Last gradients first: the backward pass produces them first, so their
  // bucket is complete (and, traced, starts its allreduce) earliest. A
  // bucket holds one dtype and up to bucket_bytes (a larger gradient alone).
  std::vector<Bucket> buckets;
  for (std::size_t i = gradients.size(); i-- > 0;) {
    const Tensor& g = gradients[i];
    if (!g.defined()) continue;
    int64_t n = g.shape().num_elements();
    int64_t bytes = n < 0 ? 0 : n * static_cast<int64_t>(dtype_size(g.dtype()));
    if (buckets.empty() || buckets.back().dtype != g.dtype() ||
        (!buckets.back().members.empty() && buckets.back().bytes + bytes > options.bucket_bytes))
      buckets.push_back({g.dtype()});
    buckets.back().bytes += bytes;
    buckets.back().members.push_back(i);
  }
  // The plan every rank must share, one entry per gradient, so that a
  // mismatch names the first gradient that differs.
  std::string layout = fmt::format("{} gradients in {} buckets", gradients.size(), buckets.size());
  for (std::size_t b = 0; b < buckets.size(); ++b)
    for (std::size_t i : buckets[b].members)
      layout += fmt::format("; bucket {}: gradient {} {} {}", b, i, dtype_name(gradients[i].dtype()),
                            gradients[i].shape().to_string());
  const uint64_t fingerprint = fnv1a(layout.data(), layout.size());

  std::vector<Tensor> out(gradients.size());
  std::vector<Tensor> in;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    in.clear();
    for (std::size_t i : buckets[b].members) in.push_back(gradients[i]);
    std::vector<Tensor> reduced = grouped_allreduce(
        in, options.op, static_cast<int>(b), static_cast<int>(buckets.size()), fingerprint, layout);
    for (std::size_t k = 0; k < reduced.size(); ++k) out[buckets[b].members[k]] = std::move(reduced[k]);
  }
  return out;
}

void broadcast_variables(const std::vector<Variable>& variables, int root) {
  for (const Variable& v : variables) v.assign(broadcast(v.read_value(), root));
}

}  // namespace kiln::distributed
