#pragma once
// kiln-serve's flags, named as TF Serving's model server names them
// (--model_name, --model_base_path, --rest_api_port, --enable_batching with
// --batching_parameters_file, --file_system_poll_wait_seconds), plus a few of
// Kiln's own for the limits TF Serving leaves to a proxy in front of it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::serve {

// TF Serving's BatchingParameters, with its defaults.
struct BatchingOptions {
  bool enabled = false;
  int64_t max_batch_size = 1000;
  int64_t batch_timeout_micros = 0;
  int64_t max_enqueued_batches = 10;
  int num_batch_threads = 0;  // 0: one per core
};

// TF Serving's ServableVersionPolicy: which versions under the base path serve.
struct VersionPolicy {
  enum Kind { Latest, All, Specific } kind = Latest;
  int64_t num_versions = 1;       // Latest: the N newest
  std::vector<int64_t> versions;  // Specific
};

// One model to serve (TF Serving's ModelConfig).
struct ModelConfig {
  std::string name;
  std::string base_path;
  VersionPolicy policy;
  std::map<std::string, int64_t> version_labels;
  bool operator==(const ModelConfig& o) const {
    return name == o.name && base_path == o.base_path && policy.kind == o.policy.kind &&
           policy.num_versions == o.policy.num_versions && policy.versions == o.policy.versions &&
           version_labels == o.version_labels;
  }
};

struct Options {
  std::string model_name;
  std::string model_base_path;
  std::string model_config_file;  // TF Serving's ModelServerConfig, text format
  double model_config_file_poll_wait_seconds = 0;  // > 0: re-read it that often (models added, removed, changed)
  std::vector<ModelConfig> models;  // from the two above, or from the config file
  int grpc_port = 8500;            // TF Serving's --port; 0: any free port (printed)
  std::string rest_api_host = "0.0.0.0";  // Kiln's: where both APIs listen (TF Serving: every interface)
  int rest_api_port = 8501;               // 0: any free port (the one chosen is printed)
  int rest_api_num_threads = 0;           // 0: 128 (a request waiting for its batch holds a thread)
  int64_t rest_api_timeout_in_ms = 30000; // each request's deadline
  double file_system_poll_wait_seconds = 1;  // 0 or less: load once, never poll
  int max_num_load_retries = 5;
  int max_concurrent_model_calls = 0;     // Kiln's: 0: one per core (TF: inter-op threads)
  int64_t rest_api_max_body_bytes = 64 << 20;  // Kiln's: larger bodies get 413
  int64_t rest_api_max_pending_requests = 96;  // Kiln's: predictions waiting beyond this get 429 / RESOURCE_EXHAUSTED
  BatchingOptions batching;
};

// Parses argv (without the program name); throws std::invalid_argument with
// the usage text's reason.
Options parse_options(const std::vector<std::string>& args);

// TF Serving's batching parameters file: text-format BatchingParameters
// ("max_batch_size { value: 32 }" lines).
void read_batching_parameters(const std::string& text, BatchingOptions& batching);

// TF Serving's ModelServerConfig in protobuf text format
// ("model_config_list { config { name: ... base_path: ... } }"); throws
// std::invalid_argument naming what is wrong (model_config.cpp).
std::vector<ModelConfig> read_model_config(const std::string& text);
// The same, from the file at `path`.
std::vector<ModelConfig> read_model_config_file(const std::string& path);

extern const char* const kUsage;

}  // namespace kiln::serve
