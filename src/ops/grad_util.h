#pragma once
// Helpers for gradient functions (docs/design-notes.md, "Autodiff"). Each dispatches ops, so it
// works eagerly and while tracing, with unknown dims resolved at run time.
#include <span>
#include <vector>

#include "kiln/tensor.h"

namespace kiln::ops {

// `g` summed down to `x`'s shape (the reverse of broadcasting `x` to g's
// shape): the gradient of a broadcast input. Returns g itself when both
// shapes are fully known and equal.
Tensor sum_to_shape_of(const Tensor& g, const Tensor& x);
// `t` broadcast to `x`'s shape.
Tensor broadcast_like(const Tensor& t, const Tensor& x);
// `t` (as many elements as x) with `x`'s shape.
Tensor reshape_like(const Tensor& t, const Tensor& x);
// `g` cut along `axis` into parts shaped like `likes` (Concat's gradient).
std::vector<Tensor> split_like(const Tensor& g, std::span<const Tensor> likes, int64_t axis);
// `g` (x tiled by `multiples`) summed over the copies, shaped like x (Tile's
// gradient).
Tensor tile_grad_like(const Tensor& g, const Tensor& x, const std::vector<int64_t>& multiples);
// Gradient of a binary elementwise op's input: `g` reduced to that input.
inline Tensor unbroadcast(const Tensor& g, const Tensor& input) { return sum_to_shape_of(g, input); }

}  // namespace kiln::ops
