#pragma once
// TF Serving's REST API on a cpp-httplib server: model status, metadata,
// predict, and the Prometheus metrics page.
#include <atomic>

#include "metrics.h"
#include "model_manager.h"
#include "options.h"

namespace httplib {
class Server;
}

namespace kiln::serve {

class HttpApi {
 public:
  HttpApi(const Options& options, ModelManager& models, Metrics& metrics)
      : options_(options), models_(models), metrics_(metrics) {}
  void add_routes(httplib::Server& server);

 private:
  std::string model_status(const std::string& name, std::optional<int64_t> version);
  std::string model_metadata(const std::string& name, std::optional<int64_t> version);
  std::string predict(const std::string& name, std::optional<int64_t> version, const std::string& body,
                      Clock::time_point deadline);
  void check_name(const std::string& name, std::optional<int64_t> version) const;

  const Options& options_;
  ModelManager& models_;
  Metrics& metrics_;
  std::atomic<int64_t> pending_{0};
};

}  // namespace kiln::serve
