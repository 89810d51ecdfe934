#include "scenario/network_scenario.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "collectives/tuner.h"
#include "config/file_text.h"
#include "config/scenario_loader.h"
#include "hardware/shipped_profiles.h"
#include "scenario/scenario_schema.h"
#include "scenario/stack_profile.h"
#include "topology/cluster_config.h"

namespace clustersim::cli {

std::string shipped_profile_path(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos) return "";
  const std::filesystem::path dir(collectives::shipped_profiles_dir());
  for (const std::string& file : {name, name + ".yaml"}) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(dir / file, ec)) return (dir / file).string();
  }
  return "";
}

std::vector<std::string> shipped_profile_names() { return collectives::shipped_profile_names(); }

std::string shipped_profile_hint(const std::string& value) {
  const std::string path = shipped_profile_path(value);
  return path.empty() ? "" : "; a shipped profile of that name is '" + path + "'";
}

namespace {

// The profile the scenario's `hardware` names; a problem is at that key.
collectives::HardwareProfile read_profile(const std::string& path,
                                          const sim::ConfigValues& values) {
  sim::DiagnosticSink sink;
  if (!values.has("hardware") || values.get_string("hardware").empty()) {
    sink.add(sim::SourceLocation{path, 1, 1}, "hardware",
             "missing; expected " + collectives::shipped_profiles_phrase() +
                 ": it holds the part's compute figures and the collective model's constants");
    sink.throw_if_any();
  }
  const std::string& value = values.get_string("hardware");
  const std::string profile_path = collectives::resolve_hardware_path(path, value);
  if (const sim::ReadOutcome file = sim::check_input_file(profile_path);
      file.failure != sim::ReadFailure::kNone) {
    const std::string found = collectives::is_bare_profile_name(value)
                                  ? "'" + value + "', which this build does not ship"
                                  : sim::found_phrase(file, profile_path);
    std::string hint = shipped_profile_hint(value);
    if (!hint.empty())
      hint += " (or name it bare: 'hardware: " + value.substr(0, value.rfind('.')) + "')";
    sink.add(values.where("hardware"), "hardware",
             "expected " + collectives::shipped_profiles_phrase() + ", found " + found + hint);
    sink.throw_if_any();
  }
  collectives::HardwareProfile profile = collectives::load_hardware_profile(
      profile_path, hardware_schema_for_scenario(stack_path_of(values, path)));
  collectives::apply_nvls_setting(values, profile, sink);
  sink.throw_if_any();
  return profile;
}

}  // namespace

void apply_profile_node(sim::ConfigValues& values, const std::string& scenario_path) {
  if (!values.has("hardware") || values.get_string("hardware").empty()) return;
  if (values.has("cluster.node") && !values.entry("cluster.node").is_default) return;
  try {
    const collectives::HardwareProfile profile = collectives::load_hardware_profile(
        collectives::resolve_hardware_path(scenario_path, values.get_string("hardware")),
        hardware_schema_for_scenario(stack_path_of(values, scenario_path)));
    if (!profile.node.empty()) {
      values.set("cluster.node", {profile.node, profile.node_where, /*is_default=*/false});
    }
  } catch (const sim::ConfigError&) {
    // The profile's own problems are reported where it is read for the
    // scenario (read_profile); the default node stays until then.
  }
}

sim::ConfigValues load_scenario_values(const std::string& path,
                                       std::span<const std::string> overrides) {
  sim::ConfigValues values = sim::load_scenario_file(path, build_scenario_schema(), overrides);
  apply_stack_profile(values, path);
  apply_profile_node(values, path);
  return values;
}

sim::ConfigValues load_scenario_values_keeping_going(const std::string& path,
                                                     std::span<const std::string> overrides,
                                                     ScenarioProblems& problems) {
  sim::DiagnosticSink key_problems;
  sim::ConfigValues values =
      sim::load_scenario_file_keeping_going(path, build_scenario_schema(), overrides, key_problems);
  apply_stack_profile(values, path, key_problems);
  apply_profile_node(values, path);
  problems.add_all(std::move(key_problems));
  return values;
}

void add_network_parts(const std::string& path, NetworkParts& parts, ScenarioProblems& problems) {
  const sim::ConfigValues& values = parts.values;
  if (const auto spec = problems.attempt([&] { return topology::read_cluster_spec(values); })) {
    parts.cluster = problems.attempt([&] { return topology::build_cluster(*spec); });
  }
  parts.profile = problems.attempt([&] { return read_profile(path, values); });
}

NetworkParts load_network_parts(const std::string& path, std::span<const std::string> overrides,
                                ScenarioProblems& problems) {
  NetworkParts parts{load_scenario_values_keeping_going(path, overrides, problems), std::nullopt,
                     std::nullopt};
  add_network_parts(path, parts, problems);
  return parts;
}

NetworkScenario load_network_scenario(const std::string& path,
                                      std::span<const std::string> overrides) {
  ScenarioProblems problems;
  NetworkParts parts = load_network_parts(path, overrides, problems);
  problems.throw_if_any();
  return NetworkScenario{std::move(parts.values), std::move(*parts.cluster),
                         std::move(*parts.profile)};
}

NetworkScenario network_scenario_from_values(sim::ConfigValues values, const std::string& path) {
  ScenarioProblems problems;
  NetworkParts parts{std::move(values), std::nullopt, std::nullopt};
  add_network_parts(path, parts, problems);
  problems.throw_if_any();
  return NetworkScenario{std::move(parts.values), std::move(*parts.cluster),
                         std::move(*parts.profile)};
}

}  // namespace clustersim::cli
