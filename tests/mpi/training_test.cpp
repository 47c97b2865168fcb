// Data-parallel training: identical parameters on every rank after traced
// steps, the same result as one process on the whole batch, buckets started
// in different orders on different ranks, and disagreeing ranks refused.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>

#include "distributed/collectives.h"
#include "distributed/comm.h"
#include "exec/plan.h"
#include "function/traced_graph.h"
#include "kiln/kiln.h"
#include "kiln/distributed.h"
#include "kiln/nn/layers.h"
#include "kiln/nn/optimizers.h"
#include "kiln/nn/sequential.h"

namespace dist = kiln::distributed;
namespace nn = kiln::nn;
using kiln::DType;
using kiln::Shape;
using kiln::Tensor;
using kiln::Variable;

namespace {

nn::Sequential make_model(uint64_t seed) {
  nn::Sequential model;
  model.add(nn::Dense(16, {.activation = "relu", .input_shape = Shape{8}, .seed = seed}));
  model.add(nn::Dense(4, {.seed = seed + 1}));
  return model;
}

// Rows [begin, end) of a fixed data set, the same on every rank.
std::pair<Tensor, Tensor> rows(int64_t begin, int64_t end, int step) {
  std::vector<float> x, y;
  for (int64_t i = begin; i < end; ++i) {
    for (int j = 0; j < 8; ++j) x.push_back(std::sin(0.37f * static_cast<float>(i + 3 * step) + 0.5f * j));
    for (int j = 0; j < 4; ++j) y.push_back(std::cos(0.11f * static_cast<float>(i * (j + 1) + step)));
  }
  return {kiln::constant(x, Shape{end - begin, 8}), kiln::constant(y, Shape{end - begin, 4})};
}

// A traced training step; `average` switches gradient averaging on.
auto make_step(nn::Sequential& model, nn::Optimizer& opt, bool average, int64_t bucket_bytes) {
  return kiln::function([&model, &opt, average, bucket_bytes](const Tensor& x, const Tensor& y) {
    kiln::GradientTape tape;
    Tensor loss = kiln::mean(kiln::square(model(x, true) - y));
    std::vector<Variable> vars = model.trainable_variables();
    std::vector<Tensor> grads = tape.gradient(loss, vars);
    if (average) grads = dist::average_gradients(grads, {.bucket_bytes = bucket_bytes});
    opt.apply_gradients(grads, vars);
    return loss;
  });
}

}  // namespace

TEST(Training, ParametersBitwiseEqualOnEveryRankAfterTracedSteps) {
  const int me = dist::rank(), size = dist::size();
  nn::Sequential model = make_model(100 + static_cast<uint64_t>(me));  // different on every rank...
  dist::broadcast_variables(model.variables(), 0);                     // ...until rank 0's are sent
  nn::Adam opt(0.01);
  // 256-byte buckets: the four gradients travel in three buckets.
  auto step = make_step(model, opt, true, 256);
  for (int k = 0; k < 6; ++k) {
    auto [x, y] = rows(me * 5, me * 5 + 5, k);  // each rank its own rows
    step(x, y);
  }
  // The plan overlaps: bucket 0 (the last layer's gradients) starts before
  // the first layer's gradient is computed, and is waited for later.
  const kiln::exec::Plan& plan = *step.concrete_functions().at(0).impl()->plan;
  const auto& steps = plan.steps();
  int started = -1, finished = -1, matmuls_between = 0;
  for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
    if (started < 0 && steps[i].background == 0) started = i;
    for (int a : steps[i].finish_first)
      if (a == 0) finished = i;
  }
  ASSERT_GE(started, 0);
  ASSERT_GT(finished, started);
  for (int i = started; i < finished; ++i) matmuls_between += steps[i].node->op->name.find("MatMul") != std::string_view::npos;
  EXPECT_GT(matmuls_between, 0) << "no backward matmul runs while bucket 0 is under way";
  for (const Variable& v : model.variables()) {
    Tensor mine = kiln::reshape(v.read_value(), Shape{1, -1});
    std::vector<float> all = dist::allgather(mine).to_vector<float>();
    const std::size_t n = static_cast<std::size_t>(mine.size());
    for (int r = 1; r < size; ++r)
      EXPECT_EQ(std::memcmp(all.data(), all.data() + r * n, n * sizeof(float)), 0) << v.name() << " rank " << r;
  }
}

TEST(Training, RanksAtBatchBMatchOneProcessAtBatchNB) {
  const int me = dist::rank(), size = dist::size();
  const int64_t B = 6;
  nn::Sequential model = make_model(7), reference = make_model(7);
  nn::SGD opt(0.05), ref_opt(0.05);
  auto step = make_step(model, opt, true, 25 << 20);
  auto ref_step = make_step(reference, ref_opt, false, 0);
  for (int k = 0; k < 5; ++k) {
    auto [x, y] = rows(me * B, (me + 1) * B, k);
    step(x, y);
    auto [all_x, all_y] = rows(0, size * B, k);
    ref_step(all_x, all_y);  // this process alone, the whole batch
  }
  std::vector<Variable> a = model.variables(), b = reference.variables();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    std::vector<float> va = a[i].read_value().to_vector<float>(), vb = b[i].read_value().to_vector<float>();
    for (std::size_t j = 0; j < va.size(); ++j) EXPECT_NEAR(va[j], vb[j], 2e-6) << a[i].name() << " [" << j << "]";
  }
}

namespace {

const std::string kTwoBuckets = "test: 2 buckets";
uint64_t two_bucket_fingerprint() { return kiln::distributed::fnv1a(kTwoBuckets.data(), kTwoBuckets.size()); }

Tensor bucket(const Tensor& t, int index) {
  const Tensor in[] = {t};
  return kiln::distributed::grouped_allreduce(in, dist::Reduction::Sum, index, 2, two_bucket_fingerprint(),
                                                     kTwoBuckets)[0];
}

}  // namespace

// Even ranks start bucket 1 first, odd ranks bucket 0: the communication
// thread runs them in index order on every rank, so nothing hangs.
TEST(Training, BucketsStartedInDifferentOrdersDoNotHang) {
  namespace dd = kiln::distributed;
  const int me = dist::rank(), size = dist::size();
  Tensor a = kiln::fill(Shape{5}, static_cast<float>(me)), b = kiln::fill(Shape{3}, 1.f);
  const float sum_a = static_cast<float>(size * (size - 1) / 2), sum_b = static_cast<float>(size);
  // Raw work, as two threads finishing buckets in either order would give it.
  dd::Comm& comm = dd::Comm::get();
  auto work = [&](const Tensor& t, int index) {
    dd::Work* w = comm.acquire();
    w->bucket = index;
    w->num_buckets = 2;
    w->fingerprint = two_bucket_fingerprint();
    w->layout = &kTwoBuckets;
    w->inputs.push_back(t);
    w->outputs.push_back(kiln::zeros_like(t));
    return w;
  };
  dd::Work* w0 = work(a, 0);
  dd::Work* w1 = work(b, 1);
  Tensor out0 = w0->outputs[0], out1 = w1->outputs[0];
  if (me % 2 == 0) {
    comm.submit(w1);
    comm.submit(w0);
  } else {
    comm.submit(w0);
    comm.submit(w1);
  }
  comm.wait_and_release(w1);
  comm.wait_and_release(w0);
  EXPECT_EQ(out0.to_vector<float>(), std::vector<float>(5, sum_a));
  EXPECT_EQ(out1.to_vector<float>(), std::vector<float>(3, sum_b));

  // Traced: the two buckets in graph order 1, 0 on even ranks.
  auto f = kiln::function([me](const Tensor& x, const Tensor& y) {
    if (me % 2 == 0) {
      Tensor r1 = bucket(y, 1);
      return std::tuple<Tensor, Tensor>{bucket(x, 0), r1};
    }
    Tensor r0 = bucket(x, 0);
    return std::tuple<Tensor, Tensor>{r0, bucket(y, 1)};
  });
  for (int call = 0; call < 3; ++call) {
    auto [r0, r1] = f(a, b);
    EXPECT_EQ(r0.to_vector<float>(), std::vector<float>(5, sum_a));
    EXPECT_EQ(r1.to_vector<float>(), std::vector<float>(3, sum_b));
  }
}

TEST(Training, MismatchedGradientsAreRefusedNamingTheDifference) {
  const int me = dist::rank();
  const int64_t odd = me == 0 ? 4 : 5;
  std::vector<Tensor> grads = {kiln::ones(Shape{3}), kiln::ones(Shape{odd}), kiln::ones(Shape{2, 2})};
  // Every rank first runs rank 0's plan, so rank 0 then reuses a plan it
  // checked before while the others bring a new one: still refused.
  dist::average_gradients({kiln::ones(Shape{3}), kiln::ones(Shape{4}), kiln::ones(Shape{2, 2})}, {.bucket_bytes = 8});
  auto t0 = std::chrono::steady_clock::now();
  try {
    dist::average_gradients(grads, {.bucket_bytes = 8});
    ADD_FAILURE() << "mismatched buckets were not refused";
  } catch (const kiln::FailedPrecondition& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("rank 0 has 'bucket 1: gradient 1 float32 (4,)'"), std::string::npos) << m;
    EXPECT_NE(m.find("gradient 1 float32 (5,)"), std::string::npos) << m;
  }
  // Traced: the same refusal from the graph, once per plan.
  auto f = kiln::function([&](const Tensor& g) {
    std::vector<Tensor> gs = dist::average_gradients({g, g * 2.f}, {.bucket_bytes = 8});
    return gs[0] + gs[1];
  });
  Tensor g = kiln::ones(Shape{odd});
  for (int call = 0; call < 2; ++call)
    EXPECT_THROW(f(g), kiln::FailedPrecondition) << "call " << call;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  // The ranks still agree afterwards.
  EXPECT_EQ(dist::allreduce(kiln::constant(1), dist::Reduction::Sum).item<int32_t>(), dist::size());
  Tensor same = kiln::ones(Shape{3});
  std::vector<Tensor> ok = dist::average_gradients({same, same}, {.bucket_bytes = 8});
  EXPECT_EQ(ok[1].to_vector<float>(), std::vector<float>(3, 1.f));
}
