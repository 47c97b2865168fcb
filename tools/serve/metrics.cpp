#include "metrics.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::serve {

namespace {

// Latency buckets: 10 us doubling to ~20 s.
std::vector<double> latency_bounds() {
  std::vector<double> b;
  for (double x = 10; x < 3e7; x *= 2) b.push_back(x);
  return b;
}

std::vector<double> size_bounds() { return {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}; }

std::string label(const std::string& key, const std::string& value) {
  std::string v;
  for (char c : value) {
    if (c == '\\' || c == '"') v += '\\';
    if (c == '\n') {
      v += "\\n";
      continue;
    }
    v += c;
  }
  return fmt::format("{}=\"{}\"", key, v);
}

}  // namespace

void Histogram::add(double x) {
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), x);
  ++counts_[static_cast<std::size_t>(it - bounds_.begin())];
  sum_ += x;
  ++count_;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& labels) const {
  uint64_t cumulative = 0;
  for (std::size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < bounds_.size() ? fmt::format("{}", bounds_[i]) : "+Inf";
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, le, cumulative);
  }
  out += fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, sum_, name, labels, count_);
}

void Metrics::record_request(const std::string& model, const std::string& api, const std::string& status,
                             double latency_micros) {
  std::lock_guard lock(mutex_);
  ++request_count_[label("model_name", model) + "," + label("API", api) + "," + label("status", status)];
  const std::string key = label("model_name", model) + "," + label("API", api);
  latency_.try_emplace(key, latency_bounds()).first->second.add(latency_micros);
}

void Metrics::record_batch(const std::string& model, int64_t size, const std::vector<double>& queued_micros) {
  std::lock_guard lock(mutex_);
  const std::string key = label("model_name", model);
  batch_size_.try_emplace(key, size_bounds()).first->second.add(static_cast<double>(size));
  batch_requests_.try_emplace(key, size_bounds()).first->second.add(static_cast<double>(queued_micros.size()));
  Histogram& queuing = queuing_latency_.try_emplace(key, latency_bounds()).first->second;
  for (double micros : queued_micros) queuing.add(micros);
}

void Metrics::record_load(const std::string& model, bool ok) {
  std::lock_guard lock(mutex_);
  ++loads_[label("model_name", model) + "," + label("status", ok ? "OK" : "ERROR")];
}

std::string Metrics::prometheus() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# TYPE :tensorflow:serving:request_count counter\n";
  for (const auto& [labels, n] : request_count_) out += fmt::format(":tensorflow:serving:request_count{{{}}} {}\n", labels, n);
  out += "# TYPE :tensorflow:serving:request_latency histogram\n";
  for (const auto& [labels, h] : latency_) h.write(out, ":tensorflow:serving:request_latency", labels);
  out += "# TYPE :tensorflow:serving:batching_session:batch_size histogram\n";
  for (const auto& [labels, h] : batch_size_) h.write(out, ":tensorflow:serving:batching_session:batch_size", labels);
  out += "# TYPE :tensorflow:serving:batching_session:requests_per_batch histogram\n";
  for (const auto& [labels, h] : batch_requests_)
    h.write(out, ":tensorflow:serving:batching_session:requests_per_batch", labels);
  out += "# TYPE :tensorflow:serving:batching_session:queuing_latency histogram\n";
  for (const auto& [labels, h] : queuing_latency_)
    h.write(out, ":tensorflow:serving:batching_session:queuing_latency", labels);
  out += "# TYPE :tensorflow:serving:model_load_count counter\n";
  for (const auto& [labels, n] : loads_) out += fmt::format(":tensorflow:serving:model_load_count{{{}}} {}\n", labels, n);
  return out;
}

}  // namespace kiln::serve
