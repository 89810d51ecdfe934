// Whether a forced collective choice (a scenario's collectives.algorithm /
// collectives.protocol, NCCL_ALGO / NCCL_PROTO style) can run every
// collective of one step, checked before simulating so that the command can
// blame the scenario key instead of failing inside the simulation.
//
// The step's collectives are those of build_fsdp_schedule(config.workload)
// on the rank layout of step_simulator.h, each tuned on group 0 of its role
// exactly as simulate_step tunes it (validity does not depend on the bytes).
// Thread safety: pure function.
#pragma once

#include <optional>
#include <string>

#include "collectives/tuner.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::workloads {

// The tuner's reason, with the group it happened on, for the first
// collective of the step (schedule order) that `forced` cannot run; nothing
// when every one can. Precondition: config.workload as read_workload_spec
// returns it for this cluster.
std::optional<std::string> forced_choice_problem(const topology::Cluster& cluster,
                                                 const collectives::HardwareProfile& profile,
                                                 const StepConfig& config,
                                                 const collectives::ForcedChoice& forced);

}  // namespace clustersim::workloads
