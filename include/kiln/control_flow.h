#pragma once
// Control flow on tensor values (docs/design-notes.md, "Control flow and TensorArray"): kiln::cond,
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

// Options of while_loop and for_range.
struct WhileOptions {
  // One entry per loop variable (per element of a tuple or pair, else one):
  // the shapes that variable may take, kiln::None for a dim that may vary
  // (Shape::unknown_rank(): any shape). A Tensor variable only. Without one,
  // a tensor of the loop variables that has another shape after an iteration
  // of a traced loop is an error naming it and both shapes (TF's rule; an
  // eager loop, as TF's, does not check). TensorArrays need none: their
  // buffers grow as they must.
  std::vector<std::optional<Shape>> shape_invariants;
  // At most this many iterations (an int32 scalar tensor); undefined: no limit.
  Tensor maximum_iterations;
  // Kiln's own: no error for a changing shape, whose changing dims become
  // unknown in the traced loop instead (what tf.data's reduce does with its
  // state).
  bool relax_shapes = false;
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
  // Leaves whose dims a traced loop relaxes where the body changes them
  // (parts of TensorArrays; every leaf with relax_shapes); any other leaf
  // must keep its shape or its invariant.
  std::vector<std::size_t> relaxed;
  // Leaves with a shape invariant, and the loop variable each belongs to.
  struct Invariant {
    std::size_t leaf;
    std::size_t var;
    Shape shape;
  };
  std::vector<Invariant> invariants;
  Tensor maximum_iterations;  // undefined: no limit
  // What messages call each leaf ("loop variable 1", "loop variable 0
  // (tensor 2 of it)", "the loop counter" for for_range's).
  std::vector<std::string> leaf_names;
};
std::vector<Tensor> while_loop_flat(FlatFnRef cond_fn, FlatFnRef body_fn, std::vector<Tensor> vars,
                                    const std::vector<int64_t>& sizes, const LoopSpec& spec,
                                    const SourceLocation& loc);
// The user's loop variables, one entry per top-level variable: whether it is
// a Tensor, and its first leaf among the loop's leaves (leaves before the
// first variable's are for_range's counter).
struct LoopVarsInfo {
  std::vector<char> is_tensor;
  std::vector<std::size_t> first_leaf;
};
// Checks the options against the loop variables and fills `spec` for a loop
// whose flattened variables are `flat`.
void apply_while_options(const WhileOptions& options, const LoopVarsInfo& vars, const ResultFlattener& flat,
                         LoopSpec& spec);

template <class T> struct IsTupleLike : std::false_type {};
template <class... Ts> struct IsTupleLike<std::tuple<Ts...>> : std::true_type {};
template <class A, class B> struct IsTupleLike<std::pair<A, B>> : std::true_type {};

// fn(vars...) for a tuple or pair of loop variables, fn(vars) otherwise.
template <class F, class V> decltype(auto) call_with_vars(F& fn, const V& vars) {
  if constexpr (IsTupleLike<V>::value) return std::apply(fn, vars);
  else return fn(vars);
}

// Notes where each top-level loop variable starts, its leaves counted from
// `offset`.
template <class V> LoopVarsInfo loop_vars_info(const V& vars, std::size_t offset) {
  LoopVarsInfo info;
  ResultFlattener flat;
  auto one = [&](const auto& x) {
    info.is_tensor.push_back(std::is_same_v<std::remove_cvref_t<decltype(x)>, Tensor>);
    info.first_leaf.push_back(offset + flat.leaves.size());
    Traits<decltype(x)>::flatten_result(x, flat);
  };
  if constexpr (IsTupleLike<V>::value) std::apply([&](const auto&... x) { (one(x), ...); }, vars);
  else one(vars);
  return info;
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

namespace detail {

// while_loop on loop variables `loop_vars` (structure V), the options read
// against the user's variables `info`.
template <class V, class CondFn, class BodyFn>
V run_while_loop(CondFn& cond_fn, BodyFn& body_fn, const V& loop_vars, const WhileOptions& options,
                 const LoopVarsInfo& info, const SourceLocation& loc) {
  ResultFlattener flat;
  Traits<V>::flatten_result(loop_vars, flat);
  const std::vector<int64_t>& sizes = flat.sizes;
  LoopSpec spec;
  apply_while_options(options, info, flat, spec);
  auto cond_call = [&](std::span<const Tensor> leaves, ResultFlattener& out) {
    V vars = rebuild_vars<V>(leaves, sizes);
    using C = std::remove_cvref_t<decltype(call_with_vars(cond_fn, vars))>;
    static_assert(std::is_convertible_v<C, Tensor>,
                  "kiln::while_loop: cond_fn must return a bool Tensor (for a C++ bool, use a C++ loop)");
    out.leaf(Tensor(call_with_vars(cond_fn, vars)));
  };
  auto body_call = [&](std::span<const Tensor> leaves, ResultFlattener& out) {
    V vars = rebuild_vars<V>(leaves, sizes);
    using B = std::remove_cvref_t<decltype(call_with_vars(body_fn, vars))>;
    static_assert(std::is_convertible_v<B, V>,
                  "kiln::while_loop: body_fn must return the loop variables' type (the same structure)");
    V next = call_with_vars(body_fn, vars);
    Traits<V>::flatten_result(next, out);
  };
  std::vector<Tensor> result =
      while_loop_flat(FlatFnRef(cond_call), FlatFnRef(body_call), std::move(flat.leaves), sizes, spec, loc);
  return rebuild_vars<V>(result, sizes);
}

}  // namespace detail

// tf.while_loop: while cond_fn(vars...) is true, vars = body_fn(vars...).
// loop_vars is one Tensor, a tuple or pair (unpacked into the calls), or a
// vector/array of tensors (passed whole). cond_fn returns a bool tensor with
// one element; body_fn returns the new variables in the same structure. A
// loop variable keeps its dtype and shape: in a traced loop, a tensor whose
// shape changes is an error naming it and both shapes, unless its shape
// invariant allows it (see WhileOptions). Returns the final variables.
template <class CondFn, class BodyFn, class Vars>
std::remove_cvref_t<Vars> while_loop(CondFn&& cond_fn, BodyFn&& body_fn, const Vars& loop_vars,
                                     const WhileOptions& options,
                                     SourceLocation loc = SourceLocation::current()) {
  using V = std::remove_cvref_t<Vars>;
  return detail::run_while_loop<V>(cond_fn, body_fn, loop_vars, options, detail::loop_vars_info(loop_vars, 0), loc);
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
// While op whatever the trip count. Returns the final variables. Options as
// while_loop's (shape_invariants: one entry per variable of loop_vars).
template <class Body, class Vars>
std::remove_cvref_t<Vars> for_range(const Operand& start, const Operand& limit, const Operand& delta,
                                    const Vars& loop_vars, Body&& body, const WhileOptions& options,
                                    SourceLocation loc = SourceLocation::current()) {
  using V = std::remove_cvref_t<Vars>;
  detail::RangeBounds b = detail::range_bounds(start, limit, delta, loc);
  using State = std::tuple<Tensor, V>;
  auto cond_fn = [&](const Tensor& i, const V&) { return detail::range_continues(i, b, loc); };
  auto body_fn = [&](const Tensor& i, const V& vars) {
    if constexpr (detail::IsTupleLike<V>::value) {
      V next = std::apply([&](const auto&... v) { return V(body(i, v...)); }, vars);
      return State{detail::range_next(i, b, loc), std::move(next)};
    } else {
      return State{detail::range_next(i, b, loc), V(body(i, vars))};
    }
  };
  // The options name the user's variables, whose leaves follow the counter's.
  State final_state = detail::run_while_loop<State>(cond_fn, body_fn, State{b.start, loop_vars}, options,
                                                    detail::loop_vars_info(loop_vars, 1), loc);
  return std::get<1>(std::move(final_state));
}

template <class Body, class Vars>
std::remove_cvref_t<Vars> for_range(const Operand& start, const Operand& limit, const Operand& delta,
                                    const Vars& loop_vars, Body&& body,
                                    SourceLocation loc = SourceLocation::current()) {
  return for_range(start, limit, delta, loop_vars, std::forward<Body>(body), WhileOptions{}, loc);
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
