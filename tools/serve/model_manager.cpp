#include "model_manager.h"

#include <fmt/format.h>

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

}  // namespace

ModelManager::ModelManager(const Options& options, Metrics& metrics)
    : options_(options), metrics_(metrics), slots_(options.max_concurrent_model_calls) {}

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

void ModelManager::poll() {
  std::lock_guard load_lock(load_mutex_);
  const std::vector<int64_t> versions = versions_under(options_.model_base_path);
  int64_t serving = -1;
  {
    std::lock_guard lock(mutex_);
    if (current_) serving = current_->version();
    if (versions.empty() && !states_.count(-1)) {
      states_[-1] = {};  // logged once
      log(fmt::format("No versions of servable {} found under base path {}", options_.model_name,
                      options_.model_base_path));
    }
  }
  // The newest version that has not failed too often.
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    const int64_t v = *it;
    if (v == serving) return;
    {
      std::lock_guard lock(mutex_);
      auto s = states_.find(v);
      if (s != states_.end() && !s->second.ok && s->second.failures > options_.max_num_load_retries) continue;
      states_[v].state = "LOADING";
    }
    const std::string path = (fs::path(options_.model_base_path) / std::to_string(v)).string();
    try {
      auto servable = std::make_shared<const Servable>(options_.model_name, v, path, options_, metrics_, slots_);
      std::shared_ptr<const Servable> old;
      {
        std::lock_guard lock(mutex_);
        old = std::exchange(current_, servable);
        states_[v] = VersionState{};
        states_[v].state = "AVAILABLE";
        if (old) states_[old->version()].state = "END";
      }
      metrics_.record_load(options_.model_name, true);
      log(fmt::format("Successfully loaded servable version {{name: {} version: {}}}", options_.model_name, v));
      // `old` is freed here, or by the last request still running on it.
      return;
    } catch (const ServeError& e) {
      std::lock_guard lock(mutex_);
      VersionState& s = states_[v];
      s.state = "END";
      s.ok = false;
      s.code = e.code();
      s.error = e.what();
      ++s.failures;
      metrics_.record_load(options_.model_name, false);
      log(fmt::format("Loading servable: {{name: {} version: {}}} failed: {}", options_.model_name, v, e.what()));
      if (s.failures <= options_.max_num_load_retries) return;  // retried at the next poll
    }
  }
}

std::shared_ptr<const Servable> ModelManager::get(std::optional<int64_t> version) const {
  std::lock_guard lock(mutex_);
  if (current_ && (!version || *version == current_->version())) return current_;
  if (version)
    fail(Code::NotFound, fmt::format("Servable not found for request: Specific({}, {})", options_.model_name, *version));
  fail(Code::NotFound, fmt::format("Servable not found for request: Latest({})", options_.model_name));
}

json ModelManager::status(std::optional<int64_t> version) const {
  std::lock_guard lock(mutex_);
  json list = json::array();
  for (auto it = states_.rbegin(); it != states_.rend(); ++it) {
    const auto& [v, s] = *it;
    if (v < 0 || (version && v != *version)) continue;
    list.push_back({{"version", std::to_string(v)},
                    {"state", s.state},
                    {"status", {{"error_code", s.ok ? "OK" : std::string(code_name(s.code))},
                                {"error_message", s.ok ? "" : s.error}}}});
  }
  if (list.empty()) {
    if (version)
      fail(Code::NotFound, fmt::format("Could not find version {} of model {}", *version, options_.model_name));
    fail(Code::NotFound, fmt::format("Could not find any versions of model {}", options_.model_name));
  }
  return {{"model_version_status", list}};
}

}  // namespace kiln::serve
