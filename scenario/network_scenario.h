// What the network commands (collective, validate) need from a scenario:
// its validated values, the cluster built from its `cluster` section, and
// the hardware profile its `hardware` key names.
// Errors: sim::ConfigError naming the scenario (or profile) file and line.
#pragma once

#include <span>
#include <string>

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

// For a hardware value or --base that names no file: when it is the bare
// name ("h100", "h100.yaml") of a profile this build ships, "; a shipped
// profile of that name is 'PATH'" to end the error with; "" otherwise.
std::string shipped_profile_hint(const std::string& value);

// The validated values alone (commands that need neither the cluster graph
// nor the profile, or build them only when they do).
sim::ConfigValues load_scenario_values(const std::string& path,
                                       std::span<const std::string> overrides);

}  // namespace clustersim::cli
