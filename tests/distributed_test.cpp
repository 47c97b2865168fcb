// kiln::distributed in a world of one (this binary never calls init(); the
// collectives over several ranks are tests/mpi/, run by mpirun), the
// executor's placement of background ops, and Dataset::shard.
#include "exec/plan.h"
#include "function/traced_graph.h"
#include "graph_test_util.h"
#include "kiln/distributed.h"
#include "kiln/kiln.h"
#include "test_util.h"

using namespace kiln;
using kiln::testing::expect_error;
using kiln::testing::expect_tensor;
using kiln::testing::f32;
using kiln::testing::trace_graph;
namespace dist = kiln::distributed;

TEST(DistributedWorldOfOne, CollectivesReturnTheirInput) {
  EXPECT_FALSE(dist::initialized());
  EXPECT_EQ(dist::rank(), 0);
  EXPECT_EQ(dist::size(), 1);
  EXPECT_EQ(dist::local_rank(), 0);
  Tensor x = constant({{1.f, 2.f}, {3.f, 4.f}});
  for (auto op : {dist::Reduction::Sum, dist::Reduction::Mean, dist::Reduction::Max, dist::Reduction::Min})
    expect_tensor<float>(dist::allreduce(x, op), {2, 2}, {1.f, 2.f, 3.f, 4.f});
  expect_tensor<float>(dist::broadcast(x, 0), {2, 2}, {1.f, 2.f, 3.f, 4.f});
  expect_tensor<float>(dist::allgather(x), {2, 2}, {1.f, 2.f, 3.f, 4.f});
  expect_tensor<int32_t>(dist::reduce_to_root(constant({5, 6}), 0), {2}, {5, 6});
  expect_error<InvalidArgument>([&] { dist::broadcast(x, 1); }, {"Broadcast: root 1 is not a rank (the world has 1)"});
  expect_error<InvalidArgument>([&] { dist::allreduce(constant({true}), dist::Reduction::Mean); },
               {"Allreduce: the mean of bool tensors is not defined"});
  std::vector<Tensor> grads = {x, Tensor(), x * 2.f};
  std::vector<Tensor> avg = dist::average_gradients(grads);
  EXPECT_FALSE(avg[1].defined());
  expect_tensor<float>(avg[2], {2, 2}, {2.f, 4.f, 6.f, 8.f});
  dist::barrier();
}

// The allreduce is traced after unrelated work (c, d, e) but reads only `a`:
// the plan starts it right after `a` and finishes it just before `f`, its
// first reader, so c, d and e run while it is under way.
TEST(DistributedPlan, StartsCollectivesEarlyAndFinishesThemLate) {
  auto g = trace_graph({f32(Shape{4})}, [](const std::vector<Tensor>& p) {
    Tensor a = p[0] * 2.f;
    Tensor e = square(p[0] + 1.f) - 3.f;
    Tensor b = dist::allreduce(a, dist::Reduction::Sum);
    return std::vector<Tensor>{b + e};
  });
  exec::Plan plan(g);
  const auto& steps = plan.steps();
  int mul = -1, allreduce = -1, last = static_cast<int>(steps.size()) - 1;
  for (int i = 0; i < static_cast<int>(steps.size()); ++i) {
    if (steps[i].node->op->name == "Mul") mul = i;
    if (steps[i].node->op->name == "Allreduce") allreduce = i;
  }
  ASSERT_GE(mul, 0);
  EXPECT_EQ(allreduce, mul + 1);
  EXPECT_EQ(steps[allreduce].background, 0);
  ASSERT_EQ(steps[last].finish_first.size(), 1u);  // the Add reads it
  EXPECT_EQ(steps[last].finish_first[0], 0);
  for (int i = 0; i < last; ++i) EXPECT_TRUE(steps[i].finish_first.empty()) << i;
  detail::ResultLeaves out = plan.run(std::vector<Tensor>{constant({0.f, 1.f, 2.f, -1.f})});
  expect_tensor<float>(out[0], {4}, {-2.f, 3.f, 10.f, -5.f});
  // The same through kiln::function (optimized, fused).
  auto f = kiln::function([](const Tensor& x) { return dist::allreduce(x * 2.f) + (square(x + 1.f) - 3.f); });
  expect_tensor<float>(f(constant({0.f, 1.f, 2.f, -1.f})), {4}, {-2.f, 3.f, 10.f, -5.f});
}

TEST(DataShard, EveryNthElementFromIndex) {
  auto values = [](const data::Dataset& ds) {
    std::vector<int64_t> out;
    for (const data::Element& e : ds) out.push_back(e.at(0).item<int64_t>());
    return out;
  };
  data::Dataset ds = data::Dataset::range(10);
  EXPECT_EQ(values(ds.shard(3, 0)), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(values(ds.shard(3, 1)), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(values(ds.shard(3, 2)), (std::vector<int64_t>{2, 5, 8}));
  EXPECT_EQ(ds.shard(3, 0).cardinality(), 4);
  EXPECT_EQ(ds.shard(3, 2).cardinality(), 3);
  EXPECT_EQ(ds.shard(1, 0).cardinality(), 10);
  EXPECT_EQ(values(ds.shard(20, 12)), std::vector<int64_t>{});
  EXPECT_EQ(ds.repeat().shard(2, 1).cardinality(), data::Dataset::kInfinite);
  expect_error<InvalidArgument>([&] { ds.shard(0, 0); }, {"Dataset::shard: num_shards must be positive, got 0"});
  expect_error<InvalidArgument>([&] { ds.shard(3, 3); }, {"Dataset::shard: index must be in [0, 3), got 3"});
}
