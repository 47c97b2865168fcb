// Ops that change only the shape: Reshape, ExpandDims, Squeeze (views of the
// input's buffer) and Transpose (a copy).
#include <algorithm>
#include <vector>

#include "ops/grad_util.h"
#include "core/parallel.h"
#include "kiln/array.h"
#include "ops/array_util.h"
#include "runtime/dispatch.h"
#include "ops/known_ops.h"

namespace kiln {
namespace ops {

namespace {

// The output of a view op shares the input's buffer: no copy, and the input
// can no longer be overwritten in place while the view lives.
void set_view(schema::KernelContext& c, const Shape& shape) {
  c.outputs[0] = core::make_tensor_view(c.inputs[0].dtype(), shape, c.inputs[0].impl()->buffer);
}

// ---- Reshape ----------------------------------------------------------------
// The target with its -1 resolved against `n` elements (n >= 0), or the
// target unchanged when n is unknown.
struct ReshapeTarget {
  Shape shape;
  int unknown = -1;          // index of the -1, if any
  int64_t known_product = 1;  // product of the other dims
  bool too_large = false;     // a dim or the product is past Shape::kMaxElements
};

ReshapeTarget reshape_target(const std::vector<int64_t>& dims) {
  ReshapeTarget t;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) t.unknown = static_cast<int>(i);
    else if (dims[i] > Shape::kMaxElements || __builtin_mul_overflow(t.known_product, dims[i], &t.known_product) ||
             t.known_product > Shape::kMaxElements)
      t.too_large = true;
  }
  // Every negative dim reads as unknown (infer rejects all but -1).
  t.shape = Shape(std::span<const int64_t>(dims));
  if (t.unknown >= 0) t.shape[t.unknown] = -1;
  return t;
}

void reshape_infer(schema::InferContext& c) {
  const std::vector<int64_t>& dims = c.attrs().get_ints("shape");
  const Shape& in = c.shape(0);
  int unknowns = 0;
  for (int64_t d : dims) {
    if (d < -1) c.fail("the shape {} has a negative dim {}", ints_to_string(dims), d);
    unknowns += d == -1;
  }
  if (unknowns > 1)
    c.fail("the shape {} may have at most one -1 (the dim to infer)", ints_to_string(dims));
  if (dims.size() > static_cast<std::size_t>(Shape::kMaxRank))
    c.fail("the shape {} has rank {}, more than Kiln supports ({})", ints_to_string(dims),
           dims.size(), Shape::kMaxRank);
  ReshapeTarget t = reshape_target(dims);
  // Checked before comparing counts: a product that wrapped could match.
  if (t.too_large)
    c.fail("the shape {} has more elements than a tensor may have (2^48 = {})", ints_to_string(dims),
           Shape::kMaxElements);
  int64_t n = in.num_elements();
  if (n < 0) {  // the input's size is not known yet: the -1 stays unknown
    c.add_output(c.dtype(0), t.shape);
    return;
  }
  if (t.unknown < 0) {
    if (t.known_product != n)
      c.fail("cannot reshape a tensor of shape {} ({} elements) into shape {} ({} elements)",
             in.to_string(), n, ints_to_string(dims), t.known_product);
  } else {
    if (t.known_product == 0)
      c.fail("cannot infer the -1 in shape {} for a tensor of shape {} ({} elements): the other "
             "dims have 0 elements",
             ints_to_string(dims), in.to_string(), n);
    if (n % t.known_product != 0)
      c.fail("cannot reshape a tensor of shape {} ({} elements) into shape {}: {} is not a "
             "multiple of {}",
             in.to_string(), n, ints_to_string(dims), n, t.known_product);
    t.shape[t.unknown] = n / t.known_product;
  }
  c.add_output(c.dtype(0), t.shape);
}

void reshape_kernel(schema::KernelContext& c) {
  ReshapeTarget t = reshape_target(c.attrs.get_ints("shape"));
  if (t.unknown >= 0)
    t.shape[t.unknown] = t.known_product == 0 ? 0 : c.inputs[0].size() / t.known_product;
  set_view(c, t.shape);
}

std::vector<schema::OpSample> reshape_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, schema::Attrs{{"shape", std::vector<int64_t>{3, -1}}}},
          {{constant({1, 2, 3, 4})}, schema::Attrs{{"shape", std::vector<int64_t>{2, 1, 2}}}}};
}

// Reshape, ExpandDims and Squeeze only relabel dims: the gradient takes the
// input's shape back.
void relabel_grad(schema::GradContext& c) { c.set(0, reshape_like(c.grad(0), c.inputs[0])); }

constexpr detail::OpDef kReshape{.name = "Reshape", .infer = reshape_infer, .kernel = reshape_kernel,
                                 .flags = schema::kSetsOwnOutputs | schema::kShapeFromShapes,
                                 .samples = reshape_samples, .gradient = relabel_grad};

// ---- ExpandDims -----------------------------------------------------------------
Shape expand_shape(const Shape& in, int64_t axis) {
  Shape s = in;
  s.insert(static_cast<int>(axis < 0 ? axis + in.rank() + 1 : axis), 1);
  return s;
}

void expand_dims_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  if (!in.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  int64_t axis = c.attrs().get_int("axis");
  int r = in.rank();
  if (axis < -r - 1 || axis > r)
    c.fail("axis {} is out of range for input of rank {} (expected a value in [{}, {}])", axis, r,
           -r - 1, r);
  if (r >= Shape::kMaxRank)
    c.fail("input of shape {} already has the largest rank Kiln supports ({})", in.to_string(),
           Shape::kMaxRank);
  c.add_output(c.dtype(0), expand_shape(in, axis));
}

void expand_dims_kernel(schema::KernelContext& c) {
  set_view(c, expand_shape(c.in_shape(0), c.attrs.get_int("axis")));
}

std::vector<schema::OpSample> expand_dims_samples() {
  return {{{constant({1.f, 2.f})}, schema::Attrs{{"axis", int64_t(0)}}},
          {{constant({{1, 2}, {3, 4}})}, schema::Attrs{{"axis", int64_t(-1)}}}};
}

constexpr detail::OpDef kExpandDims{.name = "ExpandDims", .infer = expand_dims_infer, .kernel = expand_dims_kernel,
                                    .flags = schema::kSetsOwnOutputs | schema::kShapeFromShapes,
                                    .samples = expand_dims_samples, .gradient = relabel_grad};

// ---- Squeeze --------------------------------------------------------------------
// Dims to drop: the listed axes, or every dim of size 1 (axes empty).
Shape squeeze_shape(const Shape& in, const std::vector<int64_t>& axes) {
  bool drop[Shape::kMaxRank] = {};
  for (int i = 0; i < in.rank(); ++i) drop[i] = axes.empty() && in[i] == 1;
  for (int64_t a : axes) drop[wrap_axis(a, in.rank())] = true;
  Shape s;
  for (int i = 0; i < in.rank(); ++i)
    if (!drop[i]) s.push_back(in[i]);
  return s;
}

void squeeze_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  const std::vector<int64_t>& axes = c.attrs().get_ints("axes");
  if (!in.has_known_rank()) {
    c.add_output(c.dtype(0), Shape::unknown_rank());
    return;
  }
  int r = in.rank();
  for (int64_t a : axes) {
    int k = wrap_axis(a, r);
    if (k < 0)
      c.fail("axis {} is out of range for input of rank {} (axes {}; expected values in [{}, {}))",
             a, r, ints_to_string(axes), -r, r);
    // An unknown dim named here is taken to be 1, as TF does.
    if (in[k] >= 0 && in[k] != 1)
      c.fail("cannot squeeze axis {} of input shape {}: its size is {}, not 1", a, in.to_string(),
             in[k]);
  }
  if (axes.empty()) {
    for (int i = 0; i < r; ++i)
      if (in[i] < 0) {  // whether it is 1 decides the output rank
        c.add_output(c.dtype(0), Shape::unknown_rank());
        return;
      }
  }
  c.add_output(c.dtype(0), squeeze_shape(in, axes));
}

void squeeze_kernel(schema::KernelContext& c) {
  set_view(c, squeeze_shape(c.in_shape(0), c.attrs.get_ints("axes")));
}

std::vector<schema::OpSample> squeeze_samples() {
  return {{{constant({{{1.f}, {2.f}}})}, schema::Attrs{{"axes", std::vector<int64_t>{}}}},
          {{constant({{{1.f, 2.f}}})}, schema::Attrs{{"axes", std::vector<int64_t>{1}}}}};
}

constexpr detail::OpDef kSqueeze{.name = "Squeeze", .infer = squeeze_infer, .kernel = squeeze_kernel,
                                 .flags = schema::kSetsOwnOutputs | schema::kShapeFromShapes,
                                 .samples = squeeze_samples, .gradient = relabel_grad};

// ---- EnsureShape ----------------------------------------------------------------
// tf.ensure_shape: x itself, its shape checked against `shape` (-1: any size)
// when the op runs; statically, the shape the two agree on, so a value whose
// static shape was lost (a While gradient's stacked variable) gets it back.
Shape expected_shape(const std::vector<int64_t>& dims) {
  Shape s;
  for (int64_t d : dims) s.push_back(d < 0 ? None : d);
  return s;
}

bool compatible(const Shape& actual, const Shape& expected) {
  if (actual.rank() != expected.rank()) return false;
  for (int i = 0; i < actual.rank(); ++i)
    if (actual[i] >= 0 && expected[i] >= 0 && actual[i] != expected[i]) return false;
  return true;
}

void ensure_shape_infer(schema::InferContext& c) {
  const Shape expected = expected_shape(c.attrs().get_ints("shape"));
  const Shape& in = c.shape(0);
  if (!in.has_known_rank()) {
    c.add_output(c.dtype(0), expected);
    return;
  }
  if (!compatible(in, expected))
    c.fail("Shape of tensor {} is not compatible with expected shape {}", in.to_string(), expected.to_string());
  Shape merged = in;
  for (int i = 0; i < merged.rank(); ++i)
    if (merged[i] < 0) merged[i] = expected[i];
  c.add_output(c.dtype(0), merged);
}

void ensure_shape_kernel(schema::KernelContext& c) {
  const Shape expected = expected_shape(c.attrs.get_ints("shape"));
  if (!compatible(c.in_shape(0), expected))
    throw InvalidArgument(fmt::format("{}: Shape of tensor {} is not compatible with expected shape {}", c.op.name,
                                      c.in_shape(0).to_string(), expected.to_string()));
  set_view(c, c.in_shape(0));
}

std::vector<schema::OpSample> ensure_shape_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, schema::Attrs{{"shape", std::vector<int64_t>{-1, 3}}}},
          {{constant({1, 2})}, schema::Attrs{{"shape", std::vector<int64_t>{2}}}}};
}

constexpr detail::OpDef kEnsureShape{.name = "EnsureShape", .infer = ensure_shape_infer,
                                     .kernel = ensure_shape_kernel,
                                     .flags = schema::kSetsOwnOutputs | schema::kShapeFromShapes,
                                     .samples = ensure_shape_samples, .gradient = relabel_grad};

// ---- Transpose ------------------------------------------------------------------
void transpose_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  const std::vector<int64_t>& perm = c.attrs().get_ints("perm");
  if (!in.has_known_rank()) {
    if (perm.empty()) {
      c.add_output(c.dtype(0), Shape::unknown_rank());
    } else {
      c.add_output(c.dtype(0), Shape(std::vector<int64_t>(perm.size(), -1)));
    }
    return;
  }
  int r = in.rank();
  if (perm.empty()) {
    Shape s;
    for (int i = r - 1; i >= 0; --i) s.push_back(in[i]);
    c.add_output(c.dtype(0), s);
    return;
  }
  if (static_cast<int>(perm.size()) != r)
    c.fail("perm {} has {} entries but the input of shape {} has rank {}", ints_to_string(perm),
           perm.size(), in.to_string(), r);
  bool seen[Shape::kMaxRank] = {};
  Shape s;
  for (int64_t p : perm) {
    if (p < 0 || p >= r)
      c.fail("perm {} is not a permutation of [0, {}): {} is out of range", ints_to_string(perm), r, p);
    if (seen[p]) c.fail("perm {} is not a permutation of [0, {}): {} is repeated", ints_to_string(perm), r, p);
    seen[p] = true;
    s.push_back(in[static_cast<int>(p)]);
  }
  c.add_output(c.dtype(0), s);
}

// Tiles of kTile x kTile keep both the reads and the writes of a 2-D
// transpose within cache lines.
constexpr int64_t kTile = 32;

template <class E>
void transpose_typed(const E* x, const Shape& in, const std::vector<int64_t>& perm_attr, E* out) {
  int r = in.rank();
  int64_t n = in.num_elements();
  if (n == 0) return;
  // Drop size-1 dims, then merge runs of input dims that stay adjacent and in
  // order in the output: (N, H, W, C) -> (N, C, H, W) becomes (N, HW, C) ->
  // (N, C, HW).
  int64_t perm[Shape::kMaxRank], dims[Shape::kMaxRank];
  int kept_index[Shape::kMaxRank];
  int kept = 0;
  for (int i = 0; i < r; ++i) kept_index[i] = in[i] == 1 ? -1 : kept++;
  int pr = 0;
  for (int k = 0; k < r; ++k) {
    int src = perm_attr.empty() ? r - 1 - k : static_cast<int>(perm_attr[k]);
    if (kept_index[src] >= 0) perm[pr++] = kept_index[src];
  }
  for (int i = 0; i < r; ++i)
    if (kept_index[i] >= 0) dims[kept_index[i]] = in[i];
  // Merge: output positions k, k+1 with perm[k+1] == perm[k] + 1.
  int64_t mdims[Shape::kMaxRank], mperm[Shape::kMaxRank];
  int group_of[Shape::kMaxRank];  // input dim -> merged group
  int m = 0;
  int64_t out_groups[Shape::kMaxRank];  // output order: first input dim of each group
  for (int k = 0; k < pr; ++k) {
    if (k > 0 && perm[k] == perm[k - 1] + 1) continue;
    out_groups[m++] = perm[k];
  }
  // Groups in input order.
  int64_t starts[Shape::kMaxRank];
  std::copy(out_groups, out_groups + m, starts);
  std::sort(starts, starts + m);
  for (int g = 0; g < m; ++g) {
    mdims[g] = 1;
    for (int i = static_cast<int>(starts[g]); i < pr && (g + 1 == m || i < starts[g + 1]); ++i) {
      mdims[g] *= dims[i];
      group_of[i] = g;
    }
  }
  for (int k = 0; k < m; ++k) mperm[k] = group_of[out_groups[k]];
  bool identity = true;
  for (int k = 0; k < m; ++k) identity &= mperm[k] == k;
  if (identity) {
    core::parallel_for(n, [&](int64_t b, int64_t e) { std::copy(x + b, x + e, out + b); });
    return;
  }
  // Now m >= 2. Input strides of the output's dims.
  int64_t in_stride[Shape::kMaxRank], stride = 1;
  for (int g = m - 1; g >= 0; --g) {
    in_stride[g] = stride;
    stride *= mdims[g];
  }
  int64_t od[Shape::kMaxRank], os[Shape::kMaxRank];
  for (int k = 0; k < m; ++k) {
    od[k] = mdims[mperm[k]];
    os[k] = in_stride[mperm[k]];
  }
  // Output planes (od[m-2], od[m-1]), walked in tiles of rows.
  int64_t rows = od[m - 2], cols = od[m - 1], s_row = os[m - 2], s_col = os[m - 1];
  int64_t planes = n / (rows * cols);
  int64_t row_tiles = (rows + kTile - 1) / kTile;
  core::parallel_for(
      planes * row_tiles,
      [&](int64_t b, int64_t e) {
        for (int64_t item = b; item < e; ++item) {
          int64_t plane = item / row_tiles, r0 = (item % row_tiles) * kTile;
          int64_t base = 0, rest = plane;
          for (int k = m - 3; k >= 0; --k) {
            base += (rest % od[k]) * os[k];
            rest /= od[k];
          }
          const E* src = x + base;
          E* dst = out + plane * rows * cols;
          int64_t r1 = std::min(rows, r0 + kTile);
          for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
            int64_t c1 = std::min(cols, c0 + kTile);
            for (int64_t i = r0; i < r1; ++i)
              copy_strided(src + i * s_row + c0 * s_col, s_col, c1 - c0, dst + i * cols + c0);
          }
        }
      },
      std::max<int64_t>(1, core::kParallelGrain / (kTile * cols)));
}

void transpose_kernel(schema::KernelContext& c) {
  visit_element(c.inputs[0].dtype(), [&]<class E>() {
    transpose_typed(c.in<E>(0), c.in_shape(0), c.attrs.get_ints("perm"), c.out<E>(0));
  });
}

std::vector<schema::OpSample> transpose_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, schema::Attrs{{"perm", std::vector<int64_t>{}}}},
          {{constant({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})},
           schema::Attrs{{"perm", std::vector<int64_t>{2, 0, 1}}}}};
}

// The inverse permutation (an empty perm reverses the dims: its own inverse).
void transpose_grad(schema::GradContext& c) {
  const std::vector<int64_t>& perm = c.attrs.get_ints("perm");
  std::vector<int64_t> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<int64_t>(i);
  c.set(0, transpose(c.grad(0), inverse));
}

constexpr detail::OpDef kTranspose{.name = "Transpose", .infer = transpose_infer, .kernel = transpose_kernel,
                                   .flags = schema::kShapeFromShapes, .samples = transpose_samples,
                                   .gradient = transpose_grad};

// ---- Shape: tf.shape, the dims as an int32 vector (known when the graph runs) ----
void shape_infer(schema::InferContext& c) {
  const Shape& in = c.shape(0);
  c.add_output(DType::Int32, Shape{in.has_known_rank() ? in.rank() : -1});
}

void shape_kernel(schema::KernelContext& c) {
  const Shape& in = c.in_shape(0);
  int32_t* out = c.out<int32_t>(0);
  for (int i = 0; i < in.rank(); ++i) out[i] = static_cast<int32_t>(in[i]);
}

std::vector<schema::OpSample> shape_samples() {
  return {{{constant({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}})}, {}}, {{constant(7)}, {}}};
}

constexpr detail::OpDef kShape{.name = "Shape", .infer = shape_infer, .kernel = shape_kernel,
                               .flags = schema::kNotDifferentiable, .samples = shape_samples};

}  // namespace

void register_shape_ops(schema::OpRegistry& r) {
  for (const detail::OpDef* op : {&kReshape, &kExpandDims, &kSqueeze, &kEnsureShape, &kTranspose, &kShape})
    r.add(*op);
}

}  // namespace ops

Tensor reshape(const Tensor& x, const Shape& shape, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kReshape, in, schema::Attrs{{"shape", shape.to_vector()}}, loc);
}

Tensor transpose(const Tensor& x, const std::vector<int64_t>& perm, SourceLocation loc) {
  const Tensor in[] = {x};
  std::vector<int64_t> p = perm;
  if (p.empty() && x.defined() && x.shape().has_known_rank())  // spelled out for the graph text
    for (int i = x.rank() - 1; i >= 0; --i) p.push_back(i);
  return runtime::dispatch1(ops::kTranspose, in, schema::Attrs{{"perm", std::move(p)}}, loc);
}

Tensor shape_of(const Tensor& x, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kShape, in, schema::Attrs{}, loc);
}

Tensor ensure_shape(const Tensor& x, const Shape& shape, SourceLocation loc) {
  const Tensor in[] = {x};
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.rank(); ++i) dims.push_back(shape[i] < 0 ? -1 : shape[i]);
  return runtime::dispatch1(ops::kEnsureShape, in, schema::Attrs{{"shape", std::move(dims)}}, loc);
}

Tensor expand_dims(const Tensor& x, int64_t axis, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kExpandDims, in, schema::Attrs{{"axis", axis}}, loc);
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes, SourceLocation loc) {
  const Tensor in[] = {x};
  return runtime::dispatch1(ops::kSqueeze, in, schema::Attrs{{"axes", axes}}, loc);
}

}  // namespace kiln

// The handles the passes compare nodes with (ops/known_ops.h).
namespace kiln::ops {
const detail::OpDef& reshape_op() { return ops::kReshape; }
const detail::OpDef& transpose_op() { return ops::kTranspose; }
}  // namespace kiln::ops
