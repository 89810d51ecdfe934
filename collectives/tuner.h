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

}  // namespace clustersim::collectives
