// Algebraic simplification, limited to rewrites that give the same bits:
//   x*1, 1*x, x/1          -> x
//   x-0, integer x+0       -> x   (float x+0 is not x when x is -0.0;
//   float x+(-0.0)         -> x    x-(+0.0) and x+(-0.0) are)
//   transpose(transpose(x)) -> one transpose, or x
//   cast(cast(x)) where the inner cast loses nothing -> one cast, or x
//   cast(x) to x's dtype, reshape(x) to x's static shape -> x
//   reshape(reshape(x))     -> one reshape
// The constant must be a single element that does not widen x's shape.
#include <cmath>
#include <numeric>

#include "core/dtype_switch.h"
#include "ops/known_ops.h"
#include "passes/passes.h"
#include "passes/rewrite.h"

namespace kiln::passes {

namespace {

using graph::Node;
using graph::Value;

enum class Unit { One, PlusZero, MinusZero, Other };

// What a one-element numeric constant is, as far as these rules care.
Unit unit_of(const Tensor& t) {
  if (t.size() != 1 || t.dtype() == DType::Bool || !is_numeric(t.dtype()) || !is_core_dtype(t.dtype())) return Unit::Other;
  Unit u = Unit::Other;
  core::visit_numeric(t.dtype(), [&]<class T>() {
    T v = core::data_of<T>(t)[0];
    if (v == T(1)) u = Unit::One;
    else if (v == T(0)) u = std::signbit(static_cast<double>(v)) ? Unit::MinusZero : Unit::PlusZero;
  });
  return u;
}

// The other operand when one input of a binary node is a constant `want`
// that leaves the other unchanged in dtype and shape.
const Value* identity_operand(const graph::Graph& g, const Node& n, int const_side, Unit want) {
  const Value& c = n.inputs[const_side];
  const Value& x = n.inputs[1 - const_side];
  const Tensor* cv = const_value(*c.node);
  if (!cv) return nullptr;
  Unit u = unit_of(*cv);
  if (u != want) return nullptr;
  const schema::TensorType& xt = g.type_of(x);
  if (xt.dtype != n.outputs[0].dtype || !xt.shape.has_known_rank() || cv->shape().rank() > xt.shape.rank())
    return nullptr;
  return &x;
}

std::vector<int64_t> full_perm(const std::vector<int64_t>& perm, int rank) {
  if (!perm.empty()) return perm;
  std::vector<int64_t> p(static_cast<std::size_t>(rank));
  for (int i = 0; i < rank; ++i) p[static_cast<std::size_t>(i)] = rank - 1 - i;
  return p;
}

// Whether every value of `from` converts to `to` and back exactly, so a
// cast through `to` changes nothing.
bool lossless(DType from, DType to) {
  if (from == to) return true;
  switch (from) {
    case DType::Bool: return to != DType::String && to != DType::Resource;
    case DType::UInt8:
      return to == DType::Int32 || to == DType::Int64 || to == DType::Float32 || to == DType::Float64;
    case DType::Int32: return to == DType::Int64 || to == DType::Float64;
    case DType::Float32: return to == DType::Float64;
    default: return false;
  }
}

struct Rewriter {
  graph::Graph& g;
  std::vector<std::unique_ptr<Node>>& out;
  ValueMap& map;

  void replace(Node& n, const Value& v) { map.set({&n, 0}, v); }
  // A node of n's op and output types on `input` takes n's place.
  void replace_with(Node& n, Value input, schema::Attrs attrs) {
    auto r = g.new_node(*n.op, std::span<const Value>(&input, 1), std::move(attrs),
                        std::span<const schema::TensorType>(n.outputs.data(), n.outputs.size()), n.location,
                        n.name);
    map.set({&n, 0}, {r.get(), 0});
    out.push_back(std::move(r));
  }

  // Returns whether `n` was rewritten (it is then dead).
  bool visit(Node& n) {
    const detail::OpDef* op = n.op;
    if (op == &ops::mul_op()) {
      for (int side : {1, 0})
        if (const Value* x = identity_operand(g, n, side, Unit::One)) return replace(n, *x), true;
    } else if (op == &ops::real_div_op()) {
      if (const Value* x = identity_operand(g, n, 1, Unit::One)) return replace(n, *x), true;
    } else if (op == &ops::add_op()) {
      // An integer zero is PlusZero (only floats have a -0); a float x+0 is
      // not x for x = -0.0, x+(-0.0) is.
      const Unit zero = is_integer(n.outputs[0].dtype) ? Unit::PlusZero : Unit::MinusZero;
      for (int side : {1, 0})
        if (const Value* x = identity_operand(g, n, side, zero)) return replace(n, *x), true;
    } else if (op == &ops::sub_op()) {
      if (const Value* x = identity_operand(g, n, 1, Unit::PlusZero)) return replace(n, *x), true;
    } else if (op == &ops::transpose_op()) {
      const Node& inner = *n.inputs[0].node;
      if (inner.op != n.op) return false;
      const Shape& in_shape = g.type_of(inner.inputs[0]).shape;
      if (!in_shape.has_known_rank()) return false;
      int rank = in_shape.rank();
      std::vector<int64_t> p1 = full_perm(inner.attrs.get_ints("perm"), rank);
      std::vector<int64_t> p2 = full_perm(n.attrs.get_ints("perm"), rank);
      std::vector<int64_t> q(p2.size());
      bool identity = true;
      for (std::size_t k = 0; k < q.size(); ++k) {
        q[k] = p1[static_cast<std::size_t>(p2[k])];
        identity &= q[k] == static_cast<int64_t>(k);
      }
      if (identity) return replace(n, inner.inputs[0]), true;
      replace_with(n, inner.inputs[0], schema::Attrs{{"perm", q}});
      return true;
    } else if (op == &ops::cast_op()) {
      DType to = n.attrs.get_dtype("dtype");
      const Node& inner = *n.inputs[0].node;
      if (g.type_of(n.inputs[0]).dtype == to) return replace(n, n.inputs[0]), true;
      if (inner.op != n.op) return false;
      const Value& x = inner.inputs[0];
      DType from = g.type_of(x).dtype;
      if (!lossless(from, inner.outputs[0].dtype)) return false;
      if (from == to) return replace(n, x), true;
      replace_with(n, x, schema::Attrs{{"dtype", to}});
      return true;
    } else if (op == &ops::reshape_op()) {
      const Node& inner = *n.inputs[0].node;
      const Shape& in = g.type_of(n.inputs[0]).shape;
      if (in.is_fully_defined() && in == n.outputs[0].shape) return replace(n, n.inputs[0]), true;
      if (inner.op != n.op) return false;
      replace_with(n, inner.inputs[0], n.attrs);
      return true;
    }
    return false;
  }
};

}  // namespace

bool simplify(graph::Graph& g) {
  std::vector<std::unique_ptr<Node>> nodes = g.take_nodes(), out, dead;
  ValueMap map;
  Rewriter r{g, out, map};
  for (auto& n : nodes) {
    map.apply(*n);
    if (n->is_stateful() || n->outputs.size() != 1 || !r.visit(*n)) out.push_back(std::move(n));
    else dead.push_back(std::move(n));
  }
  map.apply_results(g);
  g.set_nodes(std::move(out));
  return !dead.empty();
}

}  // namespace kiln::passes
