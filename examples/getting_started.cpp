// Kiln in five minutes: eager code, the same code traced into a graph, what
// the graph looks like, why it retraced, and what tracing buys on many small
// ops. Run it with ./run.sh.
#include <chrono>
#include <iostream>

#include <kiln/kiln.h>

using kiln::Tensor;

namespace {

// 1000 small elementwise ops, the peer report's "many small ops" workload.
Tensor many_small_ops(const Tensor& x0) {
  Tensor x = x0;
  for (int i = 0; i < 250; ++i) {
    x = x * 1.0001f;
    x = x + 0.001f;
    x = kiln::tanh(x);
    x = x * 0.9999f;
  }
  return x;
}

template <class F> double seconds_per_call(F&& f, int calls) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
}

}  // namespace

int main() {
  // 1. Eager: ops run as they are called, values print like TensorFlow's.
  Tensor a = kiln::constant({{1.f, 2.f}, {3.f, 4.f}});
  Tensor b = kiln::matmul(a, a) + 1;
  std::cout << "eager: " << b << "\n\n";

  // 2. The same code, traced: the first call records a graph, later calls
  //    with the same signature run it. kiln::print runs on every call;
  //    std::cout inside runs only while tracing.
  auto layer = kiln::function(
      [](const Tensor& x, const Tensor& w) {
        std::cout << "tracing with x = " << x << "\n";
        Tensor y = kiln::relu(kiln::matmul(x, w) + 1.f);
        kiln::print("  graph ran, y =", y, kiln::PrintOptions{.stream = &std::cout});
        return y;
      },
      {.name = "layer"});
  layer(a, a);
  layer(a * 2, a);                          // same signature: no trace
  layer(kiln::ones({3, 2}), a);             // new batch size: one more trace, dims relaxed
  layer(kiln::ones({5, 2}), a);             // served by the relaxed trace
  std::cout << "traces: " << layer.tracing_count() << "\n";
  for (const kiln::RetraceRecord& r : layer.retrace_log()) std::cout << "  " << r.text() << "\n";

  // 3. What was traced (Kiln's to_code).
  std::cout << "\n" << layer.get_concrete_function(kiln::ones({5, 2}), a).graph().to_string() << "\n";

  // 4. Variables live outside graphs; graphs update them.
  kiln::Variable counter(0);
  auto tick = kiln::function([&] { counter.assign_add(1); });
  for (int i = 0; i < 3; ++i) tick();
  std::cout << "counter after 3 calls: " << counter.read_value() << "\n\n";

  // 5. Many small ops: eager pays dispatch per op, the graph runs a plan.
  auto traced = kiln::function(many_small_ops);
  Tensor x = kiln::random::normal({16}, 0, 1, kiln::float32, /*seed=*/1);
  traced(x);  // trace once
  double eager_s = seconds_per_call([&] { many_small_ops(x); }, 50);
  double graph_s = seconds_per_call([&] { traced(x); }, 50);
  std::cout << "1000 ops on a [16] tensor: eager " << eager_s * 1e3 << " ms, traced " << graph_s * 1e3
            << " ms per call (" << eager_s / graph_s << "x)\n";
  bool same = kiln::all(many_small_ops(x) == traced(x)).item<bool>();
  std::cout << "traced result equals eager bit for bit: " << (same ? "yes" : "NO") << "\n";
  return same ? 0 : 1;
}
