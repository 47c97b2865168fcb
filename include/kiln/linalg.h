#pragma once
// Factorizations and solves of batches of matrices, as tf.linalg's: the last two dims are the
// matrices, leading dims a batch; float32 and float64, and complex64/complex128 where an op says so. Kernels call LAPACK; every op has TF's
// gradient. Bad input raises InvalidArgument as TF's kernels do (a non-square matrix naming its
// shape, "Input is not invertible.", a Cholesky factorization that fails).
#include <tuple>
#include <utility>

#include "kiln/dtype.h"
#include "kiln/tensor.h"

namespace kiln {

// tf.linalg.inv (MatrixInverse): the inverse of each matrix (of its adjoint when `adjoint`).
Tensor matrix_inverse(const Tensor& x, bool adjoint = false, SourceLocation loc = SourceLocation::current());
// tf.linalg.det (MatrixDeterminant): the determinant of each matrix, shape x.shape[:-2].
Tensor matrix_determinant(const Tensor& x, SourceLocation loc = SourceLocation::current());
// tf.linalg.slogdet (LogMatrixDeterminant): (sign, log |det|) of each matrix; a singular matrix
// gives (0, -inf).
std::pair<Tensor, Tensor> log_matrix_determinant(const Tensor& x, SourceLocation loc = SourceLocation::current());
// tf.linalg.lu (Lu): (lu, p) with x[..., p, :] = L @ U, L unit lower-triangular (its strict lower
// triangle packed in lu) and U upper-triangular; p of output_idx_type (int32 or int64).
std::pair<Tensor, Tensor> lu(const Tensor& x, DType output_idx_type = DType::Int32,
                             SourceLocation loc = SourceLocation::current());
// tf.linalg.solve (MatrixSolve): X with matrix @ X = rhs (adjoint(matrix) @ X = rhs when
// `adjoint`); matrix [..., M, M], rhs [..., M, K] with the same batch dims.
Tensor matrix_solve(const Tensor& matrix, const Tensor& rhs, bool adjoint = false,
                    SourceLocation loc = SourceLocation::current());
// tf.linalg.triangular_solve (MatrixTriangularSolve): as matrix_solve, reading only the lower
// (or upper) triangle of `matrix`; batch dims broadcast.
Tensor matrix_triangular_solve(const Tensor& matrix, const Tensor& rhs, bool lower = true, bool adjoint = false,
                               SourceLocation loc = SourceLocation::current());
// tf.linalg.cholesky: the lower-triangular L with L @ L^T = x, reading x's lower triangle.
Tensor cholesky(const Tensor& x, SourceLocation loc = SourceLocation::current());
// tf.linalg.qr: (q, r) with q's columns orthonormal and r upper-triangular; [..., M, K] and
// [..., K, N], K = min(M, N), or [..., M, M] and [..., M, N] with full_matrices.
std::pair<Tensor, Tensor> qr(const Tensor& x, bool full_matrices = false,
                             SourceLocation loc = SourceLocation::current());
// tf.linalg.svd (Svd): (s, u, v) with x = u @ diag(s) @ v^T, s descending. Without compute_uv,
// u and v are empty ([0]).
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& x, bool full_matrices = false, bool compute_uv = true,
                                       SourceLocation loc = SourceLocation::current());
// tf.linalg.eigh (SelfAdjointEigV2): (eigenvalues ascending, eigenvectors as columns) of each
// symmetric matrix, reading its lower triangle; without compute_v the vectors are empty ([0]).
std::pair<Tensor, Tensor> self_adjoint_eig(const Tensor& x, bool compute_v = true,
                                           SourceLocation loc = SourceLocation::current());
// tf.linalg.eig / eigvals (Eig): (eigenvalues, eigenvectors as columns) of each general square
// matrix, complex64 for float32 or complex64 input, complex128 for float64 or complex128;
// eigenvalues in ascending order of magnitude, vectors of unit norm (TF's CPU conventions).
// Without compute_v the vectors are empty ([0]).
std::pair<Tensor, Tensor> eig(const Tensor& x, bool compute_v = true, SourceLocation loc = SourceLocation::current());
// tf.linalg.lstsq (MatrixSolveLs): the X minimizing ||matrix @ X - rhs||^2 + l2 ||X||^2;
// `l2_regularizer` a scalar of matrix's dtype. fast: the normal equations by Cholesky (the
// gradient exists); otherwise LAPACK's SVD-based minimum-norm solution (l2 ignored, no gradient).
Tensor matrix_solve_ls(const Tensor& matrix, const Tensor& rhs, const Tensor& l2_regularizer, bool fast = true,
                       SourceLocation loc = SourceLocation::current());

// tf.linalg.expm (MatrixExponential): the exponential of each square matrix (Pade approximants
// with scaling and squaring, computed in double precision).
Tensor matrix_exponential(const Tensor& x, SourceLocation loc = SourceLocation::current());

}  // namespace kiln
