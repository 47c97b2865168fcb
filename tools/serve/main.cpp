// kiln-serve: Kiln's saved models over TensorFlow Serving's REST and gRPC APIs.
//
//   kiln-serve --model_name=mnist --model_base_path=/models/mnist --port=8500 --rest_api_port=8501
//   curl -d '{"instances": [[...784 floats...]]}' localhost:8501/v1/models/mnist:predict
//
// SIGTERM (or SIGINT) stops accepting connections, lets the requests in
// flight finish (REST and gRPC), then exits 0.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "grpc_api.h"
#include "http_api.h"
#include "kiln/threading.h"
#include "model_manager.h"
#include "options.h"

int main(int argc, char** argv) {
  kiln::config::adopt_fair_wait_policy(argc, argv);
  using namespace kiln::serve;
  Options options;
  try {
    options = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::invalid_argument& e) {
    std::cerr << "kiln-serve: " << e.what() << "\n" << kUsage;
    return 2;
  }
  // Signals go to one thread that waits for them (every thread started
  // after this inherits the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // A signal before the port opens (while the first version loads) ends the
  // process at once: nothing is in flight. Later it stops the listener, and
  // the requests in flight are answered before listen_after_bind returns.
  httplib::Server server;
  std::unique_ptr<grpc::Server> grpc_server;
  std::atomic<bool> serving{false};
  std::thread stopper([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!serving) {
      std::cerr << "kiln-serve: signal " << sig << " before serving: exiting\n" << std::flush;
      std::_Exit(0);
    }
    std::cerr << "kiln-serve: signal " << sig << ": draining\n" << std::flush;
    while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    server.stop();
    // Answers the calls in flight (up to the request deadline), refuses new ones.
    grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(options.rest_api_timeout_in_ms));
  });
  stopper.detach();  // done after a signal; otherwise still waiting when the process ends

  Metrics metrics;
  ModelRegistry models(options, metrics);
  models.poll();  // the first versions, before the ports open
  models.start_polling();
  Predictor predictor(options, models);

  // gRPC: its own thread pool (a call waiting for its batch holds a thread,
  // as a REST request does), messages bounded as REST bodies are.
  PredictionServiceImpl prediction_service(options, models, predictor, metrics);
  ModelServiceImpl model_service(models, metrics);
  int grpc_port = 0;
  {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(options.rest_api_host + ":" + std::to_string(options.grpc_port),
                             grpc::InsecureServerCredentials(), &grpc_port);
    builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<int64_t>(options.rest_api_max_body_bytes, INT32_MAX)));
    builder.SetMaxSendMessageSize(INT32_MAX);
    grpc::ResourceQuota quota("kiln-serve");
    quota.SetMaxThreads(options.rest_api_num_threads + 8);
    builder.SetResourceQuota(quota);
    builder.RegisterService(&prediction_service);
    builder.RegisterService(&model_service);
    grpc_server = builder.BuildAndStart();
  }
  if (!grpc_server || grpc_port == 0) {
    std::cerr << "kiln-serve: cannot listen for gRPC on " << options.rest_api_host << ":" << options.grpc_port << "\n";
    return 1;
  }

  const int threads = options.rest_api_num_threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  // Without TCP_NODELAY a response written in two parts (headers, body)
  // waits ~40 ms for the client's delayed ACK (Nagle).
  server.set_tcp_nodelay(true);
  // httplib closes a keep-alive connection after 5 requests by default, and
  // its listen backlog is 5: clients reconnecting at once overflow it and
  // wait for a SYN retry (1 s). 100 requests per connection keeps that rare.
  server.set_keep_alive_max_count(100);
  server.set_read_timeout(std::chrono::milliseconds(options.rest_api_timeout_in_ms));
  server.set_write_timeout(std::chrono::milliseconds(options.rest_api_timeout_in_ms));
  HttpApi api(options, models, predictor, metrics);
  api.add_routes(server);

  // httplib listens with a backlog of 5: 64 clients connecting at once
  // overflow it, and the dropped ones wait for TCP's retry (1-3 s). The
  // listening socket is caught here and given the system's maximum.
  int listen_fd = -1;
  server.set_socket_options([&listen_fd](socket_t sock) {
    httplib::default_socket_options(sock);
    listen_fd = sock;
  });
  int port = options.rest_api_port;
  if (port == 0) {
    port = server.bind_to_any_port(options.rest_api_host);
  } else if (!server.bind_to_port(options.rest_api_host, port)) {
    port = -1;
  }
  if (port < 0) {
    std::cerr << "kiln-serve: cannot listen on " << options.rest_api_host << ":" << options.rest_api_port << "\n";
    return 1;
  }
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  std::cout << "Running gRPC ModelServer at " << options.rest_api_host << ":" << grpc_port << " ..." << std::endl;
  std::cout << "Exporting HTTP/REST API at:" << options.rest_api_host << ":" << port << " ..." << std::endl;
  serving = true;
  server.listen_after_bind();  // returns once stopped, after the requests in flight are answered
  grpc_server->Wait();         // the same for gRPC (Shutdown was called by the signal's thread)
  std::cerr << "kiln-serve: stopped\n" << std::flush;
  return 0;
}
