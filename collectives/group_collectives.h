// Collectives of process groups placed on a real cluster, alone or several
// at once.
//
// A group is a list of GPU ids (its ring order). geometry_of() reduces it to
// what the cost model needs (ranks, nodes, ranks per node, per-GPU NVLink
// and network bandwidth). predict_concurrent() runs the tuner for each group
// and then shares the links among the groups that are active together by
// max-min fairness (MaxMinFairness), NCCL-style:
//  * every member GPU moves busbw_factor(op, n) bytes over its NVLink per
//    byte of buffer (the nccl-tests "bus" traffic); in a multi-node group the
//    share that leaves the node, 1/ranks_per_node of it per rail, goes over
//    the NIC instead;
//  * between consecutive nodes of the ring, one ring per rail carries
//    factor / ranks_per_node per byte of buffer from the member on rail r of
//    one node to the member on rail r of the next, over the routed path
//    (NIC, leaf, spine, core as the topology gives it);
//  * an all-to-all loads each member's NVLink with its peers in the node and
//    every pair across nodes on its own routed path
//    (CollectiveFlows::footprint);
//  * link capacities are scaled by the profile's efficiencies (what NCCL
//    reaches on that link), and each group is also capped at its own
//    uncontended bandwidth, so a group alone is never slowed down;
//  * a group's rate share is its max-min rate among all the groups over its
//    rate as the only flow on the same links, so that only links shared with
//    another group slow it (disjoint groups keep share 1, even where the
//    footprint alone would bind, as NVLS on NVLink or a lone flow on an
//    oversubscribed uplink). Its contended rate is the tuner's rate x share.
// A group's time is its latency plus buffer / contended rate.
// Units: bytes, seconds, bytes per second. Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/collective_cost.h"
#include "collectives/tuner.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"

namespace clustersim::collectives {

// Members per node when every node of the group holds the same number of
// them (the only shape NCCL-style rings per rail describe); 0 otherwise.
int64_t uniform_ranks_per_node(const topology::Cluster& cluster, std::span<const int64_t> gpus);

// Precondition: `gpus` is non-empty, every id < cluster.gpu_count(), no
// duplicates, and uniform_ranks_per_node() > 0 (callers validate user input
// first).
GroupGeometry geometry_of(const topology::Cluster& cluster, std::span<const int64_t> gpus);

struct GroupPrediction {
  TunedCollective tuned;  // the tuner's choice and uncontended cost
  double seconds = 0;     // with contention
  double busbw_Bps = 0;   // from `seconds`, nccl-tests convention
  // Fraction of the uncontended transfer rate the group got (1 = no
  // contention).
  double rate_share = 1;
};

// Every group runs `op` on a `bytes` buffer at the same time.
std::vector<GroupPrediction> predict_concurrent(const HardwareProfile& profile,
                                                const topology::Cluster& cluster,
                                                std::span<const std::vector<int64_t>> groups,
                                                CollectiveOp op, int64_t bytes,
                                                const ForcedChoice& forced = {});

}  // namespace clustersim::collectives
