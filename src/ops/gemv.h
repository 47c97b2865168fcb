#pragma once
// The float32 product of a few rows (up to kGemvMaxRows) and a matrix: y = a B.
// MatMul's kernel for [M <= 4, K] x [K, N], the Dense layer of a model served
// at batch 1 to 4.
//
// Why not oneDNN: with one row the product reads each weight once for one
// multiply-add, so its speed is how fast B streams from memory, and oneDNN
// 2.6's matmul at small M streamed it several times slower than this kernel,
// which reads B row by row in blocks of consecutive rows that the threads
// share out, each value of B once for all the rows of a (docs/design-notes.md,
// "Foundation"; the figures are in docs/perf-log.md).
//
// The bits depend on K and the values only, never on the thread count, the
// CPU or the other rows: each column is a chain of FMAs over a block of
// kGemvBlockRows rows of B in row order, and the blocks' partial sums are
// added in block order.
#include <cstdint>

namespace kiln::ops {

inline constexpr int64_t kGemvBlockRows = 256;
// The most rows of a MatMul takes this kernel for (oneDNN from there on).
inline constexpr int64_t kGemvMaxRows = 4;

// A few rows of a: row m's element i is data[m * row + i * col].
struct GemvRows {
  const float* data;
  int64_t count, row, col;
};

// y[m * n + j] = sum over i < k of a(m, i) * b[i * ldb + j], for the rows m
// of a and j < n (ldb >= n). Each row's bits are those it gets alone.
void gemv_f32(const GemvRows& a, const float* b, int64_t ldb, int64_t k, int64_t n, float* y);

}  // namespace kiln::ops
