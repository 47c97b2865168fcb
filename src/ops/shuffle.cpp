// tf.random.shuffle as a composite: the rows of `value` gathered in the order
// that sorts one uniform draw per row. The draw is a RandomUniform op, so the
// seeds behave as every random op's (TF2 seeds, docs/design-notes.md, "Foundation") and traced
// graphs draw a new order on each run. The sort needs the number of rows when
// traced (a dim known only at run time is sort's clear error).
#include <vector>

#include "kiln/array.h"
#include "kiln/error.h"
#include "kiln/math.h"
#include "kiln/random.h"

namespace kiln::random {

Tensor shuffle(const Tensor& value, std::optional<uint64_t> seed, SourceLocation loc) {
  const Shape& s = value.shape();
  if (s.has_known_rank() && s.rank() == 0)
    throw InvalidArgument("shuffle: value must be at least 1-D, got a scalar");
  // One element per row, whatever the dims after the first.
  Tensor rows = value;
  if (s.rank() > 1) {
    std::vector<int64_t> begin(static_cast<std::size_t>(s.rank()), 0), size(static_cast<std::size_t>(s.rank()), 1);
    size[0] = -1;
    rows = reshape(slice(value, begin, size, loc), Shape{-1}, loc);
  }
  Tensor keys = uniform_like(rows, 0.0, 1.0, DType::Float64, seed, loc);
  return gather(value, argsort(keys, 0, false, loc), 0, loc);
}

}  // namespace kiln::random
