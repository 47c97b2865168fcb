#pragma once
// The counters kiln-serve exports at /monitoring/prometheus/metrics, named as
// TF Serving names its own (":tensorflow:serving:request_count", ...) so
// dashboards built for TF Serving read them.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::serve {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}
  void add(double x);
  // Prometheus' _bucket (cumulative, le="..."), _sum and _count lines.
  void write(std::string& out, const std::string& name, const std::string& labels) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Metrics {
 public:
  // One request: its API ("predict", "get_model_status", ...), TF's status
  // code name ("OK", "INVALID_ARGUMENT", ...) and its latency.
  void record_request(const std::string& model, const std::string& api, const std::string& status,
                      double latency_micros);
  // One batched call of the model with `size` rows (from several requests),
  // and how long each request waited in the queue for it.
  void record_batch(const std::string& model, int64_t size, const std::vector<double>& queued_micros);
  void record_load(const std::string& model, bool ok);
  std::string prometheus() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> request_count_;  // labels -> count
  std::map<std::string, Histogram> latency_;       // labels -> microseconds
  std::map<std::string, Histogram> batch_size_;    // labels -> rows per batch
  std::map<std::string, Histogram> batch_requests_;
  std::map<std::string, Histogram> queuing_latency_;  // labels -> microseconds
  std::map<std::string, uint64_t> loads_;
};

}  // namespace kiln::serve
