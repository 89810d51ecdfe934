// What the network commands (collective, validate) need from a scenario:
// its validated values, the cluster built from its `cluster` section, and
// the hardware profile its `hardware` key names.
// Errors: sim::ConfigError naming the scenario (or profile) file and line.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "config/config_values.h"
#include "hardware/hardware_profile.h"
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

// For a hardware value or --base that names no file: when it is the bare
// name ("h100", "h100.yaml") of a profile this build ships, "; a shipped
// profile of that name is 'PATH'" to end the error with; "" otherwise.
std::string shipped_profile_hint(const std::string& value);
// The path of the profile this build ships under the bare name `name`
// ("h100" or "h100.yaml"), or "" when there is none.
std::string shipped_profile_path(const std::string& name);
// The bare names of the profiles this build ships, sorted ("a100", "h100", ...).
std::vector<std::string> shipped_profile_names();

// The validated values alone (commands that need neither the cluster graph
// nor the profile, or build them only when they do).
sim::ConfigValues load_scenario_values(const std::string& path,
                                       std::span<const std::string> overrides);

}  // namespace clustersim::cli
