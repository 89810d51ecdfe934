// The scenario's slow ranks (section `stragglers`): which ranks compute
// slower than the others, and by how much, for the step simulator
// (StepConfig::stragglers).
//
// Keys: `stragglers.ranks`, a rank list as config/rank_list.h reads it
// ("3,17,100-103"; default "", none), and `stragglers.slowdown`, the factor
// (>= 1, default 1.2) by which each listed rank's compute takes longer.
// The schema checks the list's syntax and the factor; read_stragglers()
// checks the ranks against the job's world size. Errors are sim::ConfigError
// naming the key's file:line:col.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::workloads {

void add_straggler_keys(sim::ConfigSchema& schema);

// One Straggler per listed rank, ascending. Throws sim::ConfigError (at
// stragglers.ranks) when a rank is >= world_size.
std::vector<Straggler> read_stragglers(const sim::ConfigValues& values, int64_t world_size);

}  // namespace clustersim::workloads
