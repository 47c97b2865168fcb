// Weight layouts (ops/matmul_layout.h, src/passes/assign_layouts.cpp): a
// weight no graph write changes, read as a MatMul's b where oneDNN reads b
// faster packed, is given to it packed, made once per value; the products
// keep the dense products' bits; a write is seen;
// trained weights are read and updated packed alone where every read can
// take the packed form; the portable phase leaves neither layouts nor fused
// ops. The packing is
// tested on every machine, the products where oneDNN wants a layout.
#include "passes_test_util.h"

#include <cstdlib>
#include <string>

#include "core/tensor_impl.h"
#include "dense_trainer.h"
#include "function/traced_graph.h"
#include "kernel_test_util.h"
#include "kiln/kiln.h"
#include "ops/adam_update.h"
#include "ops/known_ops.h"
#include "ops/matmul_layout.h"
#include "ops/variable_ops.h"
#include "runtime/dispatch.h"

using namespace kiln;
using namespace kiln::passes_testing;

namespace {

using kiln::testing::optimized;

const ops::MatmulLayout& ba16a64b() { return *ops::find_layout("BA16a64b"); }

int nodes_with(const graph::Graph& g, const char* attr) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->attrs.has(attr);
  return n;
}

Tensor product_of_packed(const Tensor& a, const Tensor& packed, const ops::MatmulLayout& layout) {
  const Tensor in[] = {a, packed};
  const schema::Attrs attrs{
      {"transpose_a", false}, {"transpose_b", false}, {ops::kMatmulBLayout, std::string(layout.name)}};
  return runtime::run_eager(ops::matmul_op(), in, attrs)[0];
}

bool packs(int64_t rows, int64_t k, int64_t n) { return ops::preferred_layout(rows, k, n) != nullptr; }

// 256 inputs, two hidden layers of 512 and 256: the second kernel is read by
// its forward and, transposed, by the first layer's input gradient.
struct Trainer : kiln::testing::DenseTrainer {
  Trainer() : DenseTrainer(256, 512, 256) {}
};

}  // namespace

TEST(Layouts, BA16a64bPutsEachElementInItsPanel) {
  const Tensor b = random::normal({48, 192}, 0, 1, DType::Float32, 1);
  const Tensor panels = ops::pack(ba16a64b(), b, false);
  EXPECT_EQ(panels.shape(), Shape({3, 48, 64}));
  const std::vector<float> dense = b.to_vector<float>(), got = panels.to_vector<float>();
  for (int64_t k = 0; k < 48; ++k)
    for (int64_t n = 0; n < 192; ++n)
      ASSERT_EQ(got[((n / 64) * 48 + k) * 64 + n % 64], dense[k * 192 + n]) << k << ", " << n;
  // Of the transpose: the panels of the transposed matrix.
  expect_bitwise(ops::pack(ba16a64b(), kiln::transpose(b), false), ops::pack(ba16a64b(), b, true));
  int64_t k = 0, n = 0;
  ASSERT_TRUE(ba16a64b().unpacked_shape(panels.shape(), k, n));
  EXPECT_EQ(k, 48);
  EXPECT_EQ(n, 192);
}

// [rows, k] x b, b [k, n] packed (or b [n, k] read transposed, its transpose
// packed), at 1 and 2 threads: the dense product's bits, for each shape
// oneDNN wants packed (MNIST's dense layer, forward and input gradient).
TEST(Layouts, TheProductOfAPackedBIsTheDenseProductsBits) {
  if (!packs(50, 3136, 1024)) GTEST_SKIP() << "this CPU's oneDNN matmul wants no layout";
  struct Case {
    int64_t rows, k, n;
  };
  for (bool transposed : {false, true})
    for (int threads : {1, 2}) {
      kiln::testing::ThreadCount scope(threads);
      for (const Case& c : {Case{50, 3136, 1024}, Case{256, 3136, 1024}, Case{50, 1024, 3136}, Case{64, 1024, 1024},
                            Case{8, 256, 128}, Case{33, 48, 64}}) {
        SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.k << "x" << c.n << (transposed ? " b^T, " : ", ")
                                          << threads << " threads");
        const ops::MatmulLayout* layout = ops::preferred_layout(c.rows, c.k, c.n, transposed);
        if (!layout) continue;
        const Tensor a = random::normal({c.rows, c.k}, 0, 1, DType::Float32, 2);
        const Tensor b = random::normal(transposed ? Shape{c.n, c.k} : Shape{c.k, c.n}, 0, 1, DType::Float32, 3);
        expect_bitwise(kiln::matmul(a, b, false, transposed),
                       product_of_packed(a, ops::pack(*layout, b, transposed), *layout));
      }
    }
}

// Shapes a layout cannot hold are never packed (oneDNN is asked once per
// shape about the others).
TEST(Layouts, OnlyShapesOneDnnWantsPacked) {
  EXPECT_FALSE(packs(4, 256, 512));   // gemv's rows
  EXPECT_FALSE(packs(50, 250, 512));  // k not a multiple of 16
  EXPECT_FALSE(packs(50, 256, 500));  // n not a multiple of 64
  EXPECT_EQ(ops::find_layout("no such layout"), nullptr);
}

TEST(Layouts, MatMulAndReadVariableNeedAMatrixTheLayoutHolds) {
  const Tensor a = random::normal({8, 32}, 0, 1, DType::Float32, 4);
  const Tensor flat = random::normal({32, 64}, 0, 1, DType::Float32, 5);
  const Tensor in[] = {a, flat};
  const schema::Attrs attrs{{"transpose_a", false}, {"transpose_b", false}, {ops::kMatmulBLayout, "BA16a64b"}};
  kiln::testing::expect_error<InvalidArgument>(
      [&] { runtime::run_eager(ops::matmul_op(), in, attrs); },
      {"b_layout=BA16a64b needs a float32 b packed so, transposed only where the layout can, and a matrix a not "
       "transposed; got b float32 (32, 64)"});
  const Tensor value = random::normal({4, 100}, 0, 1, DType::Float32, 6);
  Variable v(value, {.name = "w"});
  const Tensor handle[] = {v.handle()};
  const schema::Attrs read{{"dtype", DType::Float32}, {"shape", Shape{4, 100}}, {ops::kReadLayout, "BA16a64b"}};
  kiln::testing::expect_error<InvalidArgument>(
      [&] { runtime::run_eager(ops::read_variable_op(), handle, read); },
      {"layout=BA16a64b needs a float32 matrix of known shape that layout can hold, got float32 (4, 100)"});
  const schema::Attrs unknown{{"dtype", DType::Float32}, {"shape", Shape{4, 100}}, {ops::kReadLayout, "ab"}};
  kiln::testing::expect_error<InvalidArgument>([&] { runtime::run_eager(ops::read_variable_op(), handle, unknown); },
                                               {"layout=ab: no such weight layout"});
  expect_bitwise(v.read_value(), value);
}

// a b^T reading b's own packed form (a trained dense layer's input gradient
// reading the form its forward reads): the bits of the product reading b
// transposed, at 1 and 2 threads, whether the layout's kernel runs or, where
// it cannot (columns of the product not a multiple of 64, a thread count
// whose oneDNN sums otherwise), oneDNN on the dense b made from it.
TEST(Layouts, TheProductReadingAPackedBTransposedIsTheTransposedProductsBits) {
  const ops::MatmulLayout& layout = ba16a64b();
  struct Case {
    int64_t rows, k, n;
  };
  for (int threads : {1, 2}) {
    kiln::testing::ThreadCount scope(threads);
    for (const Case& c : {Case{50, 1024, 3136}, Case{32, 256, 512}, Case{1, 128, 64}, Case{7, 192, 128},
                          Case{13, 64, 64}, Case{100, 512, 320}, Case{20, 128, 100}}) {
      SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.k << "x" << c.n << ", " << threads << " threads");
      if (!layout.fits(c.n, c.k)) continue;  // b [n, k] packed as it is
      const Tensor a = random::normal({c.rows, c.k}, 0, 1, DType::Float32, 8);
      const Tensor b = random::normal({c.n, c.k}, 0, 1, DType::Float32, 9);
      const Tensor in[] = {a, ops::pack(layout, b, false)};
      const schema::Attrs attrs{
          {"transpose_a", false}, {"transpose_b", true}, {ops::kMatmulBLayout, std::string(layout.name)}};
      expect_bitwise(kiln::matmul(a, b, false, true), runtime::run_eager(ops::matmul_op(), in, attrs)[0]);
    }
  }
}

namespace {

// A weight w with Adam's m and v, and a plain copy of all three that no
// graph reads: update(step) runs Adam on both with the same gradient, a
// tensor or (`banded`) made in bands of 5 rows by the update.
struct AdamPair {
  Shape shape;
  Tensor initial;
  Variable w, m, v, w_plain, m_plain, v_plain;
  Tensor alpha = constant(1e-2f);
  schema::Attrs attrs;
  detail::VariableState& state;
  explicit AdamPair(Shape s)
      : shape(s),
        initial(random::normal(s, 0, 0.1, DType::Float32, 8)),
        w(initial, {.name = "w"}),
        m(zeros(s), {.name = "m"}),
        v(zeros(s), {.name = "v"}),
        w_plain(initial),
        m_plain(zeros(s)),
        v_plain(zeros(s)),
        attrs{{"dtype", DType::Float32}, {"shape", s}, {"beta_1", 0.9}, {"beta_2", 0.999}, {"epsilon", 1e-7}},
        state(*w.state()) {}
  Tensor read_packed() {
    std::lock_guard<std::mutex> lock(state.mutex);
    return state.packed(ba16a64b(), false);
  }
  std::pair<bool, bool> forms() {
    std::lock_guard<std::mutex> lock(state.mutex);
    return {state.holds_dense(), state.holds_packed()};
  }
  static void rows_of(const void* context, int64_t begin, int64_t end, float* out) noexcept {
    const Tensor& g = *static_cast<const Tensor*>(context);
    const int64_t cols = g.shape()[1];
    std::copy(core::data_of<float>(g) + begin * cols, core::data_of<float>(g) + end * cols, out);
  }
  void update(int step, bool banded = false) {
    const Tensor grad = random::normal(shape, 0, 1, DType::Float32, 20 + step);
    const ops::AdamGradient g = banded ? ops::AdamGradient{.shape = shape, .band_rows = 5, .rows = &rows_of,
                                                           .context = &grad}
                                       : ops::AdamGradient{.tensor = grad};
    const Tensor in[] = {w.handle(), m.handle(), v.handle()};
    const Tensor plain[] = {w_plain.handle(), m_plain.handle(), v_plain.handle()};
    ops::run_adam(in, std::span(&g, 1), alpha, attrs, "ApplyAdam");
    ops::run_adam(plain, std::span(&g, 1), alpha, attrs, "ApplyAdam");
  }
};

}  // namespace

// Where only the packed form was read since the update before (a traced
// step reading its weight packed alone), Adam updates it alone, in place,
// through the layout's rows, with the bits of a plain variable's update
// (gradient whole or in bands); a dense read makes the dense value from it,
// and the next update writes the dense value; a reader still holding the
// packed form keeps the one it read; no read at all leaves the value dense.
TEST(Layouts, AdamUpdatesAWeightReadPackedAloneThroughItsRows) {
  AdamPair p(Shape{96, 128});
  const float* before = core::data_of<float>(p.read_packed());
  p.update(0);
  EXPECT_EQ(p.forms(), std::pair(false, true));
  const Tensor updated = p.read_packed();
  EXPECT_EQ(core::data_of<float>(updated), before);  // in place
  expect_bitwise(updated, ops::pack(ba16a64b(), p.w_plain.read_value(), false));
  {
    std::lock_guard<std::mutex> lock(p.state.mutex);
    EXPECT_EQ(p.state.value_shape(), p.shape);
    EXPECT_EQ(p.state.value_dtype(), DType::Float32);
  }
  p.update(1, /*banded=*/true);
  EXPECT_EQ(p.forms(), std::pair(false, true));
  // A dense read (eager code between steps) makes the dense value.
  expect_bitwise(p.w.read_value(), p.w_plain.read_value());
  EXPECT_EQ(p.forms(), std::pair(true, true));
  p.update(2);
  EXPECT_EQ(p.forms(), std::pair(true, false));
  expect_bitwise(p.w.read_value(), p.w_plain.read_value());
  p.update(3);  // the dense value was read since: dense again
  EXPECT_EQ(p.forms(), std::pair(true, false));
  // Held across an update in the packed form alone: that one writes a new one.
  const Tensor held = p.read_packed();
  const std::vector<float> held_values = held.to_vector<float>();
  p.update(4);
  EXPECT_EQ(p.forms(), std::pair(false, true));
  EXPECT_EQ(held.to_vector<float>(), held_values);
  expect_bitwise(p.read_packed(), ops::pack(ba16a64b(), p.w_plain.read_value(), false));
  p.update(5);
  // No read at all: the next update makes the dense value and drops the packed form.
  p.update(6, /*banded=*/true);
  EXPECT_EQ(p.forms(), std::pair(true, false));
  expect_bitwise(p.w.read_value(), p.w_plain.read_value());
  expect_bitwise(p.m.read_value(), p.m_plain.read_value());
  expect_bitwise(p.v.read_value(), p.v_plain.read_value());
  // An assign drops the packed form.
  p.read_packed();
  p.w.assign(zeros(p.shape));
  EXPECT_EQ(p.forms(), std::pair(true, false));
}

// A trained dense layer's kernel read by its forward and, transposed, by the
// layer before's input gradient, where the layout multiplies so: read
// packed alone, and updated so, with the eager bits; eager reads and writes
// between steps see and set the current value.
TEST(Layouts, TrainingReadsAndUpdatesTheKernelsPackedAlone) {
  const Tensor x = random::normal({32, 256}, 0, 1, DType::Float32, 7);
  const bool forward = packs(32, 256, 512) && packs(32, 512, 256);
  const bool transposed = forward && ba16a64b().multiplies_transposed(32, 256, 512);
  kiln::testing::expect_traced_training_is_eagers<Trainer>(x, [&](const graph::Graph& g) {
    EXPECT_EQ(nodes_with(g, ops::kReadLayout), forward ? (transposed ? 2 : 1) : 0) << g.to_string();
    EXPECT_EQ(nodes_with(g, ops::kMatmulBLayout), forward ? (transposed ? 3 : 1) : 0) << g.to_string();
  });
  if (!forward) return;
  Trainer traced, eager;
  auto f = traced.traced();
  for (int step = 0; step < 2; ++step) kiln::testing::step_both(f, traced, eager, x);
  for (int layer : {0, 1}) {
    detail::VariableState& state = *traced.kernel(layer).state();
    std::lock_guard<std::mutex> lock(state.mutex);
    EXPECT_EQ(state.holds_dense(), layer == 1 && !transposed) << "kernel " << layer;
    EXPECT_EQ(state.holds_packed(), layer == 0 || transposed) << "kernel " << layer;
  }
  kiln::testing::expect_same_training(traced, eager);
  const Tensor replacement = random::normal({256, 512}, 0, 0.1, DType::Float32, 9);
  kiln::testing::step_both(f, traced, eager, x,
                           [&](kiln::testing::DenseTrainer& t) { t.kernel(0).assign(replacement); });
  kiln::testing::step_both(f, traced, eager, x,
                           [&](kiln::testing::DenseTrainer& t) { (void)t.kernel(0).read_value(); });
  kiln::testing::expect_same_training(traced, eager);
}

// Where MatMul's rule copies b into longer rows (forced here, so that it
// runs on every machine: the bits are the same either way), the kernels are
// kept in longer rows (ab_padded), read by their forwards and the input
// gradient, with the eager bits.
TEST(Layouts, TrainingKeepsTheKernelsInLongerRowsWhereMatMulWouldCopyThem) {
  kiln::testing::MatmulPaddingMode mode(ops::MatmulBPadding::kAlways);
  struct Wide : kiln::testing::DenseTrainer {
    Wide() : DenseTrainer(64, 1000) {}  // 1000 columns: not panels
  };
  const Tensor x = random::normal({32, 64}, 0, 1, DType::Float32, 7);
  kiln::testing::expect_traced_training_is_eagers<Wide>(x, [&](const graph::Graph& g) {
    const std::string text = g.to_string();
    EXPECT_EQ(nodes_with(g, ops::kReadLayout), 2) << text;
    EXPECT_EQ(nodes_with(g, ops::kMatmulBLayout), 3) << text;
    EXPECT_NE(text.find("layout=\"ab_padded\""), std::string::npos) << text;
  });
}

// Another writer (SGD's assign_sub) would remake the packed form every step:
// the weight is read dense.
TEST(Layouts, WeightsOtherWritersUpdateAreReadDense) {
  const Tensor x = random::normal({32, 256}, 0, 1, DType::Float32, 7);
  nn::Sequential model{"mlp"};
  model.add(nn::Dense(512, {.activation = "relu", .input_shape = Shape{256}, .seed = 1}));
  nn::SGD opt(0.01);
  auto f = kiln::function(kiln::testing::StepFn([&](const Tensor& x) {
    GradientTape tape;
    Tensor loss = kiln::sum(square(model(x, true)));
    std::vector<Variable> vars = model.trainable_variables();
    opt.apply_gradients(tape.gradient(loss, vars), vars);
  }));
  EXPECT_EQ(nodes_with(optimized(f, x), ops::kReadLayout), 0) << optimized(f, x).to_string();
}

// A served weight (a variable the graph only reads), read by a dense layer's
// forward and transposed (a tied embedding's logits): each product reads it
// packed, made once and kept from call to call; an assign between calls is
// seen, and drops the packed forms.
TEST(Layouts, AServedWeightIsReadPackedAndAWriteIsSeen) {
  if (!packs(32, 256, 512) || !packs(32, 512, 256)) GTEST_SKIP() << "this CPU's oneDNN matmul wants no layout";
  Variable w(random::normal({256, 512}, 0, 0.1, DType::Float32, 14), {.name = "w"});
  const Tensor x = random::normal({32, 256}, 0, 1, DType::Float32, 15);
  const Tensor h = random::normal({32, 512}, 0, 1, DType::Float32, 16);
  auto layer = [&](const Tensor& x, const Tensor& h) {
    return kiln::sum(kiln::relu(kiln::matmul(x, w.read_value()))) +
           kiln::sum(kiln::matmul(h, w.read_value(), false, true));
  };
  auto f = kiln::function(std::function<Tensor(const Tensor&, const Tensor&)>(layer));
  const graph::Graph& g = f.get_concrete_function(x, h).impl()->plan->graph();
  EXPECT_EQ(nodes_with(g, ops::kReadLayout), 2) << g.to_string();
  EXPECT_EQ(nodes_with(g, ops::kReadTransposed), 1) << g.to_string();
  EXPECT_EQ(nodes_with(g, ops::kMatmulBLayout), 2) << g.to_string();
  detail::VariableState& state = *w.state();
  auto packed = [&] {
    std::lock_guard<std::mutex> lock(state.mutex);
    return core::data_of<float>(state.packed(ba16a64b(), false));
  };
  expect_bitwise(layer(x, h), f(x, h));
  const float* buffer = packed();
  expect_bitwise(layer(x, h), f(x, h));
  EXPECT_EQ(packed(), buffer);
  w.assign(random::normal({256, 512}, 0, 0.1, DType::Float32, 17));
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    EXPECT_FALSE(state.holds_packed());
  }
  expect_bitwise(layer(x, h), f(x, h));
  w.assign_add(random::normal({256, 512}, 0, 0.1, DType::Float32, 18));
  expect_bitwise(layer(x, h), f(x, h));
}

// A captured eager tensor read as a forward's b, and transposed: a Const
// packed once, when the plan is built; the same bits call after call.
TEST(Layouts, ACapturedWeightIsPackedOnce) {
  if (!packs(32, 256, 512) || !packs(32, 512, 256)) GTEST_SKIP() << "this CPU's oneDNN matmul wants no layout";
  const Tensor w = random::normal({256, 512}, 0, 1, DType::Float32, 12);
  const Tensor x = random::normal({32, 256}, 0, 1, DType::Float32, 7);
  const Tensor y = random::normal({32, 512}, 0, 1, DType::Float32, 13);
  auto both = kiln::function([&](const Tensor& x, const Tensor& y) {
    return kiln::sum(kiln::relu(kiln::matmul(x, w))) + kiln::sum(kiln::matmul(y, w, false, true));
  });
  const std::string g = both.get_concrete_function(x, y).impl()->plan->graph().to_string();
  EXPECT_NE(g.find("capture_BA16a64b = Const() {value=<float32 (8, 256, 64)>}"), std::string::npos) << g;
  EXPECT_NE(g.find("capture_BA16a64b_of_transpose = Const() {value=<float32 (4, 512, 64)>}"), std::string::npos)
      << g;
  for (int call = 0; call < 2; ++call)
    expect_bitwise(kiln::sum(kiln::relu(kiln::matmul(x, w))) + kiln::sum(kiln::matmul(y, w, false, true)),
                   both(x, y));
}

// With the pass off, reads stay dense.
TEST(Layouts, TheSwitchKeepsReadsDense) {
  if (!packs(32, 256, 512)) GTEST_SKIP() << "this CPU's oneDNN matmul wants no layout";
  Variable w(random::normal({256, 512}, 0, 0.1, DType::Float32, 14), {.name = "w"});
  const Tensor x = random::normal({32, 256}, 0, 1, DType::Float32, 15);
  setenv("KILN_DISABLE_PASSES", "layouts", 1);
  auto f = kiln::function([&](const Tensor& x) { return kiln::matmul(x, w.read_value()); });
  const graph::Graph& g = optimized(f, x);
  unsetenv("KILN_DISABLE_PASSES");
  EXPECT_EQ(nodes_with(g, ops::kReadLayout), 0) << g.to_string();
  expect_bitwise(kiln::matmul(x, w.read_value()), f(x));
}

// The portable phase (what ONNX export reads) leaves standard ops: a
// training step keeps its MatMul, BiasAdd, Relu and ApplyAdam nodes, which
// the CPU phase fuses.
TEST(Layouts, ThePortablePhaseLeavesNoLayoutsOrFusedOps) {
  const Tensor x = random::normal({32, 256}, 0, 1, DType::Float32, 7);
  Trainer trainer;
  auto step = trainer.traced();
  const graph::Graph& traced = *step.get_concrete_function(x).impl()->graph;
  const auto portable = passes::optimize(traced, passes::PassOptions::portable());
  const auto all = passes::optimize(traced, passes::PassOptions{});
  EXPECT_EQ(portable->to_string().find("Fused"), std::string::npos) << portable->to_string();
  EXPECT_EQ(nodes_with(*portable, ops::kReadLayout) + nodes_with(*portable, ops::kMatmulBLayout), 0);
  int adam = 0;
  for (const auto& n : portable->nodes()) adam += n->op == &ops::apply_adam_op();
  EXPECT_EQ(adam, 6) << portable->to_string();  // 3 kernels, 3 biases
  EXPECT_NE(all->to_string().find("FusedApplyAdam"), std::string::npos) << all->to_string();
}
