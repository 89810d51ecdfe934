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
// shared with other collectives slow it down. On a fabric with failed links
// the denominator is its rate alone on the healthy fabric, so that losing
// links slows it as sharing them would. start() and finish() re-solve
// only the flows coupled to the one that changed; last_changed() lists the
// flows whose progress rate may have changed.
//
// Units: bytes, bytes per second. Ownership: keeps references to the cluster
// and the profile, which must outlive it. Thread safety: one object per
// thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "collectives/collective_cost.h"
#include "collectives/max_min_fairness.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"

namespace clustersim::collectives {

struct Footprint {
  std::vector<LinkLoad> loads;  // sorted by link, one entry per link, busbw factor 1
  // The rate (bytes of buffer per second, factor 1) its tightest link allows
  // when it is the only flow; infinite with no loads.
  double solo_rate_Bps = std::numeric_limits<double>::infinity();
  // The same on the healthy fabric the tuner's rates assume (see
  // CollectiveFlows' `healthy`); solo_rate_Bps when the fabric has no failed
  // links.
  double reference_rate_Bps = std::numeric_limits<double>::infinity();
};

// How traffic between switches is spread over parallel links:
//  * kEcmp: each ring hop takes its one hashed path (topology::route), so
//    hops that hash onto the same uplink collide, as with static ECMP;
//  * kAdaptive: a switch's parallel uplinks (and the downlinks into it) of
//    one tier act as one bundle of their summed capacity, as with adaptive
//    routing or packet spraying (InfiniBand AR, Spectrum-X): collisions
//    vanish and only real oversubscription binds. A NIC's ports on several
//    planes likewise form one bundle.
// kAdaptive also folds each link's two directions into one resource of the
// smaller capacity: every flow is a ring whose members send and receive
// alike, so each direction of a member's link (and each side of a switch's
// bundle) carries the same load -- the up-going side is counted, with the
// same coefficient, and the footprint is about a third as long (what keeps
// 100k-GPU steps fast). Where one NIC serves one GPU, the GPU's PCIe link to
// it and the NIC's uplinks carry the same flows and are one resource too.
enum class Routing { kEcmp, kAdaptive };

class CollectiveFlows {
 public:
  // `healthy`: when `cluster` has failed links (Cluster::take_down), the same
  // cluster without them. A flow's uncontended rate is the tuner's, which
  // knows nothing of failed links; relative to the flow's rate on the healthy
  // fabric, the links it is left with can only slow it (rate() below). Null:
  // the fabric is what the tuner assumed. Must outlive this object.
  CollectiveFlows(const topology::Cluster& cluster, const HardwareProfile& profile,
                  Routing routing = Routing::kEcmp, const topology::Cluster* healthy = nullptr);

  // Precondition as geometry_of(): non-empty, distinct GPUs, the same number
  // per node. One GPU: no loads. Every op but all_to_all loads the rings
  // above (the footprint is the same for all of them). An all-to-all's
  // (collective_cost.h), per byte of buffer for a busbw factor of 1, i.e.
  // over the (n - 1) / n bytes each member sends: each member's NVLink
  // (r - 1) / (n - 1), and each ordered pair of members on different nodes
  // 1 / (n - 1) on its routed path (one path per pair under kEcmp; under
  // kAdaptive the up-going hops of the pair's bundles, as the rings count
  // them). Its loads grow as n^2 routes: for groups of experts, not whole
  // clusters.
  Footprint footprint(std::span<const int64_t> gpus, CollectiveOp op = CollectiveOp::kAllReduce);

  // Starts a transfer loading `footprint` scaled by `busbw_factor` (> 0),
  // capped at `alone_rate_Bps` (> 0, finite).
  FlowId start(const Footprint& footprint, double busbw_factor, double alone_rate_Bps);
  void finish(FlowId flow);

  // See MaxMinFairness::begin_batch(): starts and finishes inside a batch
  // are solved together at end_batch(); rate() of a flow started in the
  // batch is unknown (NaN) until then.
  void begin_batch() { solver_.begin_batch(); }
  void end_batch() { solver_.end_batch(); }
  bool batch_open() const { return solver_.batch_open(); }
  bool batch_trivial() const { return solver_.batch_trivial(); }
  std::size_t last_solved_flows() const { return solver_.last_solved_flows(); }
  const MaxMinFairness::SolveCounts& solve_counts() const { return solver_.solve_counts(); }

  // Bytes of buffer per second the flow progresses at now.
  double rate(FlowId flow) const;
  // What rate() makes of a flow's max-min share (`contended_Bps`, B/s of
  // progress): at or above its solo rate -- min(alone, the footprint's
  // reference rate over the busbw factor) -- the tuner's rate exactly;
  // below, the tuner's rate scaled by the share. For callers that solve a
  // flow's share themselves (exec/flow_transfers.h, by link class).
  static double solo_rate_Bps(const Footprint& footprint, double busbw_factor,
                              double alone_rate_Bps) {
    return std::min(alone_rate_Bps, footprint.reference_rate_Bps / busbw_factor);
  }
  static double moving_rate_Bps(double contended_Bps, double solo_Bps, double alone_rate_Bps) {
    if (contended_Bps >= solo_Bps) return alone_rate_Bps;  // uncontended: the tuner's rate exactly
    return alone_rate_Bps * (contended_Bps / solo_Bps);
  }
  // A link's capacity (bytes/s), for callers that compare footprints.
  double link_capacity(LinkId link) const { return solver_.link_capacity(link); }
  // Flows whose rate may have changed in the last start() / finish()
  // (including the flow just started), sorted by id.
  const std::vector<FlowId>& last_changed() const { return solver_.last_changed(); }
  std::size_t active_flows() const { return solver_.num_flows(); }

 private:
  LinkId link_of(topology::EdgeId edge);
  // kAdaptive: the resource the up-going edge belongs to.
  LinkId resource_of(topology::EdgeId edge);
  void build_resources();
  Footprint adaptive_footprint(std::span<const int64_t> gpus);
  Footprint ecmp_footprint(std::span<const int64_t> gpus);
  Footprint pairwise_footprint(std::span<const int64_t> gpus);
  // kAdaptive: the resources of a route's up-going hops, each once.
  void push_up_going(std::span<const topology::EdgeId> path, double coefficient,
                     std::vector<LinkLoad>& loads);
  // Sorts the loads, merges those on one link, sets solo_rate_Bps.
  void finish_footprint(Footprint& out) const;

  const topology::Cluster& cluster_;
  const HardwareProfile& profile_;
  MaxMinFairness solver_;
  Routing routing_;
  std::vector<uint32_t> link_ids_;  // by cluster edge; kNoLink until first used
  // kAdaptive: resources by (lower vertex of the link, link kind), indices
  // into the vectors below; the solver link is made on first use.
  std::vector<uint32_t> resource_index_;  // vertex * kLinkKinds + kind
  std::vector<double> resource_up_Bps_, resource_down_Bps_;
  std::vector<bool> resource_nvlink_;
  std::vector<uint32_t> resource_link_;
  struct FlowRates {
    double alone_Bps = 0;
    double solo_Bps = 0;  // min(alone, solo link rate on the healthy fabric)
  };
  // Footprints on the healthy fabric, for reference_rate_Bps (null: none).
  std::unique_ptr<CollectiveFlows> reference_;
  std::vector<FlowRates> rates_;  // by flow id
  std::vector<topology::EdgeId> path_;
};

}  // namespace clustersim::collectives
