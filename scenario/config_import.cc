#include "scenario/config_import.h"

#include <filesystem>
#include <utility>

namespace clustersim::cli {

ConfigImport::ConfigImport(const sim::ConfigNode& root, std::string tool, std::string tool_name,
                           const std::string& config_path, const ImportOptions& options,
                           KeyStyle style)
    : root_(root),
      reader_(root, sink_),
      options_(options),
      tool_name_(std::move(tool_name)),
      style_(style) {
  scenario_.tool = std::move(tool);
  scenario_.config_path = config_path;
}

std::string ConfigImport::shown(std::string_view path) const {
  const std::size_t dot = path.find('.');
  if (style_ == KeyStyle::kDotted || dot == std::string_view::npos) return std::string(path);
  return "[" + std::string(path.substr(0, dot)) + "] " + std::string(path.substr(dot + 1));
}

std::string ConfigImport::path_of(std::initializer_list<const char*> paths) const {
  for (const char* p : paths) {
    if (reader_.has(p)) return p;
  }
  return *paths.begin();
}

sim::SourceLocation ConfigImport::where_of(const std::string& path) const {
  const sim::ConfigNode* node = root_.find(path);
  return node != nullptr ? node->where : sim::SourceLocation{scenario_.config_path, 0, 0};
}

void ConfigImport::put(std::string key, std::string value, const std::string& path,
                       std::string comment) {
  scenario_.set({std::move(key), std::move(value),
                 comment.empty() ? shown(path) : std::move(comment), where_of(path), path});
}

std::string ConfigImport::absent(const std::string& path, const std::string& value) const {
  return shown(path) +
         (reader_.has(path) ? "" : " (absent: " + tool_name_ + "'s default " + value + ")");
}

void ConfigImport::report(const std::string& path, std::string message) {
  reader_.report(path, root_.find(path), std::move(message));
}

bool ConfigImport::missing(const std::string& path) const {
  if (reader_.has(path)) return false;
  const sim::ConfigNode* node = root_.find(path);
  return node == nullptr || !node->text.starts_with("${");
}

int64_t ConfigImport::int_or(const std::string& path, int64_t fallback) {
  return reader_.take_int(path).value_or(fallback);
}

double ConfigImport::number_or(const std::string& path, double fallback) {
  return reader_.take_number(path).value_or(fallback);
}

bool ConfigImport::bool_or(const std::string& path, bool fallback) {
  return reader_.take_bool(path).value_or(fallback);
}

std::string ConfigImport::string_or(const std::string& path, std::string fallback) {
  return reader_.take_string(path).value_or(std::move(fallback));
}

std::string ConfigImport::text_or(const std::string& path, std::string fallback) {
  const sim::ConfigNode* node = reader_.take(path);
  if (node == nullptr) return fallback;
  if (!node->is_scalar()) {
    report(path, "expected a value, found " + sim::found_text(*node));
    return fallback;
  }
  return node->text;
}

ImportedScenario ConfigImport::finish(const JobGpus& gpus) {
  for (const auto& [path, node] : reader_.unread()) {
    scenario_.unmapped.push_back(shown(path) + (style_ == KeyStyle::kToml ? " = " : ": ") +
                                 sim::value_text(*node));
  }
  sink_.throw_if_any();
  const std::string stem = std::filesystem::path(scenario_.config_path).stem().string();
  add_target_keys(scenario_, options_, gpus, stem, sink_);
  sink_.throw_if_any();
  check_imported_scenario(
      scenario_, scenario_yaml(scenario_),
      (std::filesystem::path(options_.scenario_dir) / (scenario_.name + ".yaml")).string());
  return std::move(scenario_);
}

}  // namespace clustersim::cli
