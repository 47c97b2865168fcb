#include "ops/broadcast.h"

namespace kiln::ops {

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out, int* bad_dim) {
  if (!a.has_known_rank() || !b.has_known_rank()) {
    *out = Shape::unknown_rank();
    return true;
  }
  const int rank = std::max(a.rank(), b.rank());
  int64_t dims[Shape::kMaxRank];
  for (int i = 0; i < rank; ++i) {  // i counts from the right
    int64_t da = i < a.rank() ? a[a.rank() - 1 - i] : 1;
    int64_t db = i < b.rank() ? b[b.rank() - 1 - i] : 1;
    int64_t d;
    if (da == db) d = da;
    else if (da == 1) d = db;
    else if (db == 1) d = da;
    // An unknown dim may turn out to be 1 or to equal the other: only a
    // known dim > 1 decides the result.
    else if (da < 0) d = db > 1 ? db : None;
    else if (db < 0) d = da > 1 ? da : None;
    else {
      if (bad_dim) *bad_dim = -1 - i;
      return false;
    }
    dims[rank - 1 - i] = d;
  }
  *out = Shape(std::span<const int64_t>(dims, static_cast<std::size_t>(rank)));
  return true;
}

Shape infer_broadcast(const schema::InferContext& c, const Shape& a, const Shape& b, const char* a_name,
                      const char* b_name) {
  Shape out;
  int bad = 0;
  if (!broadcast_shapes(a, b, &out, &bad)) {
    int64_t da = a[a.rank() + bad], db = b[b.rank() + bad];
    c.fail("{} and {} cannot be broadcast together: shapes {} and {} (dimension {} from the end "
           "is {} vs {}; each must be equal or 1)",
           a_name, b_name, a.to_string(), b.to_string(), -bad, da, db);
  }
  return out;
}

BroadcastPlan make_broadcast_plan(const Shape& out, std::initializer_list<const Shape*> inputs) {
  BroadcastPlan p;
  p.num_inputs = static_cast<int>(inputs.size());
  const int rank = out.rank();

  // Full-rank strides (0 where an input's dim is 1 or missing).
  int64_t full[BroadcastPlan::kMaxInputs][Shape::kMaxRank] = {};
  int k = 0;
  for (const Shape* s : inputs) {
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
      int id = d - (rank - s->rank());
      int64_t dim = id >= 0 ? (*s)[id] : 1;
      full[k][d] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
    ++k;
  }

  // Drop dims of size 1 and merge neighbours that every input walks
  // contiguously (or broadcasts along both): fewer, longer rows.
  int n = 0;
  for (int d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    if (n > 0) {
      bool mergeable = true;
      for (int i = 0; i < p.num_inputs; ++i)
        if (p.strides[i][n - 1] != full[i][d] * out[d]) mergeable = false;
      if (mergeable) {
        p.dims[n - 1] *= out[d];
        for (int i = 0; i < p.num_inputs; ++i) p.strides[i][n - 1] = full[i][d];
        continue;
      }
    }
    p.dims[n] = out[d];
    for (int i = 0; i < p.num_inputs; ++i) p.strides[i][n] = full[i][d];
    ++n;
  }
  if (n == 0) {
    p.dims[0] = 1;
    for (int i = 0; i < p.num_inputs; ++i) p.strides[i][0] = 0;
    n = 1;
  }
  p.rank = n;
  return p;
}

}  // namespace kiln::ops
