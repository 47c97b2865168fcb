// A while_loop's gradient with accumulators (graph_ops/while_accumulators.h):
// the re-run stacks the body's costly values the gradient reads, and the
// backward loop reads them instead of recomputing. The gradients are bit for
// bit those of the recomputing form (set_while_accumulators(false)), for
// recurrent layers, nested loops, loops of unknown trip count, loops with
// stateful ops, and second derivatives.
#include "test_util.h"
#include "wave_values.h"

#include <algorithm>
#include <functional>

#include "function/traced_graph.h"
#include "graph/graph.h"
#include "graph_ops/while_accumulators.h"
#include "kiln/kiln.h"
#include "passes/passes.h"
#include "schema/op_def.h"

using namespace kiln;
using kiln::testing::expect_tensor_near;
using kiln::testing::wave;

namespace {

class AccumulatorsSetTo {
 public:
  explicit AccumulatorsSetTo(bool on) : saved_(graph_ops::while_accumulators()) { graph_ops::set_while_accumulators(on); }
  ~AccumulatorsSetTo() { graph_ops::set_while_accumulators(saved_); }

 private:
  bool saved_;
};

using Gradients = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// `fn` traced with accumulators and without (one Function each), run on
// `args`: the same bits, or, with a tolerance, close (a second derivative
// differentiates different graphs: its sums run in another order). Keeps
// both Functions (their graphs) alive.
struct Both {
  std::vector<Tensor> results;  // the accumulated form's
  std::unique_ptr<Function<Gradients>> functions[2];
  const graph::Graph* graph = nullptr;
  const graph::Graph* recomputing_graph = nullptr;
};
Both expect_same_bits(const Gradients& fn, const std::vector<Tensor>& args, float tolerance = 0) {
  Both both;
  std::vector<Tensor> forms[2];
  for (bool on : {false, true}) {
    AccumulatorsSetTo setting(on);
    both.functions[on] = std::make_unique<Function<Gradients>>(function(fn));
    forms[on] = (*both.functions[on])(args);
    (on ? both.graph : both.recomputing_graph) = both.functions[on]->get_concrete_function(args).impl()->graph.get();
  }
  EXPECT_EQ(forms[0].size(), forms[1].size());
  for (std::size_t i = 0; i < forms[0].size() && i < forms[1].size(); ++i) {
    EXPECT_EQ(forms[0][i].shape(), forms[1][i].shape()) << "result " << i;
    if (tolerance == 0)
      EXPECT_TRUE(core::same_bits(forms[0][i], forms[1][i])) << "result " << i;
    else
      expect_tensor_near<float>(forms[1][i], forms[0][i].shape(), forms[0][i].to_vector<float>(), tolerance);
  }
  both.results = forms[1];
  return both;
}

int count_ops(const graph::Graph& g, std::string_view op) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->op->name == op;
  return n;
}

// The While nodes of g, in order: forward, re-run, backward for each loop.
std::vector<const graph::Node*> whiles(const graph::Graph& g) {
  std::vector<const graph::Node*> out;
  for (const auto& n : g.nodes())
    if (n->op->name == std::string_view("While") || n->op->name == std::string_view("StatefulWhile"))
      out.push_back(n.get());
  return out;
}

const graph::Graph& body_of(const graph::Node* n) { return *n->attrs.get<std::shared_ptr<const graph::Graph>>("body"); }

// The shapes of the values a gradient's re-run stacks (its growing arrays).
std::vector<Shape> stacked_values(const graph::Graph& rerun_body) {
  std::vector<Shape> out;
  for (const auto& n : rerun_body.nodes())
    if (n->op->name == std::string_view("TensorArrayWrite") && n->attrs.get_bool("dynamic"))
      out.push_back(rerun_body.type_of(n->inputs[4]).shape);
  return out;
}

constexpr int64_t kBatch = 3, kSteps = 5, kIn = 4, kUnits = 6;

Tensor sequence() { return constant(wave(kBatch * kSteps * kIn, 1.3, 0.2, 1.0), Shape{kBatch, kSteps, kIn}, DType::Float32); }

}  // namespace

// The LSTM's backward loop multiplies only for the gradients (the re-run's
// products are stacked), and a traced training step runs as many MatMuls as
// the unrolled layer's.
TEST(WhileAccumulators, AnLstmsBackwardLoopRecomputesNoProduct) {
  for (bool return_sequences : {false, true}) {
    nn::LSTM lstm(kUnits, {.return_sequences = return_sequences, .seed = 3});
    Tensor x = sequence();
    lstm(x);
    Both both = expect_same_bits(
        [&](const std::vector<Tensor>& a) {
          GradientTape tape;
          tape.watch(a[0]);
          Tensor loss = sum(square(lstm(a[0])));
          std::vector<GradientSource> sources{a[0]};
          for (const Variable& v : lstm.trainable_variables()) sources.emplace_back(v);
          return tape.gradient(loss, sources);
        },
        {x});
    std::vector<const graph::Node*> loops = whiles(*both.graph), old_loops = whiles(*both.recomputing_graph);
    ASSERT_EQ(loops.size(), 3u);
    ASSERT_EQ(old_loops.size(), 3u);
    // Forward: x_t W and h U. Backward: their two gradients each, and no more.
    EXPECT_EQ(count_ops(body_of(loops[0]), "MatMul"), 2);
    EXPECT_EQ(count_ops(body_of(old_loops[2]), "MatMul"), 6);
    EXPECT_EQ(count_ops(body_of(loops[2]), "MatMul"), 4);
    // The re-run stacks what the gradient reads of the products' results:
    // the four gates' activations besides the two states, [batch, units]
    // each (the gates come from one Split, whose gradient, a Concat, reads
    // none of its input), where it stacked only the states; and no longer
    // the outputs' TensorArray whole at every step (the backward loop takes
    // its final value).
    std::vector<Shape> stacked = stacked_values(body_of(loops[1])), old_stacked = stacked_values(body_of(old_loops[1]));
    auto holds = [](const std::vector<Shape>& v, const Shape& s) { return std::count(v.begin(), v.end(), s); };
    EXPECT_EQ(holds(stacked, Shape{kBatch, kUnits}), 6);
    EXPECT_EQ(holds(old_stacked, Shape{kBatch, kUnits}), 2);
    EXPECT_EQ(holds(stacked, Shape{kBatch, 4 * kUnits}), 0);
    EXPECT_EQ(holds(old_stacked, Shape{None, kBatch, kUnits}), return_sequences ? 1 : 0);
    EXPECT_EQ(holds(stacked, Shape{None, kBatch, kUnits}), 0);
  }
}

TEST(WhileAccumulators, AGruTrainsTheSameBits) {
  nn::GRU gru(kUnits, {.seed = 5});
  nn::Dense head(2, {.seed = 6});
  Tensor x = sequence();
  head(gru(x));
  std::vector<Variable> vars = gru.trainable_variables();
  for (const Variable& v : head.trainable_variables()) vars.push_back(v);
  expect_same_bits(
      [&](const std::vector<Tensor>&) {
        GradientTape tape;
        Tensor loss = sum(tanh(head(gru(x))));
        std::vector<GradientSource> sources(vars.begin(), vars.end());
        return tape.gradient(loss, sources);
      },
      {x});
}

TEST(WhileAccumulators, NestedLoops) {
  Tensor w = constant(wave(16, 0.7, 0.3, 0.5), Shape{4, 4}, DType::Float32);
  Tensor x = constant(wave(8, 1.1, 0.1, 0.8), Shape{2, 4}, DType::Float32);
  Both both = expect_same_bits(
      [](const std::vector<Tensor>& a) {
        GradientTape tape;
        tape.watch(a[0]);
        tape.watch(a[1]);
        Tensor h = for_range(0, 3, 1, a[0], [&](const Tensor& i, const Tensor& outer) {
          Tensor inner = for_range(0, 2, 1, outer, [&](const Tensor&, const Tensor& v) { return tanh(matmul(v, a[1])); });
          return inner * cast(i + 1, DType::Float32);
        });
        return tape.gradient(sum(h), std::vector<GradientSource>{a[0], a[1]});
      },
      {x, w});
  // Checked against the eager loops (a C++ loop recorded op by op).
  GradientTape tape;
  tape.watch(x);
  tape.watch(w);
  Tensor h = x;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) h = tanh(matmul(h, w));
    h = h * static_cast<float>(i + 1);
  }
  std::vector<Tensor> want = tape.gradient(sum(h), std::vector<GradientSource>{x, w});
  for (int k = 0; k < 2; ++k)
    expect_tensor_near<float>(both.results[k], want[k].shape(), want[k].to_vector<float>(), 1e-5f);
}

// The trip count depends on the values, and the batch is known only at run
// time: the stacks grow as the loop goes.
TEST(WhileAccumulators, ALoopOfUnknownTripCountAndBatch) {
  Tensor w = constant(wave(9, 0.9, 0.2, 0.6), Shape{3, 3}, DType::Float32);
  auto batch_rows = [](int64_t batch) { return constant(wave(batch * 3, 1.7, 0.4, 2.0), Shape{batch, 3}, DType::Float32); };
  auto grads = [](const Tensor& x, const Tensor& w) {
    GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    Tensor h = while_loop([](const Tensor& v) { return sum(abs(v)) > 0.5f; },
                          [&](const Tensor& v) { return tanh(matmul(v, w)) * 0.8f; }, x);
    return tape.gradient(sum(h), std::vector<GradientSource>{x, w});
  };
  // Each form traced once for both batches, under its setting; the number of
  // products its backward loop runs.
  std::vector<Tensor> got[2][2];
  int backward_products[2];
  for (bool on : {false, true}) {
    AccumulatorsSetTo setting(on);
    FunctionOptions o;
    o.input_signature = std::vector<TensorSpec>{TensorSpec({None, 3}, DType::Float32), TensorSpec({3, 3}, DType::Float32)};
    auto f = function([&](const Tensor& x, const Tensor& w) { return grads(x, w); }, o);
    for (int64_t batch : {1, 4}) got[on][batch == 4] = f(batch_rows(batch), w);
    EXPECT_EQ(f.tracing_count(), 1);
    const graph::Graph& traced = *f.get_concrete_function(batch_rows(1), w).impl()->graph;
    backward_products[on] = count_ops(body_of(whiles(traced).back()), "MatMul");
  }
  for (int64_t batch : {1, 4}) {
    std::vector<Tensor> want = grads(batch_rows(batch), w);
    for (int k = 0; k < 2; ++k) {
      EXPECT_TRUE(core::same_bits(got[1][batch == 4][k], got[0][batch == 4][k]));
      expect_tensor_near<float>(got[1][batch == 4][k], want[k].shape(), want[k].to_vector<float>(), 1e-5f);
    }
  }
  // The loop variable is relaxed to an unknown shape, which it keeps across
  // iterations, and so does the product: stacked.
  EXPECT_EQ(backward_products[1] + 1, backward_products[0]);
}

// A variable read in the body makes the loop stateful: what is computed from
// the read is recomputed as before (a read may see a new value), the rest is
// stacked.
TEST(WhileAccumulators, ALoopWithStatefulOps) {
  Variable v(constant(wave(9, 0.8, 0.5, 0.4), Shape{3, 3}, DType::Float32), {.name = "v"});
  Tensor w = constant(wave(9, 0.6, 0.1, 0.7), Shape{3, 3}, DType::Float32);
  Tensor x = constant(wave(6, 1.2, 0.3, 1.0), Shape{2, 3}, DType::Float32);
  Both both = expect_same_bits(
      [&](const std::vector<Tensor>& a) {
        GradientTape tape;
        tape.watch(a[0]);
        Tensor h = for_range(0, 4, 1, a[0], [&](const Tensor&, const Tensor& h) {
          return tanh(matmul(h, v.read_value())) + sigmoid(matmul(h, a[1]));
        });
        return tape.gradient(sum(h), std::vector<GradientSource>{a[0], v});
      },
      {x, w});
  std::vector<const graph::Node*> loops = whiles(*both.graph), old_loops = whiles(*both.recomputing_graph);
  ASSERT_EQ(loops.size(), 3u);
  // h v is recomputed, h w is not: one product fewer than before.
  EXPECT_EQ(count_ops(body_of(loops[2]), "MatMul") + 1, count_ops(body_of(old_loops[2]), "MatMul"));
}

// d²/dw² of x w^4 (a 1x1 product per step) through a traced loop: the
// second gradient differentiates the backward loop, which reads the stacks,
// and the re-run, whose stacks it reads whole (they only grow).
TEST(WhileAccumulators, SecondDerivatives) {
  Tensor x = constant({{1.5f}}), w = constant({{0.8f}});
  Both both = expect_same_bits(
      [](const std::vector<Tensor>& a) {
        GradientTape outer;
        outer.watch(a[1]);
        GradientTape inner;
        inner.watch(a[1]);
        Tensor y = for_range(0, 4, 1, a[0], [&](const Tensor&, const Tensor& h) { return matmul(h, a[1]); });
        Tensor dw = inner.gradient(sum(y), a[1]);
        return std::vector<Tensor>{dw, outer.gradient(sum(dw), a[1])};
      },
      {x, w}, 1e-6f);
  expect_tensor_near<float>(both.results[0], Shape{1, 1}, {4 * 1.5f * 0.8f * 0.8f * 0.8f}, 1e-5f);
  expect_tensor_near<float>(both.results[1], Shape{1, 1}, {12 * 1.5f * 0.8f * 0.8f}, 1e-5f);

  // A nonlinear step: the eager loops' second derivatives.
  Tensor w3 = constant(wave(9, 0.9, 0.2, 0.6), Shape{3, 3}, DType::Float32);
  Tensor x3 = constant(wave(6, 1.2, 0.3, 1.0), Shape{2, 3}, DType::Float32);
  auto second = [](const Tensor& x, const Tensor& w, auto loop) {
    GradientTape outer;
    outer.watch(w);
    GradientTape inner;
    inner.watch(w);
    Tensor dw = inner.gradient(sum(loop(x, w)), w);
    return outer.gradient(sum(square(dw)), w);
  };
  auto traced_loop = [](const Tensor& x, const Tensor& w) {
    return for_range(0, 3, 1, x, [&](const Tensor&, const Tensor& h) { return tanh(matmul(h, w)); });
  };
  auto eager_loop = [](const Tensor& x, const Tensor& w) {
    Tensor h = x;
    for (int i = 0; i < 3; ++i) h = tanh(matmul(h, w));
    return h;
  };
  Both nonlinear = expect_same_bits(
      [&](const std::vector<Tensor>& a) { return std::vector<Tensor>{second(a[0], a[1], traced_loop)}; }, {x3, w3},
      1e-5f);
  Tensor want = second(x3, w3, eager_loop);
  expect_tensor_near<float>(nonlinear.results[0], Shape{3, 3}, want.to_vector<float>(), 1e-4f);
}

// A Function called eagerly under a tape: its Call's backward graph holds the
// loop's gradient.
TEST(WhileAccumulators, AFunctionCalledEagerlyUnderATape) {
  Tensor w = constant(wave(9, 0.9, 0.2, 0.6), Shape{3, 3}, DType::Float32);
  Tensor x = constant(wave(6, 1.2, 0.3, 1.0), Shape{2, 3}, DType::Float32);
  std::vector<Tensor> got[2];
  for (bool on : {true, false}) {
    AccumulatorsSetTo setting(on);
    // One Function each: a Call's backward graph is cached per forward graph.
    auto f = function([&](const Tensor& x) {
      return for_range(0, 3, 1, x, [&](const Tensor&, const Tensor& h) { return tanh(matmul(h, w)); });
    });
    GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    got[on] = tape.gradient(sum(f(x)), std::vector<GradientSource>{x, w});
  }
  for (int k = 0; k < 2; ++k) EXPECT_TRUE(core::same_bits(got[0][k], got[1][k]));
  GradientTape tape;
  tape.watch(x);
  tape.watch(w);
  Tensor h = x;
  for (int i = 0; i < 3; ++i) h = tanh(matmul(h, w));
  std::vector<Tensor> want = tape.gradient(sum(h), std::vector<GradientSource>{x, w});
  for (int k = 0; k < 2; ++k) expect_tensor_near<float>(got[1][k], want[k].shape(), want[k].to_vector<float>(), 1e-5f);
}

// A value whose shape changes from one iteration to the next (the stack of a
// nested loop's TensorArray, one row more each time) cannot be stacked: it
// is recomputed, as before.
TEST(WhileAccumulators, AValueWhoseShapeChangesIsRecomputed) {
  Tensor c = constant(wave(12, 0.7, 0.4, 0.9), Shape{4, 3}, DType::Float32);
  Tensor w = constant(wave(9, 0.9, 0.2, 0.6), Shape{3, 3}, DType::Float32);
  Tensor x = constant({{0.3f, -0.2f, 0.5f}});
  auto loop = [&](const Tensor& x, const Tensor& w) {
    return for_range(0, 3, 1, x, [&](const Tensor& i, const Tensor& h) {
      TensorArray rows(DType::Float32, 0, {.dynamic_size = true, .element_shape = Shape{3}});
      rows = for_range(0, i + 1, 1, rows, [&](const Tensor& j, const TensorArray& ta) { return ta.write(j, gather(c, j)); });
      Tensor p = tanh(matmul(rows.stack(), w));  // [i + 1, 3]
      return h * 0.5f + sum(p, {0}, true);
    });
  };
  auto grads = [&](const Tensor& x, const Tensor& w) {
    GradientTape tape;
    tape.watch(x);
    tape.watch(w);
    return tape.gradient(sum(loop(x, w)), std::vector<GradientSource>{x, w});
  };
  Both both = expect_same_bits([&](const std::vector<Tensor>& a) { return grads(a[0], a[1]); }, {x, w});
  std::vector<Tensor> want = grads(x, w);
  for (int k = 0; k < 2; ++k)
    expect_tensor_near<float>(both.results[k], want[k].shape(), want[k].to_vector<float>(), 1e-5f);
}

// The ops that declare the two flags the choice reads: the lists of names
// the choice kept before each op said it in its own OpDef, plus StatefulCall,
// StatefulIf and StatefulWhile (stateful, so never stacked either way). An op that
// joins either set changes which values a While gradient stacks.
TEST(WhileAccumulators, TheOpsThatDeclareTheFlags) {
  auto declaring = [](schema::OpFlags flag) {
    std::vector<std::string> names;
    for (const detail::OpDef* op : schema::OpRegistry::global().all())
      if (op->is(flag)) names.emplace_back(op->name);
    std::sort(names.begin(), names.end());
    return names;
  };
  auto sorted = [](std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_EQ(declaring(schema::kCostlyToRecompute),
            sorted({"MatMul", "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
                    "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter", "Call", "If",
                    "While", "StatefulCall", "StatefulIf", "StatefulWhile"}));
  EXPECT_EQ(declaring(schema::kShapeFromShapes),
            sorted({"MatMul", "BiasAdd", "Conv2D", "DepthwiseConv2dNative", "StridedSlice", "TensorArrayRead",
                    "Transpose", "Reshape", "ExpandDims", "Squeeze", "EnsureShape", "Concat", "Pack", "Unpack", "Split",
                    "Gather", "Sum", "Mean", "Max", "Min", "Softmax", "LogSoftmax", "MaxPool", "AvgPool", "Tile", "Pad",
                    "Const", "ResizeImage", "ResizeImageGrad", "EncodeWav"}));
  // The re-run's stacks (while_stacks_test.cpp).
  EXPECT_EQ(declaring(schema::kConsumesInputs), sorted({"While", "StatefulWhile"}));
  EXPECT_EQ(declaring(schema::kFreshOutputs), sorted({"TensorArrayNew"}));
}
