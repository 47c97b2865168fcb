#pragma once
// The differential program tester (docs/design-notes.md, "Tensor identity"):
// random small programs over Kiln's differentiable ops, run eagerly and
// traced, their gradients checked against each other and against float64
// central differences. Operands come from a tiny pool of values, so equal
// values meet (a variable holding 2, the literal 2, a constant 2): a tape
// that confused two equal tensors would give a wrong gradient here.
//
// A program is a list of instructions over a growing list of values; the
// first values are its sources (trainable and frozen variables, watched and
// unwatched constants), each instruction appends one value (a Call appends
// two), and the target is sum(last value) + sum(one earlier value).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <kiln/kiln.h>

namespace kiln::testing::programs {

enum class SourceKind { kTrainable, kFrozen, kWatched, kUnwatched };

struct SourceSpec {
  SourceKind kind;
  Shape shape;
  std::vector<double> values;
  int init_from = -1;  // a variable made from this earlier constant source's tensor
};

enum class Op {
  kRead,  // a variable read again (a constant: the same tensor again)
  kNeg, kSquare, kSin, kTanh, kSigmoid, kSoftplus, kAbs, kRelu, kElu, kSelu,
  kAdd, kSub, kMul, kSafeDiv, kMaximum, kMinimum,
  kMulLiteral, kAddLiteral, kLiteralSub, kPowLiteral,
  kConstant,   // a new constant tensor holding `literal`
  // A threshold is a literal + 0.25, off the pool: a value exactly at it
  // switches branch under any perturbation, with no derivative to check.
  kSum, kMean, kMax, kReshape,
  kWhere,      // where(a > literal + 0.25, a, b)
  kCond,       // cond(sum(a) > literal + 0.25, a * b + literal, sin(a) - b)
  kWhile,      // 3 times x = x * 0.5 + tanh(x) * sum(b), from x = a
  kCall,       // a kiln::function returning (a, a * b + sin(b)): two values
  kInnerGrad,  // d/da sum(sin(a) * a) on a tape of its own
  kCount
};

struct Instr {
  Op op;
  int a = 0, b = 0;
  double literal = 0;
};

struct Program {
  uint64_t seed = 0;
  std::vector<SourceSpec> sources;
  std::vector<Instr> body;
  int second_output = 0;  // the earlier value the target also sums
};

inline const char* op_name(Op op) {
  static const char* names[] = {"read", "neg", "square", "sin", "tanh", "sigmoid", "softplus", "abs", "relu",
                                "elu", "selu", "add", "sub", "mul", "safe_div", "maximum", "minimum",
                                "mul_literal", "add_literal", "literal_sub", "pow_literal", "constant", "sum",
                                "mean", "max", "reshape", "where", "cond", "while", "call", "inner_grad"};
  static_assert(sizeof(names) / sizeof(names[0]) == static_cast<int>(Op::kCount));
  return names[static_cast<int>(op)];
}

inline std::string describe(const Program& p) {
  static const char* kinds[] = {"trainable variable", "frozen variable", "watched constant", "unwatched constant"};
  std::string s = fmt::format("program seed {}\n", p.seed);
  for (std::size_t i = 0; i < p.sources.size(); ++i)
    s += fmt::format("  v{} = {} {} {}{}\n", i, kinds[static_cast<int>(p.sources[i].kind)],
                     p.sources[i].shape.to_string(), fmt::join(p.sources[i].values, ", "),
                     p.sources[i].init_from >= 0 ? fmt::format(" (made from v{})", p.sources[i].init_from) : "");
  int v = static_cast<int>(p.sources.size());
  for (const Instr& in : p.body) {
    s += fmt::format("  v{} = {}(v{}, v{}, {})\n", v, op_name(in.op), in.a, in.b, in.literal);
    v += in.op == Op::kCall ? 2 : 1;
  }
  s += fmt::format("  target = sum(v{}) + sum(v{})\n", v - 1, p.second_output);
  return s;
}

// ---- generation ----------------------------------------------------------------

// The pool every value and literal is drawn from: equal values meet often.
inline constexpr double kPool[] = {-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0};

inline Shape broadcast_shapes(const Shape& a, const Shape& b) { return a.rank() >= b.rank() ? a : b; }

// Shapes are [], [3] and [2, 3]: any two broadcast.
inline Program generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto pool_value = [&] { return kPool[pick(std::size(kPool))]; };
  const Shape shapes[] = {Shape{}, Shape{3}, Shape{2, 3}};
  Program p;
  p.seed = seed;
  std::vector<Shape> value_shapes;
  const int num_sources = 2 + pick(3);
  for (int i = 0; i < num_sources; ++i) {
    SourceSpec s{static_cast<SourceKind>(pick(4)), shapes[pick(3)], {}};
    for (int64_t k = 0; k < s.shape.num_elements(); ++k) s.values.push_back(pool_value());
    const bool variable = s.kind == SourceKind::kTrainable || s.kind == SourceKind::kFrozen;
    const int j = i ? pick(i) : 0;
    if (variable && i && pick(3) == 0 && !(p.sources[j].kind == SourceKind::kTrainable || p.sources[j].kind == SourceKind::kFrozen)) {
      s.init_from = j;  // Variable(t) of a tensor the program also uses
      s.shape = p.sources[j].shape;
      s.values = p.sources[j].values;
    }
    value_shapes.push_back(s.shape);
    p.sources.push_back(std::move(s));
  }
  const int length = 10 + pick(31);
  for (int i = 0; i < length; ++i) {
    const int n = static_cast<int>(value_shapes.size());
    // Recent values more often, so chains grow deep as well as wide.
    auto operand = [&] { return pick(2) ? n - 1 - pick(std::min(n, 4)) : pick(n); };
    Instr in{static_cast<Op>(pick(static_cast<int>(Op::kCount))), operand(), operand(), pool_value()};
    const Shape &sa = value_shapes[in.a], &sb = value_shapes[in.b];
    switch (in.op) {
      case Op::kRead:
        in.a = pick(num_sources);
        value_shapes.push_back(p.sources[in.a].shape);
        break;
      case Op::kPowLiteral:
        in.literal = std::vector<double>{0.5, 2.0, 3.0}[pick(3)];
        value_shapes.push_back(sa);
        break;
      case Op::kConstant:
        value_shapes.push_back(Shape{});
        break;
      case Op::kSum:
        value_shapes.push_back(Shape{});
        break;
      case Op::kMean:
      case Op::kMax:
        value_shapes.push_back(sa.rank() == 2 ? Shape{3} : Shape{});
        break;
      case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kSafeDiv: case Op::kMaximum: case Op::kMinimum:
      case Op::kWhere: case Op::kCond:
        value_shapes.push_back(broadcast_shapes(sa, sb));
        break;
      case Op::kCall:
        value_shapes.push_back(sa);
        value_shapes.push_back(broadcast_shapes(sa, sb));
        break;
      default:
        value_shapes.push_back(sa);
    }
    p.body.push_back(in);
  }
  p.second_output = pick(static_cast<int>(value_shapes.size()));
  return p;
}

// ---- running -------------------------------------------------------------------

// The function kCall calls: its first result is its argument, handed back.
inline const auto& called_function() {
  static const auto f = function([](const Tensor& a, const Tensor& b) { return std::tuple{a, a * b + sin(b)}; });
  return f;
}

// Whether an op sits exactly on a point where it is not differentiable
// (relu, abs, elu or selu at 0, a tie of maximum, minimum or max, a value at
// a threshold). There a smooth composition of non-smooth pieces can have a
// derivative the tape cannot give (minimum(relu(x), x) at x = 0 is x, whose
// slope is 1, while the tape takes relu's side of the tie: 0, as TF does).
inline bool on_a_kink(const Instr& in, const Tensor& a, const Tensor& b) {
  auto values = [](const Tensor& t) { return cast(t, DType::Float64).to_vector<double>(); };
  const std::vector<double> x = values(a);
  auto any_equal = [&](double v) { return std::find(x.begin(), x.end(), v) != x.end(); };
  switch (in.op) {
    case Op::kAbs: case Op::kRelu: case Op::kElu: case Op::kSelu: return any_equal(0.0);
    case Op::kWhere: return any_equal(in.literal + 0.25);
    case Op::kCond: return values(sum(a))[0] == in.literal + 0.25;
    case Op::kMaximum: case Op::kMinimum: {
      const std::vector<double> y = values(b);
      // Shapes broadcast as [], [3], [2, 3]: a tie is an element of the
      // smaller equal to one it meets.
      const std::vector<double>& big = x.size() >= y.size() ? x : y;
      const std::vector<double>& small = x.size() >= y.size() ? y : x;
      for (std::size_t k = 0; k < big.size(); ++k)
        if (big[k] == small[k % small.size()]) return true;
      return false;
    }
    case Op::kMax: {
      if (a.shape().rank() == 2) return x[0] == x[3] || x[1] == x[4] || x[2] == x[5];
      for (std::size_t i = 0; i < x.size(); ++i)
        for (std::size_t j = i + 1; j < x.size(); ++j)
          if (x[i] == x[j]) return true;
      return false;
    }
    default: return false;
  }
}

// Runs the body on the sources' first values; returns the target. `vars`
// holds each source's variable (null for constants). With `kinks`, eager
// runs count the ops that sit on a kink (on_a_kink).
inline Tensor run_body(const Program& p, std::vector<Tensor> values, const std::vector<Variable>& vars,
                       int* kinks = nullptr) {
  const DType dtype = values[0].dtype();
  for (const Instr& in : p.body) {
    const Tensor& a = values[in.a];
    const Tensor& b = values[in.b];
    const double lit = in.literal;
    if (kinks && on_a_kink(in, a, b)) ++*kinks;
    Tensor r;
    switch (in.op) {
      case Op::kRead: r = vars[in.a] ? vars[in.a].read_value() : values[in.a]; break;
      case Op::kNeg: r = -a; break;
      case Op::kSquare: r = square(a); break;
      case Op::kSin: r = sin(a); break;
      case Op::kTanh: r = tanh(a); break;
      case Op::kSigmoid: r = sigmoid(a); break;
      case Op::kSoftplus: r = softplus(a); break;
      case Op::kAbs: r = abs(a); break;
      case Op::kRelu: r = relu(a); break;
      case Op::kElu: r = elu(a); break;
      case Op::kSelu: r = selu(a); break;
      case Op::kAdd: r = a + b; break;
      case Op::kSub: r = a - b; break;
      case Op::kMul: r = a * b; break;
      case Op::kSafeDiv: r = a / (square(b) + 1.0); break;
      case Op::kMaximum: r = maximum(a, b); break;
      case Op::kMinimum: r = minimum(a, b); break;
      case Op::kMulLiteral: r = a * lit; break;
      case Op::kAddLiteral: r = lit + a; break;
      case Op::kLiteralSub: r = lit - a; break;
      case Op::kPowLiteral: r = pow(square(a) + 0.5, lit); break;
      case Op::kConstant: r = constant(lit, dtype); break;
      case Op::kSum: r = sum(a); break;
      case Op::kMean: r = mean(a, a.shape().rank() == 2 ? Axes{0} : Axes{}); break;
      case Op::kMax: r = max(a, a.shape().rank() == 2 ? Axes{0} : Axes{}); break;
      case Op::kReshape: r = reshape(a, a.shape()); break;
      case Op::kWhere: r = where(a > lit + 0.25, a, b); break;
      case Op::kCond:
        r = cond(sum(a) > lit + 0.25, [&] { return a * b + lit; }, [&] { return sin(a) - b; });
        break;
      case Op::kWhile: {
        Tensor c = sum(b);
        auto [i, x] = while_loop([](const Tensor& i, const Tensor&) { return i < 3; },
                                 [&](const Tensor& i, const Tensor& x) { return std::tuple{i + 1, x * 0.5 + tanh(x) * c}; },
                                 std::tuple{constant(0), a});
        r = x;
        break;
      }
      case Op::kCall: {
        auto [first, second] = called_function()(a, b);
        values.push_back(first);
        r = second;
        break;
      }
      case Op::kInnerGrad: {
        GradientTape inner;
        inner.watch(a);
        r = inner.gradient(sum(sin(a) * a), a);
        break;
      }
      case Op::kCount: break;
    }
    values.push_back(r);
  }
  return sum(values.back()) + sum(values[p.second_output]);
}

// Which sources the target depends on (through any operand).
inline std::vector<bool> connected_sources(const Program& p) {
  const std::size_t n = p.sources.size();
  std::vector<std::vector<bool>> deps;
  for (std::size_t i = 0; i < n; ++i) {
    deps.emplace_back(n, false);
    deps.back()[i] = true;
  }
  auto join = [&](const std::vector<bool>& x, const std::vector<bool>& y) {
    std::vector<bool> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = x[i] || y[i];
    return r;
  };
  for (const Instr& in : p.body) {
    switch (in.op) {
      case Op::kRead: deps.push_back(deps[in.a]); break;
      case Op::kConstant: deps.emplace_back(n, false); break;
      case Op::kAdd: case Op::kSub: case Op::kMul: case Op::kSafeDiv: case Op::kMaximum: case Op::kMinimum:
      case Op::kWhere: case Op::kCond: case Op::kWhile:
        deps.push_back(join(deps[in.a], deps[in.b]));
        break;
      case Op::kCall:
        deps.push_back(deps[in.a]);
        deps.push_back(join(deps[in.a], deps[in.b]));
        break;
      default: deps.push_back(deps[in.a]);
    }
  }
  return join(deps.back(), deps[p.second_output]);
}

// The sources as tensors of `dtype`, and as variables where they are ones.
struct Sources {
  std::vector<Tensor> tensors;    // constants' values (variables: undefined)
  std::vector<Variable> variables;  // null for constants
};

// Made as users make them: a scalar from a C++ number (constant(2.0),
// Variable(2.0)), a variable from a tensor the program also uses. With
// `values` (central differences) every source is made afresh from them.
inline Sources make_sources(const Program& p, DType dtype, const std::vector<std::vector<double>>* values = nullptr) {
  Sources s;
  std::vector<Tensor> made;
  for (std::size_t i = 0; i < p.sources.size(); ++i) {
    const SourceSpec& spec = p.sources[i];
    const std::vector<double>& v = values ? (*values)[i] : spec.values;
    Tensor t = !values && spec.init_from >= 0 ? made[spec.init_from]
               : spec.shape.rank() == 0     ? constant(Scalar(v[0]), dtype)
                                            : constant(v, spec.shape, dtype);
    made.push_back(t);
    if (spec.kind == SourceKind::kTrainable || spec.kind == SourceKind::kFrozen) {
      s.variables.emplace_back(t, VariableOptions{.name = fmt::format("v{}", i),
                                                   .trainable = spec.kind == SourceKind::kTrainable});
      s.tensors.emplace_back();
    } else {
      s.variables.emplace_back();
      s.tensors.push_back(t);
    }
  }
  return s;
}

// The target and the gradient with respect to every source (undefined
// where the tape gives none), computed under one tape.
struct Outcome {
  Tensor target;
  std::vector<Tensor> gradients;
};

// Runs under the current dispatch context (eager, or a trace): `constants`
// are the constant sources' tensors (arguments when traced).
inline Outcome run_with_tape(const Program& p, const std::vector<Tensor>& constants, const std::vector<Variable>& vars) {
  GradientTape tape;
  std::vector<Tensor> first;
  // Unwatched constants are operands only: TF gives them a gradient where
  // they feed a recorded op directly, which central differences (through
  // every path) do not model.
  std::vector<GradientSource> sources;
  std::vector<std::size_t> asked;
  for (std::size_t i = 0; i < p.sources.size(); ++i) {
    if (vars[i]) {
      first.push_back(vars[i].read_value());
      sources.emplace_back(vars[i]);
      asked.push_back(i);
    } else {
      first.push_back(constants[i]);
      if (p.sources[i].kind != SourceKind::kWatched) continue;
      tape.watch(constants[i]);
      sources.emplace_back(constants[i]);
      asked.push_back(i);
    }
  }
  Outcome o;
  o.target = run_body(p, first, vars);
  std::vector<Tensor> grads = tape.gradient({o.target}, sources, {});
  o.gradients.resize(p.sources.size());
  for (std::size_t k = 0; k < asked.size(); ++k) o.gradients[asked[k]] = grads[k];
  return o;
}

inline Outcome run_eager(const Program& p, const Sources& s) { return run_with_tape(p, s.tensors, s.variables); }

// The same, traced into one graph (a fresh function per call): undefined
// gradients come back as zeros, with which were undefined noted while
// tracing.
inline Outcome run_traced(const Program& p, const Sources& s) {
  std::vector<char> defined;
  auto f = function([&](const std::vector<Tensor>& constants) {
    Outcome o = run_with_tape(p, constants, s.variables);
    std::vector<Tensor> out{o.target};
    defined.clear();
    for (const Tensor& g : o.gradients) {
      defined.push_back(g.defined());
      out.push_back(g.defined() ? g : zeros_like(o.target));
    }
    return out;
  });
  std::vector<Tensor> args;
  for (const Tensor& t : s.tensors) args.push_back(t.defined() ? t : constant(0.0));
  std::vector<Tensor> out = f(args);
  Outcome o{out[0], {}};
  for (std::size_t i = 0; i < defined.size(); ++i) o.gradients.push_back(defined[i] ? out[i + 1] : Tensor());
  return o;
}

// The target's value in float64 with the sources at `values`, no tape
// (with `kinks`: how many ops sit on a kink there).
inline double evaluate(const Program& p, const std::vector<std::vector<double>>& values, int* kinks = nullptr) {
  Sources s = make_sources(p, DType::Float64, &values);
  std::vector<Tensor> first;
  for (std::size_t i = 0; i < p.sources.size(); ++i)
    first.push_back(s.variables[i] ? s.variables[i].read_value() : s.tensors[i]);
  return run_body(p, first, s.variables, kinks).to_vector<double>()[0];
}

}  // namespace kiln::testing::programs
