#pragma once
// TF Serving's REST API on a cpp-httplib server: model status, metadata,
// predict (per model, version or label), and the Prometheus metrics page.
#include "metrics.h"
#include "model_manager.h"
#include "options.h"
#include "predictor.h"

namespace httplib {
class Server;
}

namespace kiln::serve {

class HttpApi {
 public:
  HttpApi(const Options& options, ModelRegistry& models, Predictor& predictor, Metrics& metrics)
      : options_(options), models_(models), predictor_(predictor), metrics_(metrics) {}
  void add_routes(httplib::Server& server);

 private:
  std::string model_status(const std::string& name, const VersionRef& ref);
  std::string model_metadata(const std::string& name, const VersionRef& ref);
  std::string predict(const std::string& name, const VersionRef& ref, const std::string& body,
                      Clock::time_point deadline);

  const Options& options_;
  ModelRegistry& models_;
  Predictor& predictor_;
  Metrics& metrics_;
};

}  // namespace kiln::serve
