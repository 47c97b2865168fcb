#pragma once
// Random tensors. Without a seed, values come from one global generator and
// differ on every call (also on every call of a traced graph: random ops are
// stateful). With a seed, an op is deterministic: the same seed gives the
// same values on every call (as tf.random.stateless_*).
#include <cstdint>
#include <optional>

#include "kiln/tensor.h"

namespace kiln::random {

// Restarts the global generator at `seed`, so the sequence of unseeded
// random ops that follows is reproducible.
void set_seed(uint64_t seed);

// Normal(mean, stddev) values; dtype float32 or float64.
Tensor normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
              DType dtype = DType::Float32, std::optional<uint64_t> seed = std::nullopt,
              SourceLocation loc = SourceLocation::current());

// Uniform values in [minval, maxval); dtype float32 or float64.
Tensor uniform(const Shape& shape, double minval = 0.0, double maxval = 1.0,
               DType dtype = DType::Float32, std::optional<uint64_t> seed = std::nullopt,
               SourceLocation loc = SourceLocation::current());

// Draws shaped like `x` (its dtype unless `dtype` is given); inside a traced
// function the shape may have dims known only when the graph runs (a batch
// dim of None), which the forms above cannot take.
Tensor uniform_like(const Tensor& x, double minval = 0.0, double maxval = 1.0,
                    std::optional<DType> dtype = std::nullopt, std::optional<uint64_t> seed = std::nullopt,
                    SourceLocation loc = SourceLocation::current());
Tensor normal_like(const Tensor& x, double mean = 0.0, double stddev = 1.0,
                   std::optional<DType> dtype = std::nullopt, std::optional<uint64_t> seed = std::nullopt,
                   SourceLocation loc = SourceLocation::current());

}  // namespace kiln::random
