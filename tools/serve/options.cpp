#include "options.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kiln::serve {

const char* const kUsage =
    "usage: kiln-serve --model_name=NAME --model_base_path=DIR [options]\n"
    "       kiln-serve --model_config_file=FILE [options]\n"
    "  serves the newest version DIR/<N>/ of a Kiln saved model over TF Serving's REST and gRPC APIs\n"
    "  --model_config_file=F            TF Serving's ModelServerConfig (text format): several models,\n"
    "                                   version policies (latest, all, specific), version_labels\n"
    "  --model_config_file_poll_wait_seconds=0  re-read the config file that often (0: never)\n"
    "  --port=8500                      gRPC port (PredictionService, ModelService); 0 picks a free one\n"
    "  --rest_api_port=8501             0 picks a free port (printed at start)\n"
    "  --rest_api_host=0.0.0.0          the address both APIs listen on (127.0.0.1: this machine only)\n"
    "  --rest_api_num_threads=N         HTTP worker threads (default 128)\n"
    "  --rest_api_timeout_in_ms=30000   each request's deadline\n"
    "  --rest_api_max_body_bytes=N      larger request bodies get 413 (default 64 MiB)\n"
    "  --rest_api_max_pending_requests=N  predictions waiting beyond this get 429 or gRPC\n"
    "                                   RESOURCE_EXHAUSTED (default 96, REST and gRPC together)\n"
    "  --enable_batching                dynamic batching of predict calls\n"
    "  --batching_parameters_file=F     text BatchingParameters: max_batch_size, batch_timeout_micros,\n"
    "                                   max_enqueued_batches, num_batch_threads ({ value: N } each)\n"
    "  --max_batch_size=N --batch_timeout_micros=N --max_enqueued_batches=N --num_batch_threads=N\n"
    "                                   the same, as flags (Kiln's shorthand)\n"
    "  --file_system_poll_wait_seconds=1  how often to look for new versions (0: never)\n"
    "  --max_num_load_retries=5         tries for a version that fails to load\n"
    "  --max_concurrent_model_calls=N   model calls running at once, the others queue in order\n"
    "                                   (default one per core)\n";

namespace {

int64_t to_int(const std::string& flag, const std::string& value, int64_t lo) {
  std::size_t used = 0;
  int64_t x = 0;
  try {
    x = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || x < lo)
    throw std::invalid_argument(fmt::format("--{}: '{}' is not an integer >= {}", flag, value, lo));
  return x;
}

bool to_bool(const std::string& flag, const std::string& value) {
  if (value.empty() || value == "true" || value == "1") return true;
  if (value == "false" || value == "0") return false;
  throw std::invalid_argument(fmt::format("--{}: '{}' is not true or false", flag, value));
}

void set_batching(BatchingOptions& b, const std::string& key, const std::string& value, const std::string& where) {
  if (key == "max_batch_size") b.max_batch_size = to_int(where, value, 1);
  else if (key == "batch_timeout_micros") b.batch_timeout_micros = to_int(where, value, 0);
  else if (key == "max_enqueued_batches") b.max_enqueued_batches = to_int(where, value, 1);
  else if (key == "num_batch_threads") b.num_batch_threads = static_cast<int>(to_int(where, value, 1));
  else throw std::invalid_argument(fmt::format("{}: unknown batching parameter '{}'", where, key));
}

}  // namespace

void read_batching_parameters(const std::string& text, BatchingOptions& batching) {
  static const std::regex entry(R"(\s*([a-z_]+)\s*\{\s*value\s*:\s*(-?\d+)\s*\})");
  std::string rest = text;
  std::smatch m;
  while (std::regex_search(rest, m, entry)) {
    if (!std::all_of(rest.begin(), rest.begin() + m.position(0), [](char c) { return std::isspace(c); }))
      throw std::invalid_argument("--batching_parameters_file: expected 'name { value: N }' entries");
    set_batching(batching, m[1], m[2], "--batching_parameters_file");
    rest = m.suffix();
  }
  if (!std::all_of(rest.begin(), rest.end(), [](char c) { return std::isspace(c); }))
    throw std::invalid_argument("--batching_parameters_file: expected 'name { value: N }' entries");
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  std::string batching_file;
  std::map<std::string, std::string> batching_flags;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument(fmt::format("unexpected argument '{}'", arg));
    std::string key = arg.substr(2), value;
    bool has_value = false;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      has_value = true;
    }
    // "--flag=value", or "--flag value" (the next argument, unless it is a flag).
    auto need = [&] {
      if (!has_value && i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
        value = args[++i];
        has_value = true;
      }
      if (!has_value) throw std::invalid_argument(fmt::format("--{} needs a value (--{}=...)", key, key));
      return value;
    };
    if (key == "model_name") o.model_name = need();
    else if (key == "model_base_path") o.model_base_path = need();
    else if (key == "rest_api_host") o.rest_api_host = need();
    else if (key == "rest_api_port") o.rest_api_port = static_cast<int>(to_int(key, need(), 0));
    else if (key == "rest_api_num_threads") o.rest_api_num_threads = static_cast<int>(to_int(key, need(), 1));
    else if (key == "rest_api_timeout_in_ms") o.rest_api_timeout_in_ms = to_int(key, need(), 1);
    else if (key == "rest_api_max_body_bytes") o.rest_api_max_body_bytes = to_int(key, need(), 1);
    else if (key == "rest_api_max_pending_requests") o.rest_api_max_pending_requests = to_int(key, need(), 1);
    else if (key == "enable_batching") o.batching.enabled = to_bool(key, value);
    else if (key == "batching_parameters_file") batching_file = need();
    else if (key == "max_batch_size" || key == "batch_timeout_micros" || key == "max_enqueued_batches" ||
             key == "num_batch_threads")
      batching_flags[key] = need();
    else if (key == "file_system_poll_wait_seconds") {
      try {
        o.file_system_poll_wait_seconds = std::stod(need());
      } catch (const std::exception&) {
        throw std::invalid_argument(fmt::format("--{}: '{}' is not a number", key, value));
      }
    } else if (key == "max_concurrent_model_calls") o.max_concurrent_model_calls = static_cast<int>(to_int(key, need(), 1));
    else if (key == "max_num_load_retries") o.max_num_load_retries = static_cast<int>(to_int(key, need(), 0));
    else if (key == "model_config_file") o.model_config_file = need();
    else if (key == "model_config_file_poll_wait_seconds") {
      try {
        o.model_config_file_poll_wait_seconds = std::stod(need());
      } catch (const std::exception&) {
        throw std::invalid_argument(fmt::format("--{}: '{}' is not a number", key, value));
      }
    }
    else if (key == "port") o.grpc_port = static_cast<int>(to_int(key, need(), 0));
    else throw std::invalid_argument(fmt::format("unknown flag --{}", key));
  }
  if (!o.model_config_file.empty()) {
    if (!o.model_name.empty() || !o.model_base_path.empty())
      throw std::invalid_argument("--model_config_file and --model_name/--model_base_path exclude each other");
    o.models = read_model_config_file(o.model_config_file);
  } else {
    if (o.model_name.empty()) throw std::invalid_argument("missing --model_name");
    if (o.model_base_path.empty()) throw std::invalid_argument("missing --model_base_path");
    o.models.push_back(ModelConfig{o.model_name, o.model_base_path, {}, {}});
  }
  if (!batching_file.empty()) {
    std::ifstream in(batching_file);
    if (!in) throw std::invalid_argument(fmt::format("--batching_parameters_file: cannot read {}", batching_file));
    std::stringstream text;
    text << in.rdbuf();
    read_batching_parameters(text.str(), o.batching);
  }
  for (const auto& [key, value] : batching_flags) set_batching(o.batching, key, value, "--" + key);
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  if (o.batching.num_batch_threads == 0) o.batching.num_batch_threads = cores;
  if (o.max_concurrent_model_calls == 0) o.max_concurrent_model_calls = cores;
  if (o.rest_api_num_threads == 0) o.rest_api_num_threads = 128;
  return o;
}

}  // namespace kiln::serve
