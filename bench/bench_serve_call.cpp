// The in-process side of bench/serving_bench.sh: one saved model's
// serving_default called directly on one example (unknown dims taken as 1),
// as kiln-serve calls it, timed per call. What kiln-serve adds over this at
// concurrency 1 is the REST (or gRPC) overhead. With BATCH > 1 the unknown
// dims are BATCH instead, and the figures per row too show what batching can
// gain at most (the model's own cost per row at batch 1 against BATCH).
//   bench_serve_call DIR [CALLS=2000] [BATCH=1]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "core/tensor_impl.h"
#include "kiln/kiln.h"

using namespace kiln;

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::cerr << "usage: bench_serve_call DIR [CALLS] [BATCH]\n";
    return 2;
  }
  const int calls = argc >= 3 ? std::stoi(argv[2]) : 2000;
  const int batch = argc >= 4 ? std::stoi(argv[3]) : 1;
  saved_model::Loaded loaded = saved_model::load(argv[1]);
  const saved_model::LoadedSignature& sig = loaded.signature("serving_default");
  std::map<std::string, Tensor> inputs;
  for (const auto& info : sig.inputs()) {
    std::vector<int64_t> dims;
    for (int64_t d : info.shape) dims.push_back(d < 0 ? batch : d);
    inputs.emplace(info.name, random::uniform(Shape(dims), 0.f, 1.f, DType::Float32, 7));
  }
  for (int i = 0; i < 100; ++i) sig(inputs);
  std::vector<double> us;
  for (int i = 0; i < calls; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    sig(inputs);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  const double p50 = us[us.size() / 2];
  // The minimum too: on a shared machine, the call no other process slowed.
  std::cout << fmt::format("RESULT batch {} p50_us {:.1f} p99_us {:.1f} min_us {:.1f} per_row_us {:.1f} rows/s {:.0f} "
                           "min_per_row_us {:.1f}\n",
                           batch, p50, us[us.size() * 99 / 100], us[0], p50 / batch, batch * 1e6 / p50, us[0] / batch);
  return 0;
}
