#pragma once
// Elementwise math: arithmetic, unary functions, comparisons, logic, where
// and clip, plus the C++ operators on tensors.
//
// Binary ops broadcast as NumPy does and take Operands: a C++ number is
// weakly typed and takes the tensor's dtype (`x * 2` on float32 stays
// float32); a number the dtype cannot hold exactly (`x + 1.5` on int32) is an
// InvalidArgument, and so are two tensors of different dtypes (convert one
// with kiln::cast). Unary ops take their tensor by value: passing a temporary
// (`kiln::exp(x * 2)`) lets the op write its result over it.
//
// Inside namespace kiln these names hide the <cmath> ones of the same name
// (exp, log, abs, pow, ...): kiln's own code must call std::exp etc.
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/reduce.h"
#include "kiln/tensor.h"

namespace kiln {

// ---- Arithmetic (numbers; add also concatenates strings) ----------------
Tensor add(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor subtract(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor multiply(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
// True division, as tf.math.truediv: int32/int64 inputs are converted to
// float64 and uint8 to float32 first; floats keep their dtype.
Tensor divide(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
// TensorFlow's // and % (tf.math.floordiv / floormod): the quotient rounds
// toward -inf and the remainder takes the divisor's sign. Floats:
// floordiv is floor(x / y) (floordiv(1, 0.1) = 10, floordiv(inf, 8) = inf)
// and mod is fmod(x, y) moved to y's sign (mod(-0, 1) = -0, mod(x, 0) =
// nan). An integer y holding 0 is InvalidArgument ("integer division by
// zero"), as TF.
Tensor floordiv(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor mod(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
// C's / and % (tf.truncatediv / truncatemod): the quotient rounds toward 0 and
// the remainder takes x's sign. truncatediv takes integers only; truncatemod
// of floats is fmod. A zero integer divisor is InvalidArgument.
Tensor truncatediv(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor truncatemod(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
// (x - y)^2 (tf.math.squared_difference); its gradient is 2 (x - y).
Tensor squared_difference(const Operand& x, const Operand& y,
                          SourceLocation loc = SourceLocation::current());
// x ** y. For integers, a negative exponent gives 0 (1 or -1 for bases 1
// and -1), and overflow wraps.
Tensor pow(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
// NaN-propagating elementwise max / min.
Tensor maximum(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor minimum(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());

// ---- Unary ------------------------------------------------------------------
// On numbers (ints and floats). negative is IEEE negation on floats
// (negative(+0) = -0); sign gives -1, 0 or 1 (+0 for both zeros, nan for nan)
// and has a zero gradient, as TF; round rounds half to even (tf.math.round:
// round(2.5) = 2, round(-0.4) = -0), integers unchanged.
Tensor negative(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor abs(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor sign(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor round(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor square(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor relu(Tensor x, SourceLocation loc = SourceLocation::current());
// On floats only (an int tensor is an InvalidArgument: cast it first).
// floor, ceil and rint (half to even, as round) have no gradient, as in TF.
Tensor floor(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor ceil(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor rint(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor sqrt(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor rsqrt(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor exp(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor log(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor log1p(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor tanh(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor sigmoid(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor sin(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor cos(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor erf(Tensor x, SourceLocation loc = SourceLocation::current());
// Activations, as tf.nn's: softplus log(1 + e^x), softsign x / (1 + |x|),
// elu (x, or e^x - 1 below 0), selu (scaled elu, Klambauer et al.).
Tensor softplus(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor softsign(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor elu(Tensor x, SourceLocation loc = SourceLocation::current());
Tensor selu(Tensor x, SourceLocation loc = SourceLocation::current());

// Running sums and products along `axis` (tf.math.cumsum / cumprod): with
// `exclusive` each element leaves itself out (the first is 0 / 1), with
// `reverse` they run from the end. Floats and int32/int64 (which wrap).
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
              SourceLocation loc = SourceLocation::current());
Tensor cumprod(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false,
               SourceLocation loc = SourceLocation::current());

// The k largest values along the last axis and their int32 indices
// (tf.math.top_k, sorted), ties in index order, NaN above every number; the
// values' gradient flows back to where they came from.
std::pair<Tensor, Tensor> top_k(const Tensor& x, int64_t k = 1, SourceLocation loc = SourceLocation::current());
// x sorted along `axis` (ascending unless `descending`), and the int32
// indices that sort it (tf.sort / tf.argsort; stable).
Tensor sort(const Tensor& x, int64_t axis = -1, bool descending = false,
            SourceLocation loc = SourceLocation::current());
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false,
               SourceLocation loc = SourceLocation::current());

// Segment reductions (tf.math): row i of `data` (the dims segment_ids has)
// goes to segment segment_ids[i]. unsorted_*: any order, `num_segments`
// segments, a negative id drops its row, an id >= num_segments is an
// InvalidArgument; empty segments are 0 (sum, mean) or the lowest value (max).
// segment_*: ids a sorted vector of non-negative ints, ids[-1] + 1 segments.
// The means divide by max(count, 1).
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            SourceLocation loc = SourceLocation::current());
Tensor unsorted_segment_max(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            SourceLocation loc = SourceLocation::current());
Tensor unsorted_segment_mean(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                             SourceLocation loc = SourceLocation::current());
Tensor segment_sum(const Tensor& data, const Tensor& segment_ids, SourceLocation loc = SourceLocation::current());
Tensor segment_mean(const Tensor& data, const Tensor& segment_ids, SourceLocation loc = SourceLocation::current());

// Norms and clipping, as tf.nn.l2_normalize, tf.clip_by_norm,
// tf.linalg.global_norm and tf.clip_by_global_norm (src/ops/norms.cpp).
// x / sqrt(max(sum(x^2), epsilon)) over `axes`.
Tensor l2_normalize(const Tensor& x, const Axes& axes = {}, double epsilon = 1e-12,
                    SourceLocation loc = SourceLocation::current());
// t scaled so that its L2 norm over `axes` is at most clip_norm.
Tensor clip_by_norm(const Tensor& t, const Operand& clip_norm, const Axes& axes = {},
                    SourceLocation loc = SourceLocation::current());
// sqrt of the sum of every element squared; null tensors (missing gradients)
// are skipped.
Tensor global_norm(const std::vector<Tensor>& tensors, SourceLocation loc = SourceLocation::current());
// Every tensor scaled by clip_norm / max(global_norm, clip_norm), and the
// global norm; NaN everywhere when the norm is inf or NaN, as TF.
std::pair<std::vector<Tensor>, Tensor> clip_by_global_norm(const std::vector<Tensor>& tensors, double clip_norm,
                                                             SourceLocation loc = SourceLocation::current());

// Limits x to [min, max] (min(max(x, min), max), broadcasting all three).
Tensor clip(Tensor x, const Operand& min, const Operand& max,
            SourceLocation loc = SourceLocation::current());

// ---- Comparisons (bool results) -------------------------------------------
// equal/not_equal take numbers, bools and strings; the others numbers.
Tensor equal(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor not_equal(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor less(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor less_equal(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor greater(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor greater_equal(const Operand& x, const Operand& y,
                     SourceLocation loc = SourceLocation::current());

// ---- Logic (bool tensors only) ---------------------------------------------
Tensor logical_and(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor logical_or(const Operand& x, const Operand& y, SourceLocation loc = SourceLocation::current());
Tensor logical_not(Tensor x, SourceLocation loc = SourceLocation::current());

// Elementwise condition ? x : y, as tf.where(condition, x, y): the three
// broadcast together; a C++ number for x or y takes the other's dtype.
Tensor where(const Tensor& condition, const Operand& x, const Operand& y,
             SourceLocation loc = SourceLocation::current());

// ---- Operators ----------------------------------------------------------------
// They record the source line of the expression (carried by the Operand).
Tensor operator+(const Operand& x, const Operand& y);
Tensor operator-(const Operand& x, const Operand& y);
Tensor operator*(const Operand& x, const Operand& y);
Tensor operator/(const Operand& x, const Operand& y);  // divide (true division)
Tensor operator%(const Operand& x, const Operand& y);  // mod (Python's %)
Tensor operator-(const Operand& x);                    // negative
// Elementwise comparisons: they return bool tensors, not a C++ bool.
Tensor operator==(const Operand& x, const Operand& y);
Tensor operator!=(const Operand& x, const Operand& y);
Tensor operator<(const Operand& x, const Operand& y);
Tensor operator<=(const Operand& x, const Operand& y);
Tensor operator>(const Operand& x, const Operand& y);
Tensor operator>=(const Operand& x, const Operand& y);
// Logic on bools, bits on integers (more operators: kiln/bitwise.h).
Tensor operator&(const Operand& x, const Operand& y);
Tensor operator|(const Operand& x, const Operand& y);
// `!t` is logical_not for a Tensor only (it takes the Tensor exactly: any
// conversion would tie with the built-in `!` on an explicit operator bool,
// e.g. a Variable's `if (!v)` null test). An operator cannot take a default
// argument, so this one records no source line.
template <class T>
  requires std::is_same_v<std::remove_cvref_t<T>, Tensor>
Tensor operator!(T&& x) {
  return logical_not(std::forward<T>(x), SourceLocation{});
}

}  // namespace kiln
