#pragma once
// The float32 matrix-vector product y = x B: MatMul's kernel when a is one
// row ([1, K] x [K, N], the Dense layer of a model served at batch 1).
//
// Why not oneDNN: for M = 1 the product reads each weight once for one
// multiply-add, so its speed is how fast B streams from memory, and oneDNN
// 2.6's matmul at M = 1 streamed it 2.5-3.5x slower than this kernel, which
// reads B row by row in blocks of consecutive rows that the threads share out
// (numbers in docs/design-notes.md).
//
// The bits depend on K and the values only, never on the thread count or the
// CPU: each column is a chain of FMAs over a block of kGemvBlockRows rows of B
// in row order, and the blocks' partial sums are added in block order.
#include <cstdint>

namespace kiln::detail {

inline constexpr int64_t kGemvBlockRows = 256;

// y[j] = sum over i < k of x[i] * b[i * ldb + j], for j < n (y holds n
// floats; ldb >= n). x is contiguous.
void gemv_f32(const float* x, const float* b, int64_t ldb, int64_t k, int64_t n, float* y);

}  // namespace kiln::detail
