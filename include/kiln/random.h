#pragma once
// Random tensors, with TF2's seeds:
// - no seed: values from one global generator, new on every call (also on
//   every call of a traced graph: random ops are stateful); set_seed makes
//   the sequence of such calls reproducible;
// - an op seed: with the global seed (set_seed's, else a fixed default) it
//   makes the *sequence* of calls reproducible, each call drawing new values:
//   eagerly, the calls with one op seed share a sequence; in a traced graph,
//   each op has its own, which advances on every run of the graph (so two ops
//   with the same seed in one function draw the same values, as in TF).
//   set_seed restarts every sequence;
// - stateless_* (tf.random.stateless_*): the same seed gives the same values
//   on every call, whatever the global seed (seeded weight initializers).
#include <cstdint>
#include <optional>

#include "kiln/tensor.h"

namespace kiln::random {

// tf.random.set_seed: restarts the global generator at `seed` and sets the
// global seed of op-seeded draws, restarting their sequences, so what follows
// is reproducible.
void set_seed(uint64_t seed);

// Normal(mean, stddev) values; dtype float32 or float64.
Tensor normal(const Shape& shape, double mean = 0.0, double stddev = 1.0,
              DType dtype = DType::Float32, std::optional<uint64_t> seed = std::nullopt,
              SourceLocation loc = SourceLocation::current());

// Uniform values in [minval, maxval); dtype float32 or float64.
Tensor uniform(const Shape& shape, double minval = 0.0, double maxval = 1.0,
               DType dtype = DType::Float32, std::optional<uint64_t> seed = std::nullopt,
               SourceLocation loc = SourceLocation::current());

// The same values for the same seed on every call (tf.random.stateless_*).
Tensor stateless_normal(const Shape& shape, uint64_t seed, double mean = 0.0, double stddev = 1.0,
                        DType dtype = DType::Float32, SourceLocation loc = SourceLocation::current());
Tensor stateless_uniform(const Shape& shape, uint64_t seed, double minval = 0.0, double maxval = 1.0,
                         DType dtype = DType::Float32, SourceLocation loc = SourceLocation::current());

// Draws shaped like `x` (its dtype unless `dtype` is given); inside a traced
// function the shape may have dims known only when the graph runs (a batch
// dim of None), which the forms above cannot take.
Tensor uniform_like(const Tensor& x, double minval = 0.0, double maxval = 1.0,
                    std::optional<DType> dtype = std::nullopt, std::optional<uint64_t> seed = std::nullopt,
                    SourceLocation loc = SourceLocation::current());
Tensor normal_like(const Tensor& x, double mean = 0.0, double stddev = 1.0,
                   std::optional<DType> dtype = std::nullopt, std::optional<uint64_t> seed = std::nullopt,
                   SourceLocation loc = SourceLocation::current());

// tf.random.shuffle: value's rows (dim 0) in a random order, drawn with the
// seeds of the ops above (one uniform draw per row, sorted).
Tensor shuffle(const Tensor& value, std::optional<uint64_t> seed = std::nullopt,
               SourceLocation loc = SourceLocation::current());

}  // namespace kiln::random
