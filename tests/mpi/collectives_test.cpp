// Collectives on every dtype, odd and empty sizes, eager and traced, and
// their gradients, checked against values each rank computes for all ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/distributed.h"

namespace dist = kiln::distributed;
using kiln::DType;
using kiln::Shape;
using kiln::Tensor;
using dist::Reduction;

namespace {

const DType kDTypes[] = {DType::Float32, DType::Float64, DType::Int32, DType::Int64, DType::UInt8, DType::Bool};
const int64_t kSizes[] = {0, 1, 7, 100003};

// Element i of rank r's tensor (small integers: float sums are exact).
double value(DType d, int r, int64_t i) {
  if (d == DType::Bool) return (i + r) % 3 == 0;
  if (d == DType::UInt8) return static_cast<double>((i * 7 + r * 3) % 11);
  return static_cast<double>((i * 7 + r * 3) % 11 - 5);
}

Tensor of(const std::vector<double>& v, const Shape& shape, DType d) {
  return kiln::cast(kiln::constant(v, shape), d);
}

std::vector<double> values(DType d, int r, int64_t n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(d, r, i);
  return v;
}

// Compares through float64 (exact for every value used here); the expected
// doubles are cast to `d` first, so wrapping and truncation match.
void expect_equal(const Tensor& got, const std::vector<double>& want, const Shape& shape, DType d,
                  const std::string& what) {
  ASSERT_EQ(got.dtype(), d) << what;
  ASSERT_EQ(got.shape(), shape) << what;
  std::vector<double> g = kiln::cast(got, DType::Float64).to_vector<double>();
  std::vector<double> w = kiln::cast(of(want, shape, d), DType::Float64).to_vector<double>();
  ASSERT_EQ(g.size(), w.size()) << what;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!(g[i] == w[i])) {
      ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", expected " << w[i];
      return;
    }
}

std::vector<double> reduced(DType d, Reduction op, int64_t n) {
  const int size = dist::size();
  std::vector<double> out(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double acc = value(d, 0, i);
    for (int r = 1; r < size; ++r) {
      double v = value(d, r, i);
      if (d == DType::Bool) acc = op == Reduction::Min ? (acc && v) : (acc || v);
      else if (op == Reduction::Max) acc = std::max(acc, v);
      else if (op == Reduction::Min) acc = std::min(acc, v);
      else acc += v;
    }
    if (op == Reduction::Mean) acc = d == DType::Float32 || d == DType::Float64 ? acc / size : std::trunc(acc / size);
    out[static_cast<std::size_t>(i)] = acc;
  }
  return out;
}

std::string name(DType d, int64_t n) { return std::string(kiln::dtype_name(d)) + " [" + std::to_string(n) + "]"; }

}  // namespace

TEST(World, RankAndSize) {
  EXPECT_TRUE(dist::initialized());
  EXPECT_TRUE(dist::built_with_mpi());
  const char* env = std::getenv("OMPI_COMM_WORLD_SIZE");
  ASSERT_NE(env, nullptr) << "run under mpirun";
  EXPECT_EQ(dist::size(), std::atoi(env));
  EXPECT_EQ(dist::rank(), std::atoi(std::getenv("OMPI_COMM_WORLD_RANK")));
  EXPECT_GE(dist::local_rank(), 0);
  EXPECT_LT(dist::local_rank(), dist::local_size());
  dist::barrier();
}

TEST(Collectives, AllreduceEveryDtypeAndSize) {
  for (DType d : kDTypes)
    for (Reduction op : {Reduction::Sum, Reduction::Mean, Reduction::Max, Reduction::Min})
      for (int64_t n : kSizes) {
        Tensor x = of(values(d, dist::rank(), n), Shape{n}, d);
        std::string what = std::string("allreduce(") + dist::reduction_name(op) + ") " + name(d, n);
        if (d == DType::Bool && op == Reduction::Mean) {
          EXPECT_THROW(dist::allreduce(x, op), kiln::InvalidArgument) << what;
          continue;
        }
        expect_equal(dist::allreduce(x, op), reduced(d, op, n), Shape{n}, d, what);
      }
}

TEST(Collectives, AllreduceKeepsShapes) {
  Tensor x = kiln::fill(Shape{3, 1, 5}, 1.5f);
  Tensor y = dist::allreduce(x, Reduction::Sum);
  EXPECT_EQ(y.shape(), (Shape{3, 1, 5}));
  EXPECT_EQ(y.to_vector<float>()[14], 1.5f * static_cast<float>(dist::size()));
  Tensor s = dist::allreduce(kiln::constant(2.0), Reduction::Mean);  // a scalar
  EXPECT_EQ(s.item<double>(), 2.0);
}

TEST(Collectives, BroadcastReduceAllgatherEveryDtype) {
  const int size = dist::size(), me = dist::rank();
  for (DType d : kDTypes)
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(7), int64_t(30001)}) {
      Tensor x = of(values(d, me, n), Shape{n}, d);
      for (int root : {0, size - 1}) {
        expect_equal(dist::broadcast(x, root), values(d, root, n), Shape{n}, d,
                     "broadcast from " + std::to_string(root) + " " + name(d, n));
        std::vector<double> want = me == root ? reduced(d, Reduction::Sum, n) : std::vector<double>(n, 0.0);
        expect_equal(dist::reduce_to_root(x, root), want, Shape{n}, d, "reduce to " + std::to_string(root) + " " + name(d, n));
      }
      // Allgather: [n, 2] per rank, rank order along dim 0.
      Tensor x2 = of(values(d, me, 2 * n), Shape{n, 2}, d);
      std::vector<double> all;
      for (int r = 0; r < size; ++r) {
        std::vector<double> v = values(d, r, 2 * n);
        all.insert(all.end(), v.begin(), v.end());
      }
      expect_equal(dist::allgather(x2), all, Shape{n * size, 2}, d, "allgather " + name(d, n));
    }
}

TEST(Collectives, RefusedArguments) {
  EXPECT_THROW(dist::broadcast(kiln::constant({1.f}), dist::size()), kiln::InvalidArgument);
  EXPECT_THROW(dist::allgather(kiln::constant(1.f)), kiln::InvalidArgument);
  EXPECT_THROW(dist::allreduce(kiln::constant(std::string("a"))), kiln::InvalidArgument);
}

TEST(Collectives, TracedMatchEager) {
  const int me = dist::rank();
  Tensor x = of(values(DType::Float32, me, 12), Shape{4, 3}, DType::Float32);
  auto f = kiln::function([](const Tensor& t) {
    return std::tuple<Tensor, Tensor, Tensor, Tensor>{dist::allreduce(t, Reduction::Mean), dist::broadcast(t * 2.f, 1),
                                                      dist::allgather(t), dist::allreduce(t, Reduction::Max)};
  });
  for (int call = 0; call < 3; ++call) {
    auto [a, b, c, d] = f(x);
    EXPECT_EQ(a.to_vector<float>(), dist::allreduce(x, Reduction::Mean).to_vector<float>());
    EXPECT_EQ(b.to_vector<float>(), dist::broadcast(x * 2.f, 1).to_vector<float>());
    EXPECT_EQ(c.to_vector<float>(), dist::allgather(x).to_vector<float>());
    EXPECT_EQ(d.to_vector<float>(), dist::allreduce(x, Reduction::Max).to_vector<float>());
  }
  // Unknown dims: the batch relaxes after a second shape.
  Tensor y = of(values(DType::Float32, me, 6), Shape{2, 3}, DType::Float32);
  auto [a, b, c, d] = f(y);
  EXPECT_EQ(c.shape(), (Shape{2 * dist::size(), 3}));
  EXPECT_EQ(a.to_vector<float>(), dist::allreduce(y, Reduction::Mean).to_vector<float>());
}

// ---- Gradients: loss = sum(y * w_r) with w_r = rank + 1 on rank r ----

namespace {

double weight_sum() {
  const int n = dist::size();
  return n * (n + 1) / 2.0;
}

Tensor grad_of(const std::function<Tensor(const Tensor&)>& collective, const Tensor& x) {
  kiln::GradientTape tape;
  tape.watch(x);
  Tensor loss = kiln::sum(collective(x) * static_cast<double>(dist::rank() + 1));
  return tape.gradient(loss, x);
}

}  // namespace

TEST(CollectiveGradients, EagerAndTraced) {
  const int me = dist::rank(), size = dist::size();
  Tensor x = kiln::constant({static_cast<double>(me), -static_cast<double>(me), 1.0});
  auto check = [&](const char* what, const std::function<Tensor(const Tensor&)>& c, std::vector<double> want) {
    EXPECT_EQ(grad_of(c, x).to_vector<double>(), want) << what << " eager";
    auto traced = kiln::function([&](const Tensor& t) { return grad_of(c, t); });
    EXPECT_EQ(traced(x).to_vector<double>(), want) << what << " traced";
  };
  const double w = weight_sum();
  check("allreduce sum", [](const Tensor& t) { return dist::allreduce(t, Reduction::Sum); }, {w, w, w});
  check("allreduce mean", [](const Tensor& t) { return dist::allreduce(t, Reduction::Mean); },
        {w / size, w / size, w / size});
  // max: element 0 peaks on the last rank, element 1 on rank 0, element 2
  // ties everywhere (shared equally).
  check("allreduce max", [](const Tensor& t) { return dist::allreduce(t, Reduction::Max); },
        {me == size - 1 ? w : 0.0, me == 0 ? w : 0.0, w / size});
  check("allreduce min", [](const Tensor& t) { return dist::allreduce(t, Reduction::Min); },
        {me == 0 ? w : 0.0, me == size - 1 ? w : 0.0, w / size});
  // broadcast from 1: every rank's dy reaches rank 1.
  check("broadcast", [](const Tensor& t) { return dist::broadcast(t, 1); },
        {me == 1 ? w : 0.0, me == 1 ? w : 0.0, me == 1 ? w : 0.0});
  // reduce to 1: rank 1's dy (2) reaches every rank.
  check("reduce", [](const Tensor& t) { return dist::reduce_to_root(t, 1); }, {2.0, 2.0, 2.0});
  check("allgather", [](const Tensor& t) { return dist::allgather(t); }, {w, w, w});
}

TEST(CollectiveGradients, AllgatherRowsPerRank) {
  // loss = sum(allgather(x) * c) with c's row j = j + 1 on every rank: x's
  // row i on rank r gets size * (r * rows + i + 1).
  const int me = dist::rank(), size = dist::size();
  Tensor x = kiln::zeros(Shape{2, 1}, DType::Float64);
  std::vector<double> c;
  for (int j = 0; j < 2 * size; ++j) c.push_back(j + 1);
  kiln::GradientTape tape;
  tape.watch(x);
  Tensor loss = kiln::sum(dist::allgather(x) * kiln::constant(c, Shape{2 * size, 1}));
  Tensor g = tape.gradient(loss, x);
  EXPECT_EQ(g.to_vector<double>(), (std::vector<double>{size * (me * 2 + 1.0), size * (me * 2 + 2.0)}));
}
