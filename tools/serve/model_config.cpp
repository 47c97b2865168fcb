// --model_config_file: TF Serving's ModelServerConfig read with protobuf's
// own text-format parser (so the syntax is exactly TF Serving's), turned into
// Kiln's ModelConfig list.
#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "options.h"
#include <tensorflow_serving/config/model_server_config.pb.h>  // generated from tools/serve/proto

namespace kiln::serve {

namespace {

// Collects the parser's first error, with its line and column.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (text.empty()) text = fmt::format("line {} column {}: {}", line + 1, column + 1, message);
  }
  std::string text;
};

VersionPolicy read_policy(const tensorflow::serving::ModelConfig& c) {
  using Policy = tensorflow::serving::FileSystemStoragePathSourceConfig::ServableVersionPolicy;
  VersionPolicy p;
  if (!c.has_model_version_policy()) return p;
  const Policy& policy = c.model_version_policy();
  switch (policy.policy_choice_case()) {
    case Policy::kLatest:
      p.num_versions = std::max<int64_t>(1, policy.latest().num_versions());
      break;
    case Policy::kAll: p.kind = VersionPolicy::All; break;
    case Policy::kSpecific:
      p.kind = VersionPolicy::Specific;
      p.versions.assign(policy.specific().versions().begin(), policy.specific().versions().end());
      if (p.versions.empty())
        throw std::invalid_argument(fmt::format("--model_config_file: model '{}': specific {{}} names no versions",
                                                c.name()));
      break;
    case Policy::POLICY_CHOICE_NOT_SET: break;
  }
  return p;
}

}  // namespace

std::vector<ModelConfig> read_model_config(const std::string& text) {
  tensorflow::serving::ModelServerConfig config;
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &config))
    throw std::invalid_argument("--model_config_file: " + errors.text);
  if (!config.has_model_config_list() || config.model_config_list().config().empty())
    throw std::invalid_argument("--model_config_file: no model_config_list { config { ... } }");
  std::vector<ModelConfig> models;
  std::set<std::string> names;
  for (const auto& c : config.model_config_list().config()) {
    if (c.name().empty() || c.base_path().empty())
      throw std::invalid_argument("--model_config_file: every config needs a name and a base_path");
    if (!names.insert(c.name()).second)
      throw std::invalid_argument(fmt::format("--model_config_file: model '{}' is configured twice", c.name()));
    if (!c.model_platform().empty() && c.model_platform() != "tensorflow")
      throw std::invalid_argument(fmt::format("--model_config_file: model '{}': model_platform '{}' (kiln-serve "
                                              "serves Kiln saved models: \"tensorflow\" or none)",
                                              c.name(), c.model_platform()));
    ModelConfig m{c.name(), c.base_path(), read_policy(c), {}};
    for (const auto& [label, version] : c.version_labels()) m.version_labels.emplace(label, version);
    models.push_back(std::move(m));
  }
  return models;
}

std::vector<ModelConfig> read_model_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("--model_config_file: cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return read_model_config(text.str());
}

}  // namespace kiln::serve
