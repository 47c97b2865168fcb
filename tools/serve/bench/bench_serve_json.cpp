// kiln-serve's REST body -> tensor, the two ways it reads one: the direct
// reader of number lists (numeric_body.h) and the JSON document (tensor_json.h,
// every other body), on a body file such as serving_bench.sh's 28x28 image;
// then the response written for a [1, 10] float output. Minimum and median
// microseconds of CALLS calls each (the minimum: the call no other process
// slowed, on a shared machine).
//   bench_serve_json BODY.json [CALLS=2000]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "../numeric_body.h"
#include "../status.h"

using namespace kiln;
using namespace kiln::serve;

namespace {

void time_it(const std::string& what, int calls, const std::function<void()>& fn) {
  std::vector<double> us;
  for (int i = 0; i < calls + 50; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    if (i >= 50) us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  std::cout << fmt::format("RESULT {} min_us {:.1f} p50_us {:.1f}\n", what, us[0], us[us.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: bench_serve_json BODY.json [CALLS]\n";
    return 2;
  }
  const int calls = argc == 3 ? std::stoi(argv[2]) : 2000;
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();
  // The MNIST signature's input: images, float32 (None, 28, 28, 1).
  const std::vector<saved_model::TensorInfo> inputs{{"images", DType::Float32, Shape({-1, 28, 28, 1}), ""}};
  const std::vector<saved_model::TensorInfo> outputs{{"output_0", DType::Float32, Shape({-1, 10}), ""}};
  int64_t sink = 0;
  time_it("json_document", calls, [&] {
    const json doc = parse_body(body);
    sink += static_cast<int64_t>(request_tensors(read_predict_request(doc), inputs).size());
  });
  time_it("direct", calls, [&] {
    std::optional<NumericBody> numeric = read_numeric_body(body);
    if (!numeric) fail(Code::InvalidArgument, "the body is not a list of numbers");
    sink += static_cast<int64_t>(numeric_tensors(*numeric, inputs)->size());
  });
  const TensorMap result{{"output_0", ones(Shape({1, 10}))}};
  time_it("response", calls, [&] { sink += static_cast<int64_t>(predict_response(result, outputs, true).size()); });
  return sink > 0 ? 0 : 1;
}
