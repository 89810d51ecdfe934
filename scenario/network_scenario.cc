#include "scenario/network_scenario.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "scenario/scenario_schema.h"
#include "topology/cluster_config.h"

namespace clustersim::cli {

std::string shipped_profile_path(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return "";
  const std::filesystem::path dir(CLUSTERSIM_PROFILES_DIR);
  for (const std::string& file : {name, name + ".yaml"}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / file, ec)) return (dir / file).string();
  }
  return "";
}

std::vector<std::string> shipped_profile_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(CLUSTERSIM_PROFILES_DIR, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string shipped_profile_hint(const std::string& value) {
  const std::string path = shipped_profile_path(value);
  return path.empty() ? "" : "; a shipped profile of that name is '" + path + "'";
}

namespace {

std::string with_path_advice(const std::string& hint) {
  return hint.empty() ? hint
                      : hint + " (give its path, absolute or relative to the scenario's folder)";
}

}  // namespace

sim::ConfigValues load_scenario_values(const std::string& path,
                                       std::span<const std::string> overrides) {
  return sim::load_scenario_file(path, build_scenario_schema(), overrides);
}

NetworkScenario load_network_scenario(const std::string& path,
                                      std::span<const std::string> overrides) {
  return network_scenario_from_values(load_scenario_values(path, overrides), path);
}

NetworkScenario network_scenario_from_values(sim::ConfigValues values, const std::string& path) {
  const topology::ClusterSpec spec = topology::read_cluster_spec(values);
  if (!values.has("hardware") || values.get_string("hardware").empty()) {
    sim::DiagnosticSink sink;
    sink.add(sim::SourceLocation{path, 1, 1}, "hardware",
             "missing; expected the path of a hardware profile (e.g. "
             "'hardware/h100.yaml'), which holds the collective model's constants");
    sink.throw_if_any();
  }
  const std::string profile_path =
      collectives::resolve_hardware_path(path, values.get_string("hardware"));
  if (const sim::ReadOutcome file = sim::check_input_file(profile_path);
      file.failure != sim::ReadFailure::kNone) {
    sim::DiagnosticSink sink;
    sink.add(values.where("hardware"), "hardware",
             "expected a hardware profile file (resolved against the scenario's folder), found " +
                 sim::found_phrase(file, profile_path) +
                 with_path_advice(shipped_profile_hint(values.get_string("hardware"))));
    sink.throw_if_any();
  }
  collectives::HardwareProfile profile = collectives::load_hardware_profile(profile_path);
  topology::Cluster cluster = topology::build_cluster(spec);
  return NetworkScenario{std::move(values), std::move(cluster), std::move(profile)};
}

}  // namespace clustersim::cli
