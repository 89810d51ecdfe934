#include "collectives/group_collectives.h"

#include <algorithm>
#include <limits>

#include "collectives/collective_flows.h"
#include "sim/check.h"

namespace clustersim::collectives {

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

  // The flows' contended rates, all started before any is read. The
  // footprint is coarser than the tuner (it loads NVLink as a ring even for
  // NVLS, and a lone flow meets each oversubscribed uplink at full weight),
  // so only links shared with other groups slow a group down (see
  // CollectiveFlows::rate()).
  CollectiveFlows flows(cluster, profile);
  std::vector<FlowId> ids(groups.size());
  std::vector<bool> moving(groups.size(), false);
  for (size_t i = 0; i < groups.size(); ++i) {
    const CostBreakdown& cost = out[i].tuned.cost;
    if (groups[i].size() < 2 || cost.transfer_s <= 0) continue;  // nothing moves: no flow
    moving[i] = true;
    const Footprint footprint = flows.footprint(groups[i], op);
    ids[i] = flows.start(footprint, busbw_factor(op, static_cast<int>(groups[i].size())),
                         static_cast<double>(bytes) / cost.transfer_s);
  }
  for (size_t i = 0; i < groups.size(); ++i) {
    if (!moving[i]) continue;
    const CostBreakdown& cost = out[i].tuned.cost;
    const double alone = static_cast<double>(bytes) / cost.transfer_s;
    const double rate = flows.rate(ids[i]);
    if (rate >= alone) continue;  // uncontended: the tuner's time exactly
    out[i].rate_share = rate / alone;
    out[i].seconds = cost.latency_s + static_cast<double>(bytes) / rate;
    out[i].busbw_Bps = busbw_Bps(op, static_cast<int>(groups[i].size()), bytes, out[i].seconds);
  }
  return out;
}

}  // namespace clustersim::collectives
