// A small gRPC load client for bench/serving_bench.sh: C concurrent callers
// of TF Serving's PredictionService/Predict (one synchronous stub call at a
// time each, as wrk's connections do for REST), one example per request
// (the first input of serving_default, unknown dims taken as 1, zeros), for
// S seconds; prints requests/s and the p50/p99 latency.
//   bench_serve_grpc HOST:PORT MODEL INPUT_NAME SECONDS CONCURRENCY DIM...
#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <thread>
#include <vector>

#include <tensorflow_serving/apis/prediction_service.grpc.pb.h>  // generated from tools/serve/proto

int main(int argc, char** argv) {
  if (argc < 7) {
    std::cerr << "usage: bench_serve_grpc HOST:PORT MODEL INPUT_NAME SECONDS CONCURRENCY DIM...\n";
    return 2;
  }
  const std::string target = argv[1], model = argv[2], input = argv[3];
  const double seconds = std::stod(argv[4]);
  const int concurrency = std::stoi(argv[5]);
  tensorflow::serving::PredictRequest request;
  request.mutable_model_spec()->set_name(model);
  tensorflow::TensorProto& x = (*request.mutable_inputs())[input];
  x.set_dtype(tensorflow::DT_FLOAT);
  int64_t n = 1;
  for (int i = 6; i < argc; ++i) {
    x.mutable_tensor_shape()->add_dim()->set_size(std::stoll(argv[i]));
    n *= std::stoll(argv[i]);
  }
  x.set_tensor_content(std::string(static_cast<std::size_t>(n) * sizeof(float), '\0'));

  using Clock = std::chrono::steady_clock;
  const auto stop = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::mutex mutex;
  std::vector<double> latencies_us;
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < concurrency; ++c)
    callers.emplace_back([&, c] {
      // A channel per caller, as wrk opens a connection per caller.
      grpc::ChannelArguments args;
      args.SetInt("kiln.bench.caller", c);  // distinct arguments: distinct connections
      auto stub = tensorflow::serving::PredictionService::NewStub(
          grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
      std::vector<double> mine;
      while (Clock::now() < stop) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        tensorflow::serving::PredictResponse response;
        const auto t0 = Clock::now();
        if (stub->Predict(&context, request, &response).ok())
          mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        else
          ++errors;
      }
      std::lock_guard lock(mutex);
      latencies_us.insert(latencies_us.end(), mine.begin(), mine.end());
    });
  for (auto& t : callers) t.join();
  std::sort(latencies_us.begin(), latencies_us.end());
  if (latencies_us.empty()) {
    std::cout << fmt::format("RESULT requests/s 0 p50_ms 0 p99_ms 0 errors {}\n", errors.load());
    return 1;
  }
  std::cout << fmt::format("RESULT requests/s {:.1f} p50_ms {:.2f} p99_ms {:.2f} errors {}\n",
                           static_cast<double>(latencies_us.size()) / seconds, latencies_us[latencies_us.size() / 2] / 1e3,
                           latencies_us[latencies_us.size() * 99 / 100] / 1e3, errors.load());
  return 0;
}
