#include "collectives/group_collectives.h"

#include <algorithm>
#include <limits>

#include "collectives/max_min_fairness.h"
#include "sim/check.h"
#include "topology/routing.h"

namespace clustersim::collectives {

namespace {

// Consecutive runs of members on the same node, in ring order.
struct NodeRun {
  int64_t node;
  std::vector<int64_t> gpus;
};

std::vector<NodeRun> node_runs(const topology::Cluster& cluster, std::span<const int64_t> gpus) {
  std::vector<NodeRun> runs;
  for (const int64_t g : gpus) {
    const int64_t node = cluster.node_of_gpu(g);
    if (runs.empty() || runs.back().node != node) runs.push_back(NodeRun{node, {}});
    runs.back().gpus.push_back(g);
  }
  return runs;
}

// Link ids in the fairness solver for the cluster's directed edges, created
// on first use.
class LinkMap {
 public:
  LinkMap(const topology::Cluster& cluster, const HardwareProfile& profile, MaxMinFairness& solver)
      : cluster_(cluster), profile_(profile), solver_(solver), ids_(cluster.edge_count(), kNone) {}

  LinkId operator()(topology::EdgeId e) {
    uint32_t& id = ids_[e];
    if (id == kNone) {
      const bool nvlink = cluster_.link_kind(e) == topology::LinkKind::kNvLink;
      const double efficiency =
          nvlink ? profile_.nvlink_ring_efficiency : profile_.network_efficiency;
      id = static_cast<uint32_t>(solver_.add_link(cluster_.bandwidth_Bps(e) * efficiency));
    }
    return LinkId{id};
  }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  const topology::Cluster& cluster_;
  const HardwareProfile& profile_;
  MaxMinFairness& solver_;
  std::vector<uint32_t> ids_;
};

// The links a group loads, with bytes per byte of buffer (see the header).
std::vector<LinkLoad> footprint(const topology::Cluster& cluster, std::span<const int64_t> gpus,
                                CollectiveOp op, LinkMap& links) {
  const int n = static_cast<int>(gpus.size());
  const double factor = busbw_factor(op, n);
  const std::vector<NodeRun> runs = node_runs(cluster, gpus);
  std::vector<LinkLoad> loads;
  if (runs.size() == 1) {
    for (const int64_t g : gpus) {
      loads.push_back({links(cluster.nvlink_up(g)), factor});
      loads.push_back({links(topology::Cluster::reverse(cluster.nvlink_up(g))), factor});
    }
    return loads;
  }
  std::vector<topology::EdgeId> path;
  for (size_t r = 0; r < runs.size(); ++r) {
    const NodeRun& from = runs[r];
    const NodeRun& to = runs[(r + 1) % runs.size()];
    const double per_rail = factor / static_cast<double>(from.gpus.size());
    const double intra =
        factor * static_cast<double>(from.gpus.size() - 1) / static_cast<double>(from.gpus.size());
    for (size_t i = 0; i < from.gpus.size(); ++i) {
      const int64_t g = from.gpus[i];
      if (from.gpus.size() > 1) {
        loads.push_back({links(cluster.nvlink_up(g)), intra});
        loads.push_back({links(topology::Cluster::reverse(cluster.nvlink_up(g))), intra});
      }
      // Ring i leaves this node from its i-th member towards the i-th
      // member of the next node (the same rail when the groups are
      // rail-aligned, as NCCL arranges them).
      const int64_t peer = to.gpus[i % to.gpus.size()];
      topology::route(cluster, g, peer, path);
      for (const topology::EdgeId e : path) {
        if (cluster.link_kind(e) == topology::LinkKind::kNvLink) continue;  // counted above
        loads.push_back({links(e), per_rail});
      }
    }
  }
  return loads;
}

// A flow's max-min rate when it is alone: its tightest link, with the
// loads a flow puts twice on one link added up. Sorts `loads`.
double single_flow_rate(const MaxMinFairness& solver, std::vector<LinkLoad>& loads) {
  std::sort(loads.begin(), loads.end(),
            [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  double rate = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < loads.size();) {
    double coefficient = 0;
    size_t j = i;
    for (; j < loads.size() && loads[j].link == loads[i].link; ++j)
      coefficient += loads[j].coefficient;
    rate = std::min(rate, solver.link_capacity(loads[i].link) / coefficient);
    i = j;
  }
  return rate;
}

}  // namespace

int64_t uniform_ranks_per_node(const topology::Cluster& cluster, std::span<const int64_t> gpus) {
  std::vector<int64_t> nodes;
  nodes.reserve(gpus.size());
  for (const int64_t g : gpus) nodes.push_back(cluster.node_of_gpu(g));
  std::sort(nodes.begin(), nodes.end());
  int64_t per_node = 0;
  for (size_t i = 0; i < nodes.size();) {
    size_t j = i;
    while (j < nodes.size() && nodes[j] == nodes[i]) ++j;
    const auto count = static_cast<int64_t>(j - i);
    if (per_node != 0 && count != per_node) return 0;
    per_node = count;
    i = j;
  }
  return per_node;
}

GroupGeometry geometry_of(const topology::Cluster& cluster, std::span<const int64_t> gpus) {
  CLUSTERSIM_CHECK(!gpus.empty(), "a collective group needs at least one GPU");
  for (const int64_t g : gpus) {
    CLUSTERSIM_CHECK(g >= 0 && g < cluster.gpu_count(),
                     "GPU id " + std::to_string(g) + " outside the cluster");
  }
  const int64_t per_node = uniform_ranks_per_node(cluster, gpus);
  CLUSTERSIM_CHECK(per_node > 0, "group with an uneven number of members per node");
  const topology::NodeSpec& node = cluster.spec().node;
  GroupGeometry geometry;
  geometry.ranks = static_cast<int>(gpus.size());
  geometry.ranks_per_node = static_cast<int>(per_node);
  geometry.nodes = geometry.ranks / geometry.ranks_per_node;
  geometry.nvlink_Bps_per_gpu = node.nvlink_Bps;
  geometry.net_Bps_per_gpu = node.nic_Bps * static_cast<double>(node.nics_per_node) /
                             static_cast<double>(node.gpus_per_node);
  geometry.nvls_available = node.gpus_per_node > 1;
  return geometry;
}

std::vector<GroupPrediction> predict_concurrent(const HardwareProfile& profile,
                                                const topology::Cluster& cluster,
                                                std::span<const std::vector<int64_t>> groups,
                                                CollectiveOp op, int64_t bytes,
                                                const ForcedChoice& forced) {
  std::vector<GroupPrediction> out(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const GroupGeometry geometry = geometry_of(cluster, groups[i]);
    out[i].tuned = tune_collective(profile, geometry, op, bytes, forced);
    out[i].seconds = out[i].tuned.cost.seconds();
    // A one-member group with no launch overhead takes no time and moves
    // nothing: bus bandwidth 0, as nccl-tests reports for one rank.
    if (out[i].seconds > 0) {
      out[i].busbw_Bps = busbw_Bps(op, static_cast<int>(groups[i].size()), bytes, out[i].seconds);
    }
  }
  if (groups.size() < 2) return out;

  MaxMinFairness solver;
  LinkMap links(cluster, profile, solver);
  std::vector<FlowId> flows(groups.size());
  std::vector<double> alone_rate(groups.size());
  // The group's rate in the solver when it is the only flow. The footprint
  // is coarser than the tuner (it loads NVLink as a ring even for NVLS, and
  // a lone flow meets each oversubscribed uplink at full weight), so the
  // share is taken against this, not against the tuner's rate: only links
  // shared with other groups slow a group down.
  std::vector<double> solo_rate(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const CostBreakdown& cost = out[i].tuned.cost;
    if (groups[i].size() < 2 || cost.transfer_s <= 0) {
      alone_rate[i] = 0;  // nothing moves: no flow
      continue;
    }
    alone_rate[i] = static_cast<double>(bytes) / cost.transfer_s;
    std::vector<LinkLoad> loads = footprint(cluster, groups[i], op, links);
    flows[i] = solver.add_flow(loads, alone_rate[i]);
    solo_rate[i] = std::min(alone_rate[i], single_flow_rate(solver, loads));
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (alone_rate[i] == 0) continue;
    const double contended = solver.rate(flows[i]);
    const CostBreakdown& cost = out[i].tuned.cost;
    if (contended >= solo_rate[i]) continue;  // uncontended: the tuner's time exactly
    out[i].rate_share = contended / solo_rate[i];
    const double rate = alone_rate[i] * out[i].rate_share;
    out[i].seconds = cost.latency_s + static_cast<double>(bytes) / rate;
    out[i].busbw_Bps = busbw_Bps(op, static_cast<int>(groups[i].size()), bytes, out[i].seconds);
  }
  return out;
}

}  // namespace clustersim::collectives
