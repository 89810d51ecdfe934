// The step simulation's inputs from a loaded scenario, shared by `run` and
// `campaign`: the workload, stragglers, the profile's compute and host
// figures, GPU memory, collective forcing and routing.
// Errors: sim::ConfigError naming the scenario's key and line; among them a
// forced collectives.algorithm / collectives.protocol that some collective
// of the step cannot run (nvls across nodes, tree for all_gather, ...), at
// the key to blame, so that no command meets it first inside the simulation.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "scenario/network_scenario.h"
#include "scenario/scenario_problems.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

// The workload read for the scenario's whole cluster; the config without
// trace ranks.
workloads::StepConfig step_config_from_scenario(const NetworkScenario& net);
// The same from the parts (a cluster and profile shared by several points
// of a sweep).
workloads::StepConfig step_config_from_scenario(const sim::ConfigValues& values,
                                                const topology::Cluster& cluster,
                                                const collectives::HardwareProfile& profile);

// The same with its problems added to `problems` (scenario_problems.h):
// nothing when any check failed.
std::optional<workloads::StepConfig> step_config_parts(const sim::ConfigValues& values,
                                                       const topology::Cluster& cluster,
                                                       const collectives::HardwareProfile& profile,
                                                       ScenarioProblems& problems);

// A scenario for a training step (run, export-chakra, kernels): its keys,
// cluster, hardware profile and workload, checked in one pass: a ConfigError
// holds every problem of every stage.
struct StepScenario {
  NetworkScenario net;
  workloads::StepConfig config;
};
StepScenario load_step_scenario(const std::string& path, std::span<const std::string> overrides);

}  // namespace clustersim::cli
