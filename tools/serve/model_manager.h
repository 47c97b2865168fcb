#pragma once
// The versions of one model under --model_base_path, as TF Serving lays them
// out (DIR/1/, DIR/2/, ...): the newest is served. A thread polls the
// directory; a new version is loaded and warmed up beside the one serving,
// then swapped in at once. Requests hold the version they started on (a
// shared_ptr), so in-flight requests finish on the old one, which is freed
// when the last of them ends. A version that fails to load is logged and
// refused, and the old one keeps serving.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "call_slots.h"
#include "metrics.h"
#include "options.h"
#include "servable.h"
#include "status.h"

namespace kiln::serve {

class ModelManager {
 public:
  ModelManager(const Options& options, Metrics& metrics);
  ~ModelManager();

  // Looks for a newer version now (the poller calls this every
  // --file_system_poll_wait_seconds).
  void poll();
  // Starts the poller thread.
  void start_polling();

  // The version asked for (the newest when none); NotFound as TF Serving
  // says it when it is not being served.
  std::shared_ptr<const Servable> get(std::optional<int64_t> version) const;
  // GetModelStatus' JSON ({"model_version_status": [...]}).
  json status(std::optional<int64_t> version) const;

 private:
  struct VersionState {
    std::string state;  // "LOADING", "AVAILABLE", "END"
    Code code = Code::Internal;
    bool ok = true;
    std::string error;
    int failures = 0;
  };
  const Options& options_;
  Metrics& metrics_;
  CallSlots slots_;
  mutable std::mutex mutex_;
  std::shared_ptr<const Servable> current_;
  std::map<int64_t, VersionState> states_;
  std::mutex load_mutex_;  // one poll at a time
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace kiln::serve
