#include "model_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace kiln::serve {

namespace {

namespace fs = std::filesystem;

// The version numbers under `base`: subdirectories named by digits alone.
std::vector<int64_t> versions_under(const std::string& base) {
  std::vector<int64_t> versions;
  std::error_code ec;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.size() > 18 || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!it->is_directory(ec)) continue;
    versions.push_back(std::stoll(name));
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

void log(const std::string& text) { std::cerr << "kiln-serve: " + text + "\n" << std::flush; }

[[noreturn]] void servable_not_found(const std::string& model, const VersionRef& ref) {
  if (ref.version) fail(Code::NotFound, fmt::format("Servable not found for request: Specific({}, {})", model, *ref.version));
  fail(Code::NotFound, fmt::format("Servable not found for request: Latest({})", model));
}

}  // namespace

ModelManager::ModelManager(ModelConfig config, const Options& options, Metrics& metrics, CallSlots& slots)
    : config_(std::move(config)), options_(options), metrics_(metrics), slots_(slots) {}

ModelManager::~ModelManager() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

void ModelManager::start_polling() {
  if (options_.file_system_poll_wait_seconds <= 0) return;
  poller_ = std::thread([this] {
    const auto wait = std::chrono::duration<double>(options_.file_system_poll_wait_seconds);
    std::unique_lock lock(mutex_);
    while (!stop_cv_.wait_for(lock, wait, [&] { return stopping_; })) {
      lock.unlock();
      poll();
      lock.lock();
    }
  });
}

bool ModelManager::load(int64_t v) {
  {
    std::lock_guard lock(mutex_);
    states_[v].state = "LOADING";
  }
  const std::string path = (fs::path(config_.base_path) / std::to_string(v)).string();
  try {
    auto servable = std::make_shared<const Servable>(config_.name, v, path, options_, metrics_, slots_);
    {
      std::lock_guard lock(mutex_);
      serving_[v] = std::move(servable);
      states_[v] = VersionState{};
      states_[v].state = "AVAILABLE";
    }
    metrics_.record_load(config_.name, true);
    log(fmt::format("Successfully loaded servable version {{name: {} version: {}}}", config_.name, v));
    return true;
  } catch (const ServeError& e) {
    std::lock_guard lock(mutex_);
    VersionState& s = states_[v];
    s.state = "END";
    s.ok = false;
    s.code = e.code();
    s.error = e.what();
    ++s.failures;
    metrics_.record_load(config_.name, false);
    log(fmt::format("Loading servable: {{name: {} version: {}}} failed: {}", config_.name, v, e.what()));
    return false;
  }
}

// The versions the policy serves, loading those not loaded yet. A version
// that fails to load is skipped, so under `latest` the one serving before it
// keeps serving (and it is retried at the next poll, up to
// --max_num_load_retries times).
std::vector<int64_t> ModelManager::wanted(const std::vector<int64_t>& on_disk) {
  std::vector<int64_t> chosen;
  const VersionPolicy& policy = config_.policy;
  for (auto it = on_disk.rbegin(); it != on_disk.rend(); ++it) {
    const int64_t v = *it;
    if (policy.kind == VersionPolicy::Latest && static_cast<int64_t>(chosen.size()) >= policy.num_versions) break;
    if (policy.kind == VersionPolicy::Specific &&
        std::find(policy.versions.begin(), policy.versions.end(), v) == policy.versions.end())
      continue;
    bool loaded, gave_up;
    {
      std::lock_guard lock(mutex_);
      loaded = serving_.count(v) > 0;
      auto s = states_.find(v);
      gave_up = s != states_.end() && !s->second.ok && s->second.failures > options_.max_num_load_retries;
    }
    if (loaded || (!gave_up && load(v))) chosen.push_back(v);
  }
  return chosen;
}

void ModelManager::poll() {
  std::lock_guard load_lock(load_mutex_);
  const std::vector<int64_t> on_disk = versions_under(config_.base_path);
  if (on_disk.empty() && !said_empty_) {
    said_empty_ = true;  // logged once
    log(fmt::format("No versions of servable {} found under base path {}", config_.name, config_.base_path));
  }
  const std::vector<int64_t> keep = wanted(on_disk);
  std::vector<std::shared_ptr<const Servable>> unloaded;  // freed outside the lock (or by the last request on them)
  std::lock_guard lock(mutex_);
  for (auto it = serving_.begin(); it != serving_.end();) {
    if (std::find(keep.begin(), keep.end(), it->first) != keep.end()) {
      ++it;
      continue;
    }
    states_[it->first].state = "END";
    log(fmt::format("Unloaded servable version {{name: {} version: {}}}", config_.name, it->first));
    unloaded.push_back(std::move(it->second));
    it = serving_.erase(it);
  }
}

std::optional<int64_t> ModelManager::resolve(const VersionRef& ref) const {
  if (!ref.label) return ref.version;
  auto l = config_.version_labels.find(*ref.label);
  if (l == config_.version_labels.end())
    fail(Code::InvalidArgument, fmt::format("Unrecognized servable version label: {}", *ref.label));
  return l->second;
}

std::shared_ptr<const Servable> ModelManager::get(const VersionRef& ref) const {
  const std::optional<int64_t> version = resolve(ref);
  std::lock_guard lock(mutex_);
  if (!version && !serving_.empty()) return serving_.rbegin()->second;
  if (version)
    if (auto it = serving_.find(*version); it != serving_.end()) return it->second;
  servable_not_found(config_.name, VersionRef{version, {}});
}

std::vector<VersionStatus> ModelManager::status(const VersionRef& ref) const {
  const std::optional<int64_t> version = resolve(ref);
  std::lock_guard lock(mutex_);
  std::vector<VersionStatus> list;
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) {
    const auto& [v, s] = *it;
    if (version && v != *version) continue;
    list.push_back(VersionStatus{v, s.state, s.ok, s.code, s.ok ? "" : s.error});
  }
  if (list.empty()) {
    if (version) fail(Code::NotFound, fmt::format("Could not find version {} of model {}", *version, config_.name));
    fail(Code::NotFound, fmt::format("Could not find any versions of model {}", config_.name));
  }
  return list;
}

ModelRegistry::ModelRegistry(const Options& options, Metrics& metrics)
    : options_(options), metrics_(metrics), slots_(options.max_concurrent_model_calls) {
  for (const ModelConfig& config : options.models)
    models_.emplace(config.name, std::make_shared<ModelManager>(config, options, metrics, slots_));
}

ModelRegistry::~ModelRegistry() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (config_poller_.joinable()) config_poller_.join();
}

void ModelRegistry::poll() {
  std::map<std::string, std::shared_ptr<ModelManager>> models;
  {
    std::lock_guard lock(mutex_);
    models = models_;
  }
  for (auto& [name, model] : models) model->poll();  // loads outside the lock
}

void ModelRegistry::start_polling() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, model] : models_) model->start_polling();
  }
  if (options_.model_config_file.empty() || options_.model_config_file_poll_wait_seconds <= 0) return;
  config_poller_ = std::thread([this] {
    const auto wait = std::chrono::duration<double>(options_.model_config_file_poll_wait_seconds);
    std::unique_lock lock(mutex_);
    while (!stop_cv_.wait_for(lock, wait, [&] { return stopping_; })) {
      lock.unlock();
      try {
        reconfigure(read_model_config_file(options_.model_config_file));
      } catch (const std::invalid_argument& e) {
        log(fmt::format("keeping the models served: {}", e.what()));  // a bad edit changes nothing
      }
      lock.lock();
    }
  });
}

void ModelRegistry::reconfigure(const std::vector<ModelConfig>& configs) {
  std::lock_guard one_at_a_time(reconfigure_mutex_);
  std::map<std::string, std::shared_ptr<ModelManager>> current;
  {
    std::lock_guard lock(mutex_);
    current = models_;
  }
  // Loaded outside the lock: requests for the other models go on meanwhile.
  std::map<std::string, std::shared_ptr<ModelManager>> next;
  for (const ModelConfig& config : configs) {
    auto it = current.find(config.name);
    if (it != current.end() && it->second->config() == config) {
      next.emplace(config.name, it->second);
      continue;
    }
    auto model = std::make_shared<ModelManager>(config, options_, metrics_, slots_);
    model->poll();
    model->start_polling();
    log(fmt::format("{} model {}", it == current.end() ? "Adding" : "Reloading", config.name));
    next.emplace(config.name, std::move(model));
  }
  for (const auto& [name, model] : current)
    if (!next.count(name)) log(fmt::format("Removing model {}", name));
  {
    std::lock_guard lock(mutex_);
    std::swap(models_, next);
  }
  // `next` (the old map) goes here: a manager no longer served stops polling;
  // its versions go with the last request on them.
}

std::shared_ptr<ModelManager> ModelRegistry::find(const std::string& model) const {
  std::lock_guard lock(mutex_);
  auto it = models_.find(model);
  return it == models_.end() ? nullptr : it->second;
}

bool ModelRegistry::has(const std::string& model) const { return find(model) != nullptr; }

std::shared_ptr<const Servable> ModelRegistry::servable(const std::string& model, const VersionRef& ref) const {
  std::shared_ptr<ModelManager> m = find(model);
  if (!m) servable_not_found(model, ref);
  return m->get(ref);
}

std::vector<VersionStatus> ModelRegistry::status(const std::string& model, const VersionRef& ref) const {
  std::shared_ptr<ModelManager> m = find(model);
  if (!m) fail(Code::NotFound, fmt::format("Could not find any versions of model {}", model));
  return m->status(ref);
}

}  // namespace kiln::serve
