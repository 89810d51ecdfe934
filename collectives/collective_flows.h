// CollectiveFlows: collectives that start and end at different times on one
// cluster, sharing its links by max-min fairness (the contention model of
// group_collectives.h, made incremental for the step simulator).
//
// A group's footprint is the set of links its collective loads, in bytes per
// byte of buffer for a busbw factor of 1 (NCCL-style rings per rail, see
// group_collectives.h); an op scales it by busbw_factor(op, ranks). Callers
// compute a group's footprint once and keep it (the footprint depends on the
// placement, not on the op or the size).
//
// A running transfer is a flow capped at its uncontended rate (bytes of
// buffer / the tuner's transfer time). Its progress rate is that rate times
// its share: its max-min rate over its max-min rate as the only flow on the
// same links, at most 1 -- so that, as in predict_concurrent(), only links
// shared with other collectives slow it down. start() and finish() re-solve
// only the flows coupled to the one that changed; last_changed() lists the
// flows whose progress rate may have changed.
//
// Units: bytes, bytes per second. Ownership: keeps references to the cluster
// and the profile, which must outlive it. Thread safety: one object per
// thread.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "collectives/hardware_profile.h"
#include "collectives/max_min_fairness.h"
#include "topology/cluster.h"

namespace clustersim::collectives {

struct Footprint {
  std::vector<LinkLoad> loads;  // sorted by link, one entry per link, busbw factor 1
  // The rate (bytes of buffer per second, factor 1) its tightest link allows
  // when it is the only flow; infinite with no loads.
  double solo_rate_Bps = std::numeric_limits<double>::infinity();
};

class CollectiveFlows {
 public:
  CollectiveFlows(const topology::Cluster& cluster, const HardwareProfile& profile);

  // Precondition as geometry_of(): non-empty, distinct GPUs, the same number
  // per node. One GPU: no loads.
  Footprint footprint(std::span<const int64_t> gpus);

  // Starts a transfer loading `footprint` scaled by `busbw_factor` (> 0),
  // capped at `alone_rate_Bps` (> 0, finite).
  FlowId start(const Footprint& footprint, double busbw_factor, double alone_rate_Bps);
  void finish(FlowId flow);

  // Bytes of buffer per second the flow progresses at now.
  double rate(FlowId flow) const;
  // Flows whose rate may have changed in the last start() / finish()
  // (including the flow just started), sorted by id.
  const std::vector<FlowId>& last_changed() const { return solver_.last_changed(); }
  std::size_t active_flows() const { return solver_.num_flows(); }

 private:
  LinkId link_of(topology::EdgeId edge);

  const topology::Cluster& cluster_;
  const HardwareProfile& profile_;
  MaxMinFairness solver_;
  std::vector<uint32_t> link_ids_;  // by cluster edge; kNoLink until first used
  struct FlowRates {
    double alone_Bps = 0;
    double solo_Bps = 0;  // min(alone, solo link rate)
  };
  std::vector<FlowRates> rates_;  // by flow id
  std::vector<LinkLoad> scratch_;
  std::vector<topology::EdgeId> path_;
};

}  // namespace clustersim::collectives
