#pragma once
// Control flow on tensor values (DESIGN.md §8): kiln::cond,
// kiln::while_loop and kiln::for_range.
//
//   Tensor y = kiln::cond(x > 0, [&] { return x * 2; }, [&] { return -x; });
//   auto [n, steps] = kiln::while_loop(
//       [](const Tensor& n, const Tensor&) { return n != 1; },
//       [](const Tensor& n, const Tensor& s) {
//         return std::tuple{kiln::where(n % 2 == 0, kiln::floordiv(n, 2), 3 * n + 1), s + 1};
//       },
//       std::tuple{kiln::constant(27), kiln::constant(0)});
//
// Eagerly (and with a C++ bool, or a concrete predicate while tracing) they
// are plain C++ control flow and add no op. While kiln::function traces,
// cond with a symbolic predicate traces both branches into nested graphs and
// emits one "If" op; while_loop traces cond_fn and body_fn into nested graphs
// and emits one "While" op, so the graph does not grow with the trip count.
// C++ side effects in the functions (std::cout) happen while tracing only;
// kiln::print and variable updates happen on every execution of the branch
// or iteration that runs them.
#include <optional>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/array.h"
#include "kiln/detail/trace.h"
#include "kiln/error.h"
#include "kiln/tensor.h"

namespace kiln {

// Options of while_loop.
struct WhileOptions {
  // One entry per loop variable (per element of a tuple or pair, else one):
  // the shapes that variable may take, kiln::None for a dim that may vary.
  // Without one, a variable keeps its entry shape except that a dim the body
  // changes becomes unknown in the traced loop. A Tensor variable only.
  std::vector<std::optional<Shape>> shape_invariants;
  // At most this many iterations (an int32 scalar tensor); undefined: no limit.
  Tensor maximum_iterations;
};

namespace detail {

// A non-owning reference to a branch, loop condition or loop body: called
// with the loop variables' leaves (none for branches), it flattens what the
// user's function returned into `out`.
struct FlatFnRef {
  void* object;
  void (*call)(void* object, std::span<const Tensor> leaves, ResultFlattener& out);
  template <class L> explicit FlatFnRef(L& l)
      : object(&l), call([](void* o, std::span<const Tensor> leaves, ResultFlattener& out) {
          (*static_cast<L*>(o))(leaves, out);
        }) {}
};

// Whether ops go to a dispatch handler (kiln::function is tracing) rather
// than running now.
bool control_flow_intercepted();
// The value of a concrete predicate: a bool tensor with one element, else
// InvalidArgument naming `what`.
bool predicate_value(const Tensor& pred, const char* what);
// cond under a dispatch handler. A symbolic pred: traces both branches into
// nested graphs and emits one If op. A concrete pred: runs the chosen branch.
// Returns the leaves; `sizes` receives the result structure.
std::vector<Tensor> cond_flat(const Tensor& pred, FlatFnRef then_fn, FlatFnRef else_fn,
                              std::vector<int64_t>& sizes, const SourceLocation& loc);
// Runs the loop (eagerly, or as one While op while tracing) on flattened loop
// variables with structure `sizes`; returns the final leaves.
// What while_loop knows about its flattened loop variables.
struct LoopSpec {
  // Leaves that may change rank (their entry shape only gives the dtype).
  std::vector<std::size_t> any_rank;
  // Leaves with a shape invariant, and the loop variable each belongs to.
  struct Invariant {
    std::size_t leaf;
    std::size_t var;
    Shape shape;
  };
  std::vector<Invariant> invariants;
  Tensor maximum_iterations;  // undefined: no limit
};
std::vector<Tensor> while_loop_flat(FlatFnRef cond_fn, FlatFnRef body_fn, std::vector<Tensor> vars,
                                    const std::vector<int64_t>& sizes, const LoopSpec& spec,
                                    const SourceLocation& loc);
// Checks the options against the loop variables (one per top-level variable:
// whether it is a Tensor and its first leaf) and fills `spec`.
void apply_while_options(const WhileOptions& options, std::span<const char> is_tensor,
                         std::span<const std::size_t> first_leaf, LoopSpec& spec);

template <class T> struct IsTupleLike : std::false_type {};
template <class... Ts> struct IsTupleLike<std::tuple<Ts...>> : std::true_type {};
template <class A, class B> struct IsTupleLike<std::pair<A, B>> : std::true_type {};

// fn(vars...) for a tuple or pair of loop variables, fn(vars) otherwise.
template <class F, class V> decltype(auto) call_with_vars(F& fn, const V& vars) {
  if constexpr (IsTupleLike<V>::value) return std::apply(fn, vars);
  else return fn(vars);
}

// Flattens the loop variables, noting where each top-level one starts.
template <class V>
void flatten_vars(const V& vars, ResultFlattener& flat, std::vector<char>& is_tensor,
                  std::vector<std::size_t>& first_leaf) {
  auto one = [&](const auto& x) {
    is_tensor.push_back(std::is_same_v<std::remove_cvref_t<decltype(x)>, Tensor>);
    first_leaf.push_back(flat.leaves.size());
    Traits<decltype(x)>::flatten_result(x, flat);
  };
  if constexpr (IsTupleLike<V>::value) std::apply([&](const auto&... x) { (one(x), ...); }, vars);
  else one(vars);
}

template <class V> V rebuild_vars(std::span<const Tensor> leaves, const std::vector<int64_t>& sizes) {
  std::vector<Tensor> copies(leaves.begin(), leaves.end());
  ResultReader reader(copies, sizes);
  return V(Traits<V>::unflatten(reader));
}

}  // namespace detail

// tf.cond: then_fn() when pred is true, else else_fn(). Both return the same
// type (a Tensor, a tuple/pair/vector/array/optional of tensors, or void);
// while tracing with a symbolic pred, their tensors must also agree in number
// and dtype (shapes may differ: the differing dims become unknown).
template <class Then, class Else>
auto cond(const Tensor& pred, Then&& then_fn, Else&& else_fn,
          SourceLocation loc = SourceLocation::current()) {
  using R = std::remove_cvref_t<std::invoke_result_t<Then&>>;
  static_assert(std::is_same_v<R, std::remove_cvref_t<std::invoke_result_t<Else&>>>,
                "kiln::cond: then_fn and else_fn must return the same type");
  if (!detail::control_flow_intercepted()) {
    if constexpr (std::is_void_v<R>) {
      if (detail::predicate_value(pred, "cond")) then_fn();
      else else_fn();
      return;
    } else {
      if (detail::predicate_value(pred, "cond")) return R(then_fn());
      return R(else_fn());
    }
  }
  auto branch = [](auto& fn) {
    return [&fn](std::span<const Tensor>, detail::ResultFlattener& out) {
      if constexpr (std::is_void_v<R>) {
        fn();
      } else {
        R r = fn();
        detail::Traits<R>::flatten_result(r, out);
      }
    };
  };
  auto then_call = branch(then_fn);
  auto else_call = branch(else_fn);
  std::vector<int64_t> sizes;
  std::vector<Tensor> leaves =
      detail::cond_flat(pred, detail::FlatFnRef(then_call), detail::FlatFnRef(else_call), sizes, loc);
  if constexpr (!std::is_void_v<R>) {
    detail::ResultReader reader(leaves, sizes);
    return R(detail::Traits<R>::unflatten(reader));
  }
}

// With a C++ bool: plain `if` (no op, even while tracing).
template <class Then, class Else>
auto cond(bool pred, Then&& then_fn, Else&& else_fn, SourceLocation loc = SourceLocation::current()) {
  using R = std::remove_cvref_t<std::invoke_result_t<Then&>>;
  static_assert(std::is_same_v<R, std::remove_cvref_t<std::invoke_result_t<Else&>>>,
                "kiln::cond: then_fn and else_fn must return the same type");
  if constexpr (std::is_void_v<R>) {
    if (pred) then_fn();
    else else_fn();
  } else {
    if (pred) return R(then_fn());
    return R(else_fn());
  }
}

// tf.while_loop: while cond_fn(vars...) is true, vars = body_fn(vars...).
// loop_vars is one Tensor, a tuple or pair (unpacked into the calls), or a
// vector/array of tensors (passed whole). cond_fn returns a bool tensor with
// one element; body_fn returns the new variables in the same structure. A
// loop variable keeps its dtype and rank; a dim the body changes becomes
// unknown in the traced loop. Returns the final variables.
// With options: shape invariants and maximum_iterations (see WhileOptions);
// a variable that leaves its invariant is an error naming it and both shapes.
template <class CondFn, class BodyFn, class Vars>
std::remove_cvref_t<Vars> while_loop(CondFn&& cond_fn, BodyFn&& body_fn, const Vars& loop_vars,
                                     const WhileOptions& options,
                                     SourceLocation loc = SourceLocation::current()) {
  using V = std::remove_cvref_t<Vars>;
  detail::ResultFlattener flat;
  std::vector<char> is_tensor;
  std::vector<std::size_t> first_leaf;
  detail::flatten_vars(loop_vars, flat, is_tensor, first_leaf);
  const std::vector<int64_t>& sizes = flat.sizes;
  detail::LoopSpec spec;
  spec.any_rank = flat.any_rank;
  detail::apply_while_options(options, is_tensor, first_leaf, spec);
  auto cond_call = [&](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
    V vars = detail::rebuild_vars<V>(leaves, sizes);
    using C = std::remove_cvref_t<decltype(detail::call_with_vars(cond_fn, vars))>;
    static_assert(std::is_convertible_v<C, Tensor>,
                  "kiln::while_loop: cond_fn must return a bool Tensor (for a C++ bool, use a C++ loop)");
    out.leaf(Tensor(detail::call_with_vars(cond_fn, vars)));
  };
  auto body_call = [&](std::span<const Tensor> leaves, detail::ResultFlattener& out) {
    V vars = detail::rebuild_vars<V>(leaves, sizes);
    using B = std::remove_cvref_t<decltype(detail::call_with_vars(body_fn, vars))>;
    static_assert(std::is_convertible_v<B, V>,
                  "kiln::while_loop: body_fn must return the loop variables' type (the same structure)");
    V next = detail::call_with_vars(body_fn, vars);
    detail::Traits<V>::flatten_result(next, out);
  };
  std::vector<Tensor> result = detail::while_loop_flat(detail::FlatFnRef(cond_call), detail::FlatFnRef(body_call),
                                                       std::move(flat.leaves), sizes, spec, loc);
  return detail::rebuild_vars<V>(result, sizes);
}

template <class CondFn, class BodyFn, class Vars>
std::remove_cvref_t<Vars> while_loop(CondFn&& cond_fn, BodyFn&& body_fn, const Vars& loop_vars,
                                     SourceLocation loc = SourceLocation::current()) {
  return while_loop(std::forward<CondFn>(cond_fn), std::forward<BodyFn>(body_fn), loop_vars, WhileOptions{}, loc);
}

namespace detail {

// for_range's bounds as int32 scalars; InvalidArgument for another dtype, a
// non-scalar or a concrete delta of 0.
struct RangeBounds {
  Tensor start, limit, delta;
  int sign = 0;  // delta's sign when known (not symbolic), else 0
};
RangeBounds range_bounds(const Operand& start, const Operand& limit, const Operand& delta,
                         const SourceLocation& loc);
// i < limit for a positive delta, i > limit for a negative one (a symbolic
// delta decides inside the graph).
Tensor range_continues(const Tensor& i, const RangeBounds& b, const SourceLocation& loc);
Tensor range_next(const Tensor& i, const RangeBounds& b, const SourceLocation& loc);

}  // namespace detail

// for i in range(start, limit, delta): vars = body(i, vars...). start, limit
// and delta are C++ ints or int32 scalar tensors; i is an int32 scalar
// Tensor. loop_vars is structured as for while_loop (a Tensor, a tuple or
// pair unpacked into the call, any nested structure such as TensorArrays);
// body returns the new variables in the same structure. Built on while_loop
// with loop variables (i, vars): eagerly a plain loop, while tracing one
// While op whatever the trip count. Returns the final variables.
template <class Body, class Vars>
std::remove_cvref_t<Vars> for_range(const Operand& start, const Operand& limit, const Operand& delta,
                                    const Vars& loop_vars, Body&& body,
                                    SourceLocation loc = SourceLocation::current()) {
  using V = std::remove_cvref_t<Vars>;
  detail::RangeBounds b = detail::range_bounds(start, limit, delta, loc);
  using State = std::tuple<Tensor, V>;
  State final_state = while_loop(
      [&](const Tensor& i, const V&) { return detail::range_continues(i, b, loc); },
      [&](const Tensor& i, const V& vars) {
        if constexpr (detail::IsTupleLike<V>::value) {
          V next = std::apply([&](const auto&... v) { return V(body(i, v...)); }, vars);
          return State{detail::range_next(i, b, loc), std::move(next)};
        } else {
          return State{detail::range_next(i, b, loc), V(body(i, vars))};
        }
      },
      State{b.start, loop_vars}, loc);
  return std::get<1>(std::move(final_state));
}

// for x in elements (AutoGraph's loop over a tensor): vars = body(x, vars...)
// for each x = elements[i] along dim 0, which may be unknown while tracing.
// Built on for_range: eagerly a plain loop, traced one While op.
template <class Body, class Vars>
std::remove_cvref_t<Vars> for_each(const Tensor& elements, const Vars& loop_vars, Body&& body,
                                   SourceLocation loc = SourceLocation::current()) {
  if (!elements.defined() || !elements.shape().has_known_rank() || elements.rank() == 0)
    throw InvalidArgument("for_each: elements must be a tensor of rank >= 1");
  int64_t n = elements.shape()[0];
  Tensor limit = n >= 0 ? constant(static_cast<int32_t>(n)) : shape_of(elements, loc)[0];
  return for_range(
      0, limit, 1, loop_vars,
      [&](const Tensor& i, const auto&... vars) { return body(gather(elements, i, 0, loc), vars...); }, loc);
}

// for i in range(start, limit, delta): body(i), for a body with only side
// effects (kiln::print, variable updates); it returns void.
template <class Body>
  requires std::is_invocable_v<Body&, const Tensor&>
void for_range(const Operand& start, const Operand& limit, const Operand& delta, Body&& body,
               SourceLocation loc = SourceLocation::current()) {
  detail::RangeBounds b = detail::range_bounds(start, limit, delta, loc);
  while_loop([&](const Tensor& i) { return detail::range_continues(i, b, loc); },
             [&](const Tensor& i) {
               body(i);
               return detail::range_next(i, b, loc);
             },
             b.start, loc);
}

}  // namespace kiln
