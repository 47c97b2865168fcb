// Panels (ops/nn_internal.h, src/passes/pad_weight_rows.cpp): where oneDNN's
// matmul wants its b in column panels (its AVX-512 brgemm), a weight read as
// the b of a dense layer's forward is given to it so, and a weight no graph
// updates read transposed (h e^T) in the panels of its transpose. The
// products have the dense products' bits (a product reading a weight's own
// panels transposed, a trained dense layer's input gradient, too); Adam keeps
// the panels of the value and the dense value both while a graph reads the
// panels, so traced training gives the eager bits; eager reads and writes between steps see and set the
// current value; a captured weight is put in panels once. The layouts and
// Adam's forms are tested on every machine, the products where oneDNN reads
// panels.
#include "passes_test_util.h"

#include <cstdlib>
#include <string>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/tensor_impl.h"
#include "dense_trainer.h"
#include "function/traced_graph.h"
#include "kernel_test_util.h"
#include "kiln/kiln.h"
#include "ops/adam_update.h"
#include "ops/known_ops.h"
#include "ops/nn_internal.h"
#include "ops/variable_ops.h"
#include "runtime/dispatch.h"

using namespace kiln;
using namespace kiln::passes_testing;

namespace {

using kiln::testing::expect_same_training;
using kiln::testing::expect_same_variables;
using kiln::testing::optimized;

constexpr int64_t kWidth = ops::kMatmulPanelWidth;

// 256 inputs, 512 units: the first kernel (256 x 512) is read in panels by its
// forward and densely by nothing else; the second (512 x 3) has too few columns.
struct Trainer : kiln::testing::DenseTrainer {
  Trainer() : DenseTrainer(256, 512) {}
};

// Then a second hidden layer of 256: its kernel (512 x 256) is read in panels
// by its forward, and transposed by the first layer's input gradient.
struct DeeperTrainer : kiln::testing::DenseTrainer {
  DeeperTrainer() : DenseTrainer(256, 512, 256) {}
};

Tensor batch() { return random::normal({32, 256}, 0, 1, DType::Float32, 7); }

bool reads_panels() { return ops::matmul_reads_panels(32, 256, 512); }

#define SKIP_UNLESS_PANELS()                                                   \
  if (!reads_panels()) GTEST_SKIP() << "this CPU's oneDNN matmul reads no panels"

int nodes_with(const graph::Graph& g, const char* attr) {
  int n = 0;
  for (const auto& node : g.nodes()) n += node->attrs.has(attr);
  return n;
}

Tensor product_of_panels(const Tensor& a, const Tensor& panels) {
  const Tensor in[] = {a, panels};
  const schema::Attrs attrs{{"transpose_a", false}, {"transpose_b", false}, {ops::kMatmulBPanels, kWidth}};
  return runtime::run_eager(ops::matmul_op(), in, attrs)[0];
}

const detail::OpDef& adam() { return ops::apply_adam_op(); }

}  // namespace

TEST(Panels, EachElementGoesToItsPanel) {
  const Tensor b = random::normal({48, 192}, 0, 1, DType::Float32, 1);
  const Tensor panels = ops::in_panels(b);
  EXPECT_EQ(panels.shape(), Shape({3, 48, 64}));
  const std::vector<float> dense = b.to_vector<float>(), got = panels.to_vector<float>();
  for (int64_t k = 0; k < 48; ++k)
    for (int64_t n = 0; n < 192; ++n)
      ASSERT_EQ(got[((n / kWidth) * 48 + k) * kWidth + n % kWidth], dense[k * 192 + n]) << k << ", " << n;
  // A few rows at a time (Adam's bands) put them in the same places.
  std::vector<float> by_rows(got.size(), 0.0f);
  for (int64_t first = 0; first < 48; first += 20)
    ops::rows_into_panels(dense.data() + first * 192, first, std::min<int64_t>(20, 48 - first), 48, 192, by_rows.data());
  EXPECT_EQ(by_rows, got);
}

// The panels of the transpose: element (r, c) of a [k, n] matrix at
// ((r / 64) * n + c) * 64 + r % 64. Bands of rows that start and end inside
// a group of 64, and columns not a multiple of 8, land in the same places; so
// do they where the panels' buffer is not aligned for streaming stores.
TEST(Panels, EachElementGoesToItsPlaceInThePanelsOfTheTranspose) {
  const int64_t k = 192, n = 100;
  const Tensor b = random::normal({k, n}, 0, 1, DType::Float32, 1);
  const Tensor panels = ops::in_transposed_panels(b);
  EXPECT_EQ(panels.shape(), Shape({3, 100, 64}));
  const std::vector<float> dense = b.to_vector<float>(), got = panels.to_vector<float>();
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c)
      ASSERT_EQ(got[((r / kWidth) * n + c) * kWidth + r % kWidth], dense[r * n + c]) << r << ", " << n;
  expect_bitwise(panels, ops::in_panels(kiln::transpose(b)));
  for (int64_t misalign : {0, 1}) {
    SCOPED_TRACE(misalign);
    std::vector<float> buffer(got.size() + 8, 0.0f);
    float* to = buffer.data() + (8 - reinterpret_cast<std::uintptr_t>(buffer.data()) / 4 % 8) % 8 + misalign;
    for (int64_t first = 0; first < k; first += 70)
      ops::rows_into_transposed_panels(dense.data() + first * n, first, std::min<int64_t>(70, k - first), n, to);
    EXPECT_EQ(std::vector<float>(to, to + got.size()), got);
  }
}

// [rows, k] x b, b [k, n] in panels (or, `transposed`, b [n, k] read
// transposed and in the panels of its transpose), at 1 and 2 threads: the
// dense product's bits, for each shape oneDNN reads so.
namespace {
struct ProductShape {
  int64_t rows, k, n;
};
void expect_panel_products_bitwise(std::initializer_list<ProductShape> shapes, bool transposed) {
  for (int threads : {1, 2}) {
    kiln::testing::ThreadCount scope(threads);
    for (const ProductShape& c : shapes) {
      SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.k << "x" << c.n << ", " << threads << " threads");
      if (!ops::matmul_reads_panels(c.rows, c.k, c.n)) continue;
      const Tensor a = random::normal({c.rows, c.k}, 0, 1, DType::Float32, 2);
      const Tensor b = random::normal(transposed ? Shape{c.n, c.k} : Shape{c.k, c.n}, 0, 1, DType::Float32, 3);
      expect_bitwise(kiln::matmul(a, b, false, transposed),
                     product_of_panels(a, transposed ? ops::in_transposed_panels(b) : ops::in_panels(b)));
    }
  }
}
}  // namespace

TEST(Panels, TheProductOfBInPanelsIsTheDenseProductsBits) {
  if (!ops::matmul_reads_panels(50, 3136, 1024)) GTEST_SKIP() << "this CPU's oneDNN matmul reads no panels";
  expect_panel_products_bitwise({{50, 3136, 1024}, {256, 3136, 1024}, {64, 1024, 1024}, {8, 256, 128}, {33, 48, 64}},
                                false);
}

// h w^T with w's transpose in panels: the bits of the product that reads w
// transposed (at MNIST's input-gradient shapes too).
TEST(Panels, TheProductOfTheTransposesPanelsIsTheTransposedProductsBits) {
  if (!ops::matmul_reads_panels(50, 1024, 3136)) GTEST_SKIP() << "this CPU's oneDNN matmul reads no panels";
  expect_panel_products_bitwise({{50, 1024, 3136}, {256, 1024, 3136}, {32, 256, 512}, {8, 128, 256}, {33, 64, 192}},
                                true);
}

// a b^T with b's own panels (a dense layer's input gradient reading the
// panels its forward read): the bits of the product reading b transposed, at
// 1 and 2 threads, whether Kiln's kernel runs (rows in blocks of 6, 2 and 1;
// more than one block of rows) or, where it cannot (columns of the product
// not a multiple of 64, a transposed a, no AVX-512), oneDNN on the dense b.
namespace {
Tensor product_of_transposed_panels(const Tensor& a, const Tensor& panels, bool transpose_a = false) {
  const Tensor in[] = {a, panels};
  const schema::Attrs attrs{{"transpose_a", transpose_a}, {"transpose_b", true}, {ops::kMatmulBPanels, kWidth}};
  return runtime::run_eager(ops::matmul_op(), in, attrs)[0];
}
}  // namespace

TEST(Panels, TheProductReadingBsPanelsTransposedIsTheTransposedProductsBits) {
  for (int threads : {1, 2}) {
    kiln::testing::ThreadCount scope(threads);
    for (const ProductShape& c : std::initializer_list<ProductShape>{
             {50, 1024, 3136}, {256, 1024, 3136}, {32, 256, 512}, {1, 128, 64}, {7, 192, 128}, {13, 64, 64},
             {100, 512, 320}, {20, 128, 100}}) {
      SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.k << "x" << c.n << ", " << threads << " threads");
      const Tensor a = random::normal({c.rows, c.k}, 0, 1, DType::Float32, 8);
      const Tensor b = random::normal({c.n, c.k}, 0, 1, DType::Float32, 9);
      expect_bitwise(kiln::matmul(a, b, false, true), product_of_transposed_panels(a, ops::in_panels(b)));
    }
  }
  const Tensor a = random::normal({64, 20}, 0, 1, DType::Float32, 10);
  const Tensor b = random::normal({128, 64}, 0, 1, DType::Float32, 11);
  expect_bitwise(kiln::matmul(a, b, true, true), product_of_transposed_panels(a, ops::in_panels(b), true));
}

// Where Kiln's kernel runs and oneDNN's brgemm reads the forward's panels,
// the kernel finds oneDNN's sums for MNIST's input gradient (else that
// product would read the dense weight, and lose its speed, not its bits).
TEST(Panels, TheKernelReadingPanelsTransposedSumsAsOneDnnAtMnistsShape) {
  if (!ops::can_multiply_by_transposed_panels(1024, 3136, kWidth)) GTEST_SKIP() << "no AVX-512 for Kiln's kernel";
  if (!ops::matmul_reads_panels(50, 3136, 1024)) GTEST_SKIP() << "this CPU's oneDNN matmul reads no panels";
  for (int threads : {1, 2}) {
    kiln::testing::ThreadCount scope(threads);
    EXPECT_NE(ops::matmul_transposed_panels_chain(50, 1024, 3136), 0) << threads << " threads";
    EXPECT_TRUE(ops::matmul_reads_transposed_from_panels(50, 1024, 3136)) << threads << " threads";
  }
  EXPECT_FALSE(ops::matmul_reads_transposed_from_panels(256, 1024, 3136));  // more rows: oneDNN is as fast
  EXPECT_FALSE(ops::can_multiply_by_transposed_panels(128, 100, kWidth));   // columns not a multiple of 64
}

// Shapes oneDNN cannot have in panels are never given so (it is asked once
// per shape about the others).
TEST(Panels, OnlyShapesOneDnnWantsInPanels) {
  EXPECT_FALSE(ops::matmul_reads_panels(4, 256, 512));   // gemv's rows
  EXPECT_FALSE(ops::matmul_reads_panels(50, 250, 512));  // k not a multiple of 16
  EXPECT_FALSE(ops::matmul_reads_panels(50, 256, 500));  // n not a multiple of 64
  // Without AVX-512 oneDNN runs no brgemm, which is what wants them.
  const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  if ((isa & avx512) != avx512) EXPECT_FALSE(ops::matmul_reads_panels(50, 3136, 1024));
}

TEST(Panels, MatMulAndReadVariableNeedPanelsOfAFloatMatrix) {
  const Tensor a = random::normal({8, 32}, 0, 1, DType::Float32, 4);
  const Tensor flat = random::normal({32, 64}, 0, 1, DType::Float32, 5);
  const Tensor in[] = {a, flat};
  const schema::Attrs attrs{{"transpose_a", false}, {"transpose_b", false}, {ops::kMatmulBPanels, kWidth}};
  kiln::testing::expect_error<InvalidArgument>(
      [&] { runtime::run_eager(ops::matmul_op(), in, attrs); },
      {"b_panels=64 needs a float32 b of known shape [columns / 64, rows, 64] and a matrix a; got b float32 (32, 64)"});
  const Tensor value = random::normal({4, 100}, 0, 1, DType::Float32, 6);
  Variable v(value, {.name = "w"});
  const Tensor handle[] = {v.handle()};
  const schema::Attrs read{{"dtype", DType::Float32}, {"shape", Shape{4, 100}}, {ops::kReadPanels, kWidth}};
  kiln::testing::expect_error<InvalidArgument>(
      [&] { runtime::run_eager(ops::read_variable_op(), handle, read); },
      {"panels=64 needs a float32 matrix of known shape whose columns are a multiple of 64, and no other form; got "
       "float32 (4, 100)"});
  const schema::Attrs transposed{
      {"dtype", DType::Float32}, {"shape", Shape{4, 100}}, {ops::kReadTransposedPanels, kWidth}};
  kiln::testing::expect_error<InvalidArgument>(
      [&] { runtime::run_eager(ops::read_variable_op(), handle, transposed); },
      {"transposed_panels=64 needs a float32 matrix of known shape whose rows are a multiple of 64, and no other "
       "form; got float32 (4, 100)"});
  expect_bitwise(v.read_value(), value);
}

// A weight w with Adam's m and v, and a plain copy of all three that no
// graph reads: update(step) runs Adam on both with the same gradient.
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
  Tensor read_panels() {
    std::lock_guard<std::mutex> lock(state.mutex);
    return state.value_in_panels();
  }
  // Whether the dense value and the panels are held.
  std::pair<bool, bool> forms() {
    std::lock_guard<std::mutex> lock(state.mutex);
    return {state.holds_dense(), state.holds_panels()};
  }
  void update(int step) {
    const Tensor grad = random::normal(shape, 0, 1, DType::Float32, 20 + step);
    const Tensor in[] = {w.handle(), m.handle(), v.handle(), grad, alpha};
    const Tensor plain[] = {w_plain.handle(), m_plain.handle(), v_plain.handle(), grad, alpha};
    runtime::run_eager(adam(), in, attrs);
    runtime::run_eager(adam(), plain, attrs);
  }
};

// Adam's update of a variable whose panels and dense value were both read
// since the update before writes the dense value (the bits of the update of
// a plain variable) and the panels of it; the next update after no such read
// drops them. A reader still holding the panels keeps the ones it read.
TEST(Panels, AdamWritesBothFormsWhileAGraphReadsThePanels) {
  AdamPair p(Shape{32, 128});
  Variable &w = p.w, &w_plain = p.w_plain;
  const Tensor initial = p.initial;
  auto read_panels = [&] { return p.read_panels(); };
  auto holds_panels = [&] { return p.forms().second; };
  auto update = [&](int step) { p.update(step); };
  const float* before = core::data_of<float>(read_panels());
  w.read_value();
  update(0);
  ASSERT_TRUE(holds_panels());
  EXPECT_TRUE(w.state()->holds_dense());
  expect_bitwise(w.read_value(), w_plain.read_value());
  const Tensor updated = read_panels();
  EXPECT_EQ(core::data_of<float>(updated), before);  // written in place: no reader held them
  expect_bitwise(updated, ops::in_panels(w_plain.read_value()));

  // Held across the next update: that one writes new panels.
  const Tensor held = read_panels();
  const std::vector<float> held_values = held.to_vector<float>();
  update(1);
  EXPECT_EQ(held.to_vector<float>(), held_values);
  expect_bitwise(read_panels(), ops::in_panels(w_plain.read_value()));
  expect_bitwise(w.read_value(), w_plain.read_value());

  // Read since: kept once more; then an update with no read between drops them.
  update(2);
  EXPECT_TRUE(holds_panels());
  update(3);
  EXPECT_FALSE(holds_panels());
  expect_bitwise(w.read_value(), w_plain.read_value());
  expect_bitwise(read_panels(), ops::in_panels(w_plain.read_value()));
  // An assign drops them too.
  w.assign(initial);
  EXPECT_FALSE(holds_panels());
}

// Where only the panels were read since the update before (a traced step
// whose dense layer reads its weight in panels alone), Adam updates the
// panels alone, in place, with the bits of a plain variable's update; a
// dense read makes the dense value from them, and the next update writes
// both; a reader still holding the panels keeps the ones it read.
TEST(Panels, AdamUpdatesThePanelsAloneWhereNoDenseReadCameBetween) {
  AdamPair p(Shape{96, 128});
  Variable &w = p.w, &w_plain = p.w_plain;
  detail::VariableState& state = p.state;
  const Shape& shape = p.shape;
  auto read_panels = [&] { return p.read_panels(); };
  auto forms = [&] { return p.forms(); };
  auto update = [&](int step) { p.update(10 + step); };
  const float* before = core::data_of<float>(read_panels());
  update(0);
  EXPECT_EQ(forms(), std::pair(false, true));
  const Tensor updated = read_panels();
  EXPECT_EQ(core::data_of<float>(updated), before);  // in place
  expect_bitwise(updated, ops::in_panels(w_plain.read_value()));
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    EXPECT_EQ(state.value_shape(), shape);
    EXPECT_EQ(state.value_dtype(), DType::Float32);
  }
  // A dense read (eager code between steps) makes the dense value.
  expect_bitwise(w.read_value(), w_plain.read_value());
  EXPECT_EQ(forms(), std::pair(true, true));
  update(1);
  EXPECT_EQ(forms(), std::pair(true, true));
  // Held across an update in panels alone: that one writes new panels.
  const Tensor held = read_panels();
  const std::vector<float> held_values = held.to_vector<float>();
  update(2);
  EXPECT_EQ(forms(), std::pair(false, true));
  EXPECT_EQ(held.to_vector<float>(), held_values);
  EXPECT_NE(core::data_of<float>(read_panels()), core::data_of<float>(held));
  expect_bitwise(read_panels(), ops::in_panels(w_plain.read_value()));
  update(3);
  EXPECT_EQ(forms(), std::pair(false, true));
  // No read at all: the next update makes the dense value and drops the panels.
  update(4);
  EXPECT_EQ(forms(), std::pair(true, false));
  expect_bitwise(w.read_value(), w_plain.read_value());
}

// The panels of the transpose are for weights no graph updates: any update,
// Adam's too, drops them, and the next read makes them from the new value.
TEST(Panels, AnUpdateDropsThePanelsOfTheTranspose) {
  const Shape shape{128, 128};
  const Tensor initial = random::normal(shape, 0, 0.1, DType::Float32, 8);
  Variable w(initial, {.name = "w"}), m(zeros(shape), {.name = "m"}), v(zeros(shape), {.name = "v"});
  const Tensor alpha = constant(1e-2f), grad = random::normal(shape, 0, 1, DType::Float32, 20);
  const schema::Attrs attrs{{"dtype", DType::Float32}, {"shape", shape}, {"beta_1", 0.9}, {"beta_2", 0.999},
                            {"epsilon", 1e-7}};
  detail::VariableState& state = *w.state();
  using ops::PanelsOf;
  auto read = [&](PanelsOf which) {
    std::lock_guard<std::mutex> lock(state.mutex);
    return state.value_in_panels(which);
  };
  auto holds = [&](PanelsOf which) {
    std::lock_guard<std::mutex> lock(state.mutex);
    return state.holds_panels(which);
  };
  expect_bitwise(read(PanelsOf::kTranspose), ops::in_transposed_panels(initial));
  read(PanelsOf::kValue);
  const Tensor in[] = {w.handle(), m.handle(), v.handle(), grad, alpha};
  runtime::run_eager(adam(), in, attrs);
  EXPECT_TRUE(holds(PanelsOf::kValue));
  EXPECT_FALSE(holds(PanelsOf::kTranspose));
  expect_bitwise(read(PanelsOf::kTranspose), ops::in_transposed_panels(w.read_value()));
  w.assign(initial);
  EXPECT_FALSE(holds(PanelsOf::kTranspose));
  expect_bitwise(read(PanelsOf::kTranspose), ops::in_transposed_panels(initial));
}

TEST(PanelWeights, TrainingWithTheKernelInPanelsKeepsTheEagerBits) {
  SKIP_UNLESS_PANELS();
  kiln::testing::expect_traced_training_is_eagers<Trainer>(batch(), [](const graph::Graph& g) {
    // The first kernel's forward alone: the second has 3 columns.
    EXPECT_EQ(nodes_with(g, ops::kReadPanels), 1) << g.to_string();
    EXPECT_EQ(nodes_with(g, ops::kMatmulBPanels), 1) << g.to_string();
  });
}

// A deeper layer's kernel is read transposed by the input gradient of the
// layer before. Adam writes the panels of the value alone, so training reads
// no panels of the transpose: that product reads the forward's panels with
// Kiln's kernel where it runs (else the dense value), with the eager bits.
TEST(PanelWeights, TrainingReadsTheInputGradientsBInTheForwardsPanels) {
  SKIP_UNLESS_PANELS();
  const bool transposed_read = ops::matmul_reads_transposed_from_panels(32, 256, 512);
  kiln::testing::expect_traced_training_is_eagers<DeeperTrainer>(batch(), [&](const graph::Graph& g) {
    EXPECT_EQ(nodes_with(g, ops::kReadPanels), 2) << g.to_string();
    EXPECT_EQ(nodes_with(g, ops::kReadTransposedPanels), 0) << g.to_string();
    EXPECT_EQ(nodes_with(g, ops::kMatmulBPanels), transposed_read ? 3 : 2) << g.to_string();
    int reading_panels_transposed = 0;
    for (const auto& n : g.nodes())
      if (n->attrs.has(ops::kMatmulBPanels) && n->attrs.get_bool("transpose_b")) {
        ++reading_panels_transposed;
        EXPECT_TRUE(n->inputs[1].node->attrs.has(ops::kReadPanels)) << g.to_string();
        EXPECT_EQ(n->inputs[1].node->outputs[0].shape, (Shape{256 / kWidth, 512, kWidth})) << g.to_string();
      }
    EXPECT_EQ(reading_panels_transposed, transposed_read ? 1 : 0) << g.to_string();
  });
  // Each kernel's graph reads its panels alone (the first one's forward is
  // its only use; the second one's input gradient reads them too where the
  // kernel runs), so Adam keeps the panels alone.
  const Tensor x = batch();
  DeeperTrainer traced, eager;
  auto f = traced.traced();
  for (int step = 0; step < 2; ++step) kiln::testing::step_both(f, traced, eager, x);
  for (int layer : {0, 1}) {
    detail::VariableState& state = *traced.kernel(layer).state();
    std::lock_guard<std::mutex> lock(state.mutex);
    EXPECT_EQ(state.holds_dense(), layer == 1 && !transposed_read) << "kernel " << layer;
    EXPECT_TRUE(state.holds_panels()) << "kernel " << layer;
  }
}

// A served weight read transposed (a tied embedding's logits, h e^T): the
// graph reads it in the panels of its transpose, made once and kept from call
// to call; an assign between calls is seen.
TEST(PanelWeights, AServedWeightReadTransposedIsReadInThePanelsOfItsTranspose) {
  if (!ops::matmul_reads_panels(32, 256, 512)) GTEST_SKIP() << "this CPU's oneDNN matmul reads no panels";
  Variable e(random::normal({512, 256}, 0, 0.1, DType::Float32, 14), {.name = "embedding"});
  const Tensor h = random::normal({32, 256}, 0, 1, DType::Float32, 15);
  auto logits = [&](const Tensor& h) { return kiln::matmul(h, e.read_value(), false, true); };
  auto f = kiln::function(std::function<Tensor(const Tensor&)>(logits));
  const graph::Graph& g = optimized(f, h);
  EXPECT_EQ(nodes_with(g, ops::kReadTransposedPanels), 1) << g.to_string();
  EXPECT_NE(g.to_string().find("transpose_b=false, b_panels=64"), std::string::npos) << g.to_string();
  detail::VariableState& state = *e.state();
  auto panels = [&] {
    std::lock_guard<std::mutex> lock(state.mutex);
    return core::data_of<float>(state.value_in_panels(ops::PanelsOf::kTranspose));
  };
  expect_bitwise(logits(h), f(h));
  const float* buffer = panels();
  expect_bitwise(logits(h), f(h));
  EXPECT_EQ(panels(), buffer);
  e.assign(random::normal({512, 256}, 0, 0.1, DType::Float32, 16));
  expect_bitwise(logits(h), f(h));
}

// The panels stay in one buffer from step to step (Adam writes them in
// place), and eager reads and writes between steps see and set the value.
TEST(PanelWeights, EagerReadsAndWritesBetweenStepsSeeTheCurrentValue) {
  SKIP_UNLESS_PANELS();
  const Tensor x = batch();
  Trainer traced, eager;
  auto f = traced.traced();
  for (int warm = 0; warm < 2; ++warm) kiln::testing::step_both(f, traced, eager, x);
  detail::VariableState& state = *traced.kernel(0).state();
  auto panels = [&] {
    std::lock_guard<std::mutex> lock(state.mutex);
    return core::data_of<float>(state.value_in_panels());
  };
  const float* buffer = panels();
  kiln::testing::step_both(f, traced, eager, x);
  EXPECT_EQ(panels(), buffer);
  expect_bitwise(traced.kernel(0).read_value(), eager.kernel(0).read_value());
  const Tensor replacement = random::normal({256, 512}, 0, 0.1, DType::Float32, 9);
  kiln::testing::step_both(f, traced, eager, x,
                           [&](kiln::testing::DenseTrainer& t) { t.kernel(0).assign(replacement); });
  expect_same_training(traced, eager);
}

// A captured eager tensor read as a forward's b: one Const in panels, made
// when the plan is built; the same bits call after call. A product that
// reads it transposed (a tied embedding's logits, h e^T) gets the panels of
// its transpose.
TEST(PanelWeights, ACapturedWeightIsPutInPanelsOnce) {
  SKIP_UNLESS_PANELS();
  const Tensor w = random::normal({256, 512}, 0, 1, DType::Float32, 12), x = batch();
  const Tensor y = random::normal({32, 512}, 0, 1, DType::Float32, 13);
  auto dense = kiln::function([&](const Tensor& x) { return kiln::relu(kiln::matmul(x, w)); });
  const std::string g = optimized(dense, x).to_string();
  EXPECT_NE(g.find("capture_panels = Const() {value=<float32 (8, 256, 64)>} : float32[8,256,64]"), std::string::npos)
      << g;
  for (int call = 0; call < 2; ++call) expect_bitwise(kiln::relu(kiln::matmul(x, w)), dense(x));
  auto both = kiln::function(
      [&](const Tensor& x, const Tensor& y) { return kiln::sum(kiln::matmul(x, w)) + kiln::sum(kiln::matmul(y, w, false, true)); });
  const graph::Graph& bg = both.get_concrete_function(x, y).impl()->plan->graph();
  EXPECT_EQ(nodes_with(bg, ops::kMatmulBPanels), 2) << bg.to_string();
  EXPECT_NE(bg.to_string().find("capture_transposed_panels = Const() {value=<float32 (4, 512, 64)>}"),
            std::string::npos)
      << bg.to_string();
  expect_bitwise(kiln::sum(kiln::matmul(x, w)) + kiln::sum(kiln::matmul(y, w, false, true)), both(x, y));
}

// Another writer (SGD's assign_sub) would drop the panels at every step: the
// variable is read densely; with the pass off, too.
TEST(PanelWeights, VariablesOtherWritersUpdateAndTheSwitchKeepReadsDense) {
  SKIP_UNLESS_PANELS();
  const Tensor x = batch();
  nn::Sequential traced_model{"mlp"}, eager_model{"mlp"};
  for (nn::Sequential* m : {&traced_model, &eager_model})
    m->add(nn::Dense(512, {.activation = "relu", .input_shape = Shape{256}, .seed = 1}));
  nn::SGD traced_opt(0.01), eager_opt(0.01);
  auto step = [](nn::Sequential& model, nn::SGD& opt, const Tensor& x) {
    GradientTape tape;
    Tensor loss = kiln::sum(square(model(x, true)));
    std::vector<Variable> vars = model.trainable_variables();
    opt.apply_gradients(tape.gradient(loss, vars), vars);
  };
  auto f = kiln::function(kiln::testing::StepFn([&](const Tensor& x) { step(traced_model, traced_opt, x); }));
  EXPECT_EQ(nodes_with(optimized(f, x), ops::kReadPanels), 0) << optimized(f, x).to_string();
  for (int i = 0; i < 2; ++i) {
    f(x);
    step(eager_model, eager_opt, x);
  }
  expect_same_variables(traced_model.variables(), eager_model.variables());

  Trainer adam;
  setenv("KILN_DISABLE_PASSES", "weightrows", 1);
  auto off = adam.traced();
  EXPECT_EQ(nodes_with(optimized(off, x), ops::kReadPanels), 0);
  unsetenv("KILN_DISABLE_PASSES");
}

// On this machine, the MNIST dense layer's forward and input gradient read
// panels exactly where oneDNN wants them.
TEST(PanelWeights, TheMnistDenseLayerFollowsOneDnnsLayout) {
  Variable w(random::normal({3136, 1024}, 0, 0.01, DType::Float32, 5), {.name = "dense1"});
  const Tensor x = random::normal({50, 3136}, 0, 1, DType::Float32, 6);
  const Tensor dy = random::normal({50, 1024}, 0, 1, DType::Float32, 7);
  auto layer = [&](const Tensor& x, const Tensor& dy) {
    return kiln::sum(kiln::relu(kiln::matmul(x, w.read_value()))) +
           kiln::sum(kiln::matmul(dy, w.read_value(), false, true));
  };
  auto f = kiln::function(std::function<Tensor(const Tensor&, const Tensor&)>(layer));
  const graph::Graph& g = f.get_concrete_function(x, dy).impl()->plan->graph();
  EXPECT_EQ(nodes_with(g, ops::kReadPanels) == 1, ops::matmul_reads_panels(50, 3136, 1024)) << g.to_string();
  EXPECT_EQ(nodes_with(g, ops::kReadTransposedPanels) == 1, ops::matmul_reads_panels(50, 1024, 3136))
      << g.to_string();
  expect_bitwise(layer(x, dy), f(x, dy));
}
