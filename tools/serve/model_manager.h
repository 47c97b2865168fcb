#pragma once
// The versions of one model under its base path, as TF Serving lays them out
// (DIR/1/, DIR/2/, ...), served by its version policy (the newest by
// default). A thread polls the directory; a new version is loaded and warmed
// up beside those serving, then swapped in at once. Requests hold the version
// they started on (a shared_ptr), so in-flight requests finish on the old one,
// which is freed when the last of them ends. A version that fails to load is
// logged and refused, and the old one keeps serving.
//
// ModelRegistry holds one ModelManager per configured model and answers the
// lookups both APIs make, with TF Serving's NotFound texts.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "call_slots.h"
#include "metrics.h"
#include "options.h"
#include "servable.h"
#include "status.h"

namespace kiln::serve {

// Which version a request names: a number, a label, or neither (the newest).
struct VersionRef {
  std::optional<int64_t> version;
  std::optional<std::string> label;
};

// One version's state, as GetModelStatus reports it.
struct VersionStatus {
  int64_t version = 0;
  std::string state;  // "LOADING", "AVAILABLE", "END"
  bool ok = true;
  Code code = Code::Internal;
  std::string error;
};

class ModelManager {
 public:
  ModelManager(ModelConfig config, const Options& options, Metrics& metrics, CallSlots& slots);
  ~ModelManager();

  const std::string& name() const { return config_.name; }
  const ModelConfig& config() const { return config_; }
  // Loads and unloads versions as the policy says, now (the poller calls
  // this every --file_system_poll_wait_seconds).
  void poll();
  void start_polling();

  // The version asked for; NotFound as TF Serving says it when it is not
  // being served.
  std::shared_ptr<const Servable> get(const VersionRef& ref) const;
  // Every version's state (newest first), or the one asked for; NotFound
  // when there is none.
  std::vector<VersionStatus> status(const VersionRef& ref) const;

 private:
  // The version a label names; InvalidArgument when there is no such label.
  std::optional<int64_t> resolve(const VersionRef& ref) const;
  struct VersionState {
    std::string state;
    Code code = Code::Internal;
    bool ok = true;
    std::string error;
    int failures = 0;
  };
  bool load(int64_t version);  // false: it failed (logged, counted)
  std::vector<int64_t> wanted(const std::vector<int64_t>& on_disk);

  ModelConfig config_;
  const Options& options_;
  Metrics& metrics_;
  CallSlots& slots_;
  mutable std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<const Servable>> serving_;
  std::map<int64_t, VersionState> states_;
  bool said_empty_ = false;
  std::mutex load_mutex_;  // one poll at a time
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread poller_;
};

class ModelRegistry {
 public:
  ModelRegistry(const Options& options, Metrics& metrics);
  ~ModelRegistry();
  void poll();  // every model, now
  // Starts the models' pollers, and with --model_config_file_poll_wait_seconds
  // the thread that re-reads the config file.
  void start_polling();
  // Serves the models `configs` names: new ones are loaded before they are
  // added, removed ones dropped (their requests in flight finish), changed
  // ones loaded anew and swapped in.
  void reconfigure(const std::vector<ModelConfig>& configs);
  // The servable a request names; NotFound ("Servable not found for
  // request: Latest(m)") when there is no such model or version.
  std::shared_ptr<const Servable> servable(const std::string& model, const VersionRef& ref) const;
  // GetModelStatus; NotFound ("Could not find any versions of model m").
  std::vector<VersionStatus> status(const std::string& model, const VersionRef& ref) const;
  // Does the server have a model of that name?
  bool has(const std::string& model) const;

 private:
  std::shared_ptr<ModelManager> find(const std::string& model) const;

  const Options& options_;
  Metrics& metrics_;
  CallSlots slots_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<ModelManager>> models_;
  std::mutex reconfigure_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread config_poller_;
};

}  // namespace kiln::serve
