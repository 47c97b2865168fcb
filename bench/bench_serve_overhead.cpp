// What kiln-serve's REST API adds to a model call, measured in pairs: one
// POST :predict of BODY to a running kiln-serve (keep-alive, as wrk -c1),
// then the same model's serving_default called in this process on one
// example, alternately, CALLS times. On a shared machine whose load drifts
// the two halves of a pair see the same load, so the median of the
// differences holds where the difference of two separate medians does not.
//   bench_serve_overhead DIR URL BODY.json [CALLS=2000]
// URL is http://HOST:PORT/v1/models/NAME:predict.
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>

#include "core/tensor_impl.h"
#include "kiln/kiln.h"

using namespace kiln;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double micros_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::cerr << "usage: bench_serve_overhead DIR URL BODY.json [CALLS]\n";
    return 2;
  }
  const int calls = argc == 5 ? std::stoi(argv[4]) : 2000;
  std::smatch url;
  const std::string url_text = argv[2];
  if (!std::regex_match(url_text, url, std::regex(R"(http://([^:/]+):(\d+)(/.*))"))) {
    std::cerr << "bench_serve_overhead: URL must be http://HOST:PORT/PATH\n";
    return 2;
  }
  std::ifstream in(argv[3]);
  std::stringstream text;
  text << in.rdbuf();
  const std::string body = text.str();

  saved_model::Loaded loaded = saved_model::load(argv[1]);
  const saved_model::LoadedSignature& sig = loaded.signature("serving_default");
  std::map<std::string, Tensor> inputs;
  for (const auto& info : sig.inputs()) {
    std::vector<int64_t> dims;
    for (int64_t d : info.shape) dims.push_back(d < 0 ? 1 : d);
    inputs.emplace(info.name, random::uniform(Shape(dims), 0.f, 1.f, DType::Float32, 7));
  }
  httplib::Client client(url[1].str(), std::stoi(url[2].str()));
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);
  auto post = [&] {
    auto res = client.Post(url[3].str(), body, "application/json");
    if (!res || res->status != 200) {
      std::cerr << "bench_serve_overhead: POST failed: " << (res ? res->body : httplib::to_string(res.error())) << "\n";
      std::exit(1);
    }
  };
  for (int i = 0; i < 100; ++i) {
    post();
    sig(inputs);
  }
  std::vector<double> rest, call, diff;
  for (int i = 0; i < calls; ++i) {
    auto t0 = Clock::now();
    post();
    rest.push_back(micros_since(t0));
    t0 = Clock::now();
    sig(inputs);
    call.push_back(micros_since(t0));
    diff.push_back(rest.back() - call.back());
  }
  std::cout << fmt::format("RESULT rest_p50_us {:.1f} call_p50_us {:.1f} overhead_p50_us {:.1f} rest_min_us {:.1f} "
                           "call_min_us {:.1f}\n",
                           median(rest), median(call), median(diff), *std::min_element(rest.begin(), rest.end()),
                           *std::min_element(call.begin(), call.end()));
  return 0;
}
