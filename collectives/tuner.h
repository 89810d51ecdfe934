// Tuner: picks (algorithm, protocol, channels) with the least predicted time
// among those valid for the group, as NCCL's tuner does, optionally
// restricted by a scenario (NCCL_ALGO / NCCL_PROTO style forcing).
//
// Ties go to the first candidate in the order ring, tree, nvls; LL, LL128,
// Simple; fewer channels (NCCL also runs fewer channels for small messages).
// NCCL's tuner does not choose tree inside one node; a forced tree there runs
// as a chain.
// Errors: a forced choice that cannot run on the group (nvls on A100 or
// across nodes, tree for all_gather, channels out of range) throws
// std::invalid_argument with the reason; the caller, who knows the scenario
// line, turns it into a ConfigError.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>

#include "collectives/collective_cost.h"
#include "collectives/collective_flows.h"
#include "config/config_error.h"
#include "config/config_schema.h"
#include "config/config_values.h"

namespace clustersim::collectives {

struct ForcedChoice {
  std::optional<Algorithm> algorithm;
  std::optional<Protocol> protocol;
  std::optional<int> channels;
};

struct TunedCollective {
  CollectiveChoice choice;
  CostBreakdown cost;
};

TunedCollective tune_collective(const HardwareProfile& profile, const GroupGeometry& geometry,
                                CollectiveOp op, int64_t bytes, const ForcedChoice& forced = {});

// The scenario's `collectives` section: `collectives.algorithm` (auto,
// ring, tree, nvls) and `collectives.protocol` (auto, LL, LL128, Simple),
// NCCL_ALGO / NCCL_PROTO style (command-line flags override them), and
// `collectives.routing` (adaptive, ecmp; see collective_flows.h), and
// `collectives.nvls` (NCCL_NVLS_ENABLE).
void add_collective_keys(sim::ConfigSchema& schema);
ForcedChoice read_forced_choice(const sim::ConfigValues& values);
// `collectives.nvls` false (NCCL_NVLS_ENABLE=0): the profile's NVLS is taken
// away, as if the part had none; forcing algorithm nvls then is a problem at
// that key, added to `sink`.
void apply_nvls_setting(const sim::ConfigValues& values, HardwareProfile& profile,
                        sim::DiagnosticSink& sink);
// `collectives.routing` (adaptive by default), for the step simulation.
Routing read_routing(const sim::ConfigValues& values);

}  // namespace clustersim::collectives
