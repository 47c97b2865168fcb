// The backward kernels of the MNIST CNN (docs/design-notes.md, "Autodiff"; bench/README.md), float32 at batch
// 50, each beside its forward op in the same run: conv1 5x5 1->32 SAME at
// 28x28 (only its filter gradient is needed), conv2 5x5 32->64 SAME at 14x14,
// and 2x2/2 pooling at 28x28x32 and 14x14x64.
//
//   ./build-bench/bench/bench_nn_grad
//   ./build-bench/bench/bench_nn_grad --benchmark_filter=Conv2
#include <string>
#include <vector>

#include "bench_util.h"
#include "kiln/kiln.h"
#include "ops/nn_internal.h"

namespace {

using kiln::DType;
using kiln::Shape;
using kiln::Tensor;
using kiln::schema::Attrs;

constexpr int64_t kBatch = 50;

Tensor uniform(const Shape& shape, uint64_t seed) {
  return kiln::random::uniform(shape, -1.0, 1.0, DType::Float32, seed);
}

Attrs conv_attrs() {
  return Attrs{{"strides", std::vector<int64_t>{1, 1}},
               {"padding", std::string("SAME")},
               {"dilations", std::vector<int64_t>{1, 1}}};
}

Attrs pool_attrs() {
  return Attrs{{"ksize", std::vector<int64_t>{2, 2}},
               {"strides", std::vector<int64_t>{2, 2}},
               {"padding", std::string("SAME")}};
}

// Runs `op` twice to warm up (oneDNN primitives, allocator), then times it.
template <class F>
void time_op(benchmark::State& st, F&& op) {
  for (int i = 0; i < 2; ++i) benchmark::DoNotOptimize(op().impl());
  for (auto _ : st) {
    Tensor y = op();
    benchmark::DoNotOptimize(y.impl());
  }
}

// ---- Convolutions -------------------------------------------------------------

struct ConvShapes {
  Shape input, filters, output;
};
const ConvShapes kConv1{{kBatch, 28, 28, 1}, {5, 5, 1, 32}, {kBatch, 28, 28, 32}};
const ConvShapes kConv2{{kBatch, 14, 14, 32}, {5, 5, 32, 64}, {kBatch, 14, 14, 64}};

double conv_flops(const ConvShapes& s) {
  return 2.0 * static_cast<double>(s.output.num_elements()) * s.filters[0] * s.filters[1] *
         s.filters[2];
}

enum class ConvPart { Forward, Input, Filter };

void BM_Conv(benchmark::State& st, const ConvShapes* s, ConvPart part) {
  Tensor x = uniform(s->input, 1), f = uniform(s->filters, 2), dy = uniform(s->output, 3);
  time_op(st, [&] {
    switch (part) {
      case ConvPart::Forward: return kiln::nn::conv2d(x, f, 1, "SAME");
      case ConvPart::Input: return kiln::ops::conv2d_backprop_input(x, f, dy, conv_attrs());
      case ConvPart::Filter: return kiln::ops::conv2d_backprop_filter(x, f, dy, conv_attrs());
    }
    return Tensor();
  });
  st.counters["FLOPS"] =
      benchmark::Counter(conv_flops(*s), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_Conv, Conv1_Forward, &kConv1, ConvPart::Forward)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv, Conv1_BackpropFilter, &kConv1, ConvPart::Filter)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv, Conv2_Forward, &kConv2, ConvPart::Forward)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv, Conv2_BackpropInput, &kConv2, ConvPart::Input)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv, Conv2_BackpropFilter, &kConv2, ConvPart::Filter)
    ->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- Pooling ------------------------------------------------------------------

const Shape kPool1{kBatch, 28, 28, 32};
const Shape kPool2{kBatch, 14, 14, 64};

enum class PoolPart { MaxForward, MaxGrad, AvgForward, AvgGrad };

void BM_Pool(benchmark::State& st, const Shape* in, PoolPart part) {
  Tensor x = uniform(*in, 4);
  Tensor dy = uniform(Shape{(*in)[0], (*in)[1] / 2, (*in)[2] / 2, (*in)[3]}, 5);
  time_op(st, [&] {
    switch (part) {
      case PoolPart::MaxForward: return kiln::nn::max_pool2d(x, 2, 2, "SAME");
      case PoolPart::MaxGrad: return kiln::ops::max_pool_grad(x, dy, pool_attrs());
      case PoolPart::AvgForward: return kiln::nn::avg_pool2d(x, 2, 2, "SAME");
      case PoolPart::AvgGrad: return kiln::ops::avg_pool_grad(x, dy, pool_attrs());
    }
    return Tensor();
  });
  // Bytes that must move: the input (and dy) read, the output written.
  double in_bytes = static_cast<double>(in->num_elements()) * 4;
  bool grad = part == PoolPart::MaxGrad || part == PoolPart::AvgGrad;
  bool reads_x = part != PoolPart::AvgGrad;
  double bytes = grad ? (reads_x ? in_bytes : 0) + in_bytes / 4 + in_bytes : in_bytes + in_bytes / 4;
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations() * bytes));
}
BENCHMARK_CAPTURE(BM_Pool, Pool1_MaxForward, &kPool1, PoolPart::MaxForward)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool1_MaxGrad, &kPool1, PoolPart::MaxGrad)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool1_AvgForward, &kPool1, PoolPart::AvgForward)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool1_AvgGrad, &kPool1, PoolPart::AvgGrad)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool2_MaxForward, &kPool2, PoolPart::MaxForward)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool2_MaxGrad, &kPool2, PoolPart::MaxGrad)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool2_AvgForward, &kPool2, PoolPart::AvgForward)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Pool, Pool2_AvgGrad, &kPool2, PoolPart::AvgGrad)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();

// ---- Summary ------------------------------------------------------------------

// A figure without a peer.
bench::Row own(std::string figure, std::function<double(const bench::Results&)> value,
               std::string unit, bool higher_is_better = false) {
  return {std::move(figure), std::move(value), std::move(unit), higher_is_better, NAN, ""};
}

std::vector<bench::Row> rows(int) {
  using R = const bench::Results&;
  auto ms = [](std::string name) { return [name](R r) { return r.time_ns(name) / 1e6; }; };
  auto ratio = [](std::string num, std::string den) {
    return [num, den](R r) { return r.time_ns(num) / r.time_ns(den); };
  };
  auto gflops = [](std::string name) {
    return [name](R r) { return r.counter(name, "FLOPS") / 1e9; };
  };
  const std::string c = "BM_Conv/", p = "BM_Pool/";
  std::vector<bench::Row> out = {
      own("conv1 forward [50,28,28,1]*[5,5,1,32]", ms(c + "Conv1_Forward"), "ms"),
      own("conv1 filter gradient", ms(c + "Conv1_BackpropFilter"), "ms"),
      own("conv1 filter gradient / forward", ratio(c + "Conv1_BackpropFilter", c + "Conv1_Forward"),
       "x"),
      own("conv2 forward [50,14,14,32]*[5,5,32,64]", ms(c + "Conv2_Forward"), "ms"),
      own("conv2 forward throughput", gflops(c + "Conv2_Forward"), "GFLOP/s", true),
      own("conv2 input gradient", ms(c + "Conv2_BackpropInput"), "ms"),
      own("conv2 input gradient throughput", gflops(c + "Conv2_BackpropInput"), "GFLOP/s", true),
      own("conv2 filter gradient", ms(c + "Conv2_BackpropFilter"), "ms"),
      own("conv2 filter gradient throughput", gflops(c + "Conv2_BackpropFilter"), "GFLOP/s", true),
      own("conv2 input gradient / forward", ratio(c + "Conv2_BackpropInput", c + "Conv2_Forward"),
       "x"),
      own("conv2 filter gradient / forward", ratio(c + "Conv2_BackpropFilter", c + "Conv2_Forward"),
       "x"),
      // The peer profile gives convolution_backward per call averaged over
      // both layers (conv1 without its input gradient): 5.226 ms, so 10.45
      // ms per step.
      {"conv backward per step (conv1 filter + conv2 both)",
       [c](R r) {
         return (r.time_ns(c + "Conv1_BackpropFilter") + r.time_ns(c + "Conv2_BackpropInput") +
                 r.time_ns(c + "Conv2_BackpropFilter")) /
                1e6;
       },
       "ms", false, 10.45, "torch convolution_backward x2 (profile, OB1)"},
  };
  for (const char* pool : {"Pool1", "Pool2"}) {
    std::string label = std::string(pool) == "Pool1" ? "pool 2x2/2 at [50,28,28,32]"
                                                     : "pool 2x2/2 at [50,14,14,64]";
    std::string n = p + pool;
    out.push_back(own(label + " max forward", ms(n + "_MaxForward"), "ms"));
    out.push_back(own(label + " max gradient", ms(n + "_MaxGrad"), "ms"));
    out.push_back(own(label + " max gradient / forward", ratio(n + "_MaxGrad", n + "_MaxForward"),
                   "x"));
    out.push_back(own(label + " avg forward", ms(n + "_AvgForward"), "ms"));
    out.push_back(own(label + " avg gradient", ms(n + "_AvgGrad"), "ms"));
    out.push_back(own(label + " avg gradient / forward", ratio(n + "_AvgGrad", n + "_AvgForward"),
                   "x"));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  return bench::run_main(argc, argv, "bench_nn_grad", {"--benchmark_min_time=0.3"}, rows);
}
