// What the network commands (collective, validate) need from a scenario:
// its validated values, the cluster built from its `cluster` section, and
// the hardware profile its `hardware` key names.
// Errors: sim::ConfigError naming the scenario (or profile) file and line,
// with every problem of the keys, the cluster and the profile at once
// (scenario/scenario_problems.h).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/config_values.h"
#include "hardware/hardware_profile.h"
#include "scenario/scenario_problems.h"
#include "topology/cluster.h"

namespace clustersim::cli {

struct NetworkScenario {
  sim::ConfigValues values;
  topology::Cluster cluster;
  collectives::HardwareProfile profile;
};

NetworkScenario load_network_scenario(const std::string& path,
                                      std::span<const std::string> overrides);
// The same from values already loaded from the scenario at `path` (which
// locates a relative hardware profile).
NetworkScenario network_scenario_from_values(sim::ConfigValues values, const std::string& path);

// The stages of load_network_scenario with their problems added to
// `problems` rather than thrown: what each could build (nothing where a
// stage failed). For loaders that check more of the file in the same pass.
struct NetworkParts {
  sim::ConfigValues values;
  std::optional<topology::Cluster> cluster;
  std::optional<collectives::HardwareProfile> profile;
};
NetworkParts load_network_parts(const std::string& path, std::span<const std::string> overrides,
                                ScenarioProblems& problems);
// The stages one at a time: the keys (their values, with the default of a
// key reported invalid), then the cluster and profile of `parts.values`.
sim::ConfigValues load_scenario_values_keeping_going(const std::string& path,
                                                     std::span<const std::string> overrides,
                                                     ScenarioProblems& problems);
void add_network_parts(const std::string& path, NetworkParts& parts, ScenarioProblems& problems);

// For a hardware value or --base that names no file: when it is the bare
// file name ("h100.yaml") of a profile this build ships, "; a shipped
// profile of that name is 'PATH'" to end the error with; "" otherwise.
std::string shipped_profile_hint(const std::string& value);
// The path of the profile this build ships under the bare name `name`
// ("h100" or "h100.yaml"), or "" when there is none.
std::string shipped_profile_path(const std::string& name);
// The bare names of the profiles this build ships, sorted ("a100", "h100", ...).
std::vector<std::string> shipped_profile_names();

// The hardware profile's node preset (its `node` key) as the scenario's
// cluster.node when the scenario leaves cluster.node out, so that a sweep of
// the hardware key moves the job onto each part's own node. Nothing when the
// profile names none or cannot be read (its problems are reported where it
// is read for the scenario).
void apply_profile_node(sim::ConfigValues& values, const std::string& scenario_path);

// The validated values alone (commands that need neither the cluster graph
// nor the profile, or build them only when they do), the stack's values and
// the profile's node applied.
sim::ConfigValues load_scenario_values(const std::string& path,
                                       std::span<const std::string> overrides);

}  // namespace clustersim::cli
