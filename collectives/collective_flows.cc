#include "collectives/collective_flows.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/check.h"
#include "topology/routing.h"

namespace clustersim::collectives {

namespace {

constexpr uint32_t kNoLink = std::numeric_limits<uint32_t>::max();

// Consecutive runs of members on the same node, in ring order.
struct NodeRun {
  int64_t node;
  int64_t first;  // index into the group
  int64_t count;
};

std::vector<NodeRun> node_runs(const topology::Cluster& cluster, std::span<const int64_t> gpus) {
  std::vector<NodeRun> runs;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int64_t node = cluster.node_of_gpu(gpus[i]);
    if (runs.empty() || runs.back().node != node) {
      runs.push_back(NodeRun{node, static_cast<int64_t>(i), 0});
    }
    ++runs.back().count;
  }
  return runs;
}

}  // namespace

CollectiveFlows::CollectiveFlows(const topology::Cluster& cluster, const HardwareProfile& profile,
                                 Routing routing, const topology::Cluster* healthy)
    : cluster_(cluster),
      profile_(profile),
      routing_(routing),
      link_ids_(cluster.edge_count(), kNoLink) {
  if (routing_ == Routing::kAdaptive) build_resources();
  if (healthy != nullptr && cluster.has_down_links()) {
    CLUSTERSIM_CHECK(healthy->edge_count() == cluster.edge_count() && !healthy->has_down_links(),
                     "the healthy fabric is the same cluster without failed links");
    reference_ = std::make_unique<CollectiveFlows>(*healthy, profile, routing);
  }
}

void CollectiveFlows::build_resources() {
  const size_t kinds = topology::kLinkKinds;
  resource_index_.assign(cluster_.vertex_count() * kinds, kNoLink);
  // Even edge ids go up (from the lower end of the link), odd ones down.
  for (topology::EdgeId e = 0; e < cluster_.edge_count(); e += 2) {
    if (cluster_.is_down(e)) continue;  // a failed link adds no capacity (routes avoid it)
    const topology::LinkKind kind = cluster_.link_kind(e);
    uint32_t& index = resource_index_[cluster_.source(e) * kinds + static_cast<size_t>(kind)];
    if (index == kNoLink) {
      index = static_cast<uint32_t>(resource_up_Bps_.size());
      resource_up_Bps_.push_back(0);
      resource_down_Bps_.push_back(0);
      resource_nvlink_.push_back(kind == topology::LinkKind::kNvLink);
    }
    resource_up_Bps_[index] += cluster_.bandwidth_Bps(e);
    resource_down_Bps_[index] += cluster_.bandwidth_Bps(topology::Cluster::reverse(e));
  }
  // One GPU per NIC: its PCIe link and the NIC's uplinks are one resource.
  const int64_t gpus_per_nic =
      cluster_.gpus_per_node() / std::max<int64_t>(1, cluster_.spec().node.nics_per_node);
  if (gpus_per_nic == 1) {
    for (int64_t g = 0; g < cluster_.gpu_count(); ++g) {
      const size_t pcie =
          cluster_.gpu_vertex(g) * kinds + static_cast<size_t>(topology::LinkKind::kGpuNic);
      const size_t nic = cluster_.nic_vertex(cluster_.nic_of_gpu(g)) * kinds +
                         static_cast<size_t>(topology::LinkKind::kNicLeaf);
      const uint32_t from = resource_index_[pcie];
      const uint32_t to = resource_index_[nic];
      if (from == kNoLink || to == kNoLink) continue;
      resource_up_Bps_[to] = std::min(resource_up_Bps_[to], resource_up_Bps_[from]);
      resource_down_Bps_[to] = std::min(resource_down_Bps_[to], resource_down_Bps_[from]);
      resource_index_[pcie] = to;
    }
  }
  resource_link_.assign(resource_up_Bps_.size(), kNoLink);
}

LinkId CollectiveFlows::resource_of(topology::EdgeId edge) {
  const uint32_t index = resource_index_[cluster_.source(edge) * topology::kLinkKinds +
                                         static_cast<size_t>(cluster_.link_kind(edge))];
  uint32_t& id = resource_link_[index];
  if (id == kNoLink) {
    const double efficiency =
        resource_nvlink_[index] ? profile_.nvlink_ring_efficiency : profile_.network_efficiency;
    const double capacity = std::min(resource_up_Bps_[index], resource_down_Bps_[index]);
    id = static_cast<uint32_t>(solver_.add_link(capacity * efficiency));
  }
  return LinkId{id};
}

LinkId CollectiveFlows::link_of(topology::EdgeId edge) {
  uint32_t& id = link_ids_[edge];
  if (id == kNoLink) {
    const bool nvlink = cluster_.link_kind(edge) == topology::LinkKind::kNvLink;
    const double efficiency =
        nvlink ? profile_.nvlink_ring_efficiency : profile_.network_efficiency;
    id = static_cast<uint32_t>(solver_.add_link(cluster_.bandwidth_Bps(edge) * efficiency));
  }
  return LinkId{id};
}

Footprint CollectiveFlows::footprint(std::span<const int64_t> gpus, CollectiveOp op) {
  CLUSTERSIM_CHECK(!gpus.empty(), "a collective group needs at least one GPU");
  Footprint out = op == CollectiveOp::kAllToAll    ? pairwise_footprint(gpus)
                  : routing_ == Routing::kAdaptive ? adaptive_footprint(gpus)
                                                   : ecmp_footprint(gpus);
  out.reference_rate_Bps =
      reference_ ? reference_->footprint(gpus, op).solo_rate_Bps : out.solo_rate_Bps;
  return out;
}

Footprint CollectiveFlows::pairwise_footprint(std::span<const int64_t> gpus) {
  Footprint out;
  std::vector<LinkLoad>& loads = out.loads;
  const auto n = static_cast<double>(gpus.size());
  if (gpus.size() > 1) {
    const bool adaptive = routing_ == Routing::kAdaptive;
    const double per_peer = 1.0 / (n - 1);
    for (const int64_t g : gpus) {
      const int64_t node = cluster_.node_of_gpu(g);
      int64_t same_node = 0;
      for (const int64_t h : gpus) {
        if (h == g) continue;
        if (cluster_.node_of_gpu(h) == node) {
          ++same_node;
          continue;
        }
        topology::route(cluster_, g, h, path_);
        if (adaptive) {
          push_up_going(path_, per_peer, loads);
          continue;
        }
        for (const topology::EdgeId e : path_) {
          if (cluster_.link_kind(e) == topology::LinkKind::kNvLink) continue;
          loads.push_back({link_of(e), per_peer});
        }
      }
      if (same_node == 0) continue;
      const double nvlink = static_cast<double>(same_node) * per_peer;
      if (adaptive) {
        loads.push_back({resource_of(cluster_.nvlink_up(g)), nvlink});
      } else {
        loads.push_back({link_of(cluster_.nvlink_up(g)), nvlink});
        loads.push_back({link_of(topology::Cluster::reverse(cluster_.nvlink_up(g))), nvlink});
      }
    }
  }
  finish_footprint(out);
  return out;
}

Footprint CollectiveFlows::ecmp_footprint(std::span<const int64_t> gpus) {
  Footprint out;
  std::vector<LinkLoad>& loads = out.loads;
  if (gpus.size() > 1) {
    const std::vector<NodeRun> runs = node_runs(cluster_, gpus);
    if (runs.size() == 1) {
      for (const int64_t g : gpus) {
        loads.push_back({link_of(cluster_.nvlink_up(g)), 1.0});
        loads.push_back({link_of(topology::Cluster::reverse(cluster_.nvlink_up(g))), 1.0});
      }
    } else {
      for (size_t r = 0; r < runs.size(); ++r) {
        const NodeRun& from = runs[r];
        const NodeRun& to = runs[(r + 1) % runs.size()];
        const double per_node = static_cast<double>(from.count);
        const double per_rail = 1.0 / per_node;
        const double intra = (per_node - 1) / per_node;
        for (int64_t i = 0; i < from.count; ++i) {
          const int64_t g = gpus[static_cast<size_t>(from.first + i)];
          if (from.count > 1) {
            loads.push_back({link_of(cluster_.nvlink_up(g)), intra});
            loads.push_back({link_of(topology::Cluster::reverse(cluster_.nvlink_up(g))), intra});
          }
          // Ring i leaves this node from its i-th member towards the i-th
          // member of the next node (the same rail when the groups are
          // rail-aligned, as NCCL arranges them).
          const int64_t peer = gpus[static_cast<size_t>(to.first + i % to.count)];
          topology::route(cluster_, g, peer, path_);
          for (const topology::EdgeId e : path_) {
            if (cluster_.link_kind(e) == topology::LinkKind::kNvLink) continue;  // counted above
            loads.push_back({link_of(e), per_rail});
          }
        }
      }
    }
  }
  finish_footprint(out);
  return out;
}

void CollectiveFlows::finish_footprint(Footprint& out) const {
  std::vector<LinkLoad>& loads = out.loads;
  // One entry per link, loads a flow puts twice on a link added up.
  std::sort(loads.begin(), loads.end(),
            [](const LinkLoad& a, const LinkLoad& b) { return a.link < b.link; });
  size_t kept = 0;
  for (size_t i = 0; i < loads.size(); ++i) {
    if (kept > 0 && loads[kept - 1].link == loads[i].link) {
      loads[kept - 1].coefficient += loads[i].coefficient;
    } else {
      loads[kept++] = loads[i];
    }
  }
  loads.resize(kept);
  for (const LinkLoad& load : loads) {
    out.solo_rate_Bps =
        std::min(out.solo_rate_Bps, solver_.link_capacity(load.link) / load.coefficient);
  }
}

void CollectiveFlows::push_up_going(std::span<const topology::EdgeId> path, double coefficient,
                                    std::vector<LinkLoad>& loads) {
  auto previous = LinkId{kNoLink};
  for (const topology::EdgeId e : path) {
    // Up-going hops only: the down-going ones load the other side of
    // resources that members' own up-going hops already count.
    if ((e & 1U) != 0 || cluster_.link_kind(e) == topology::LinkKind::kNvLink) continue;
    // A GPU's PCIe link and its own NIC's uplink are one resource: once.
    const LinkId resource = resource_of(e);
    if (resource == previous) continue;
    loads.push_back({resource, coefficient});
    previous = resource;
  }
}

Footprint CollectiveFlows::adaptive_footprint(std::span<const int64_t> gpus) {
  Footprint out;
  std::vector<LinkLoad>& loads = out.loads;
  if (gpus.size() > 1) {
    const std::vector<NodeRun> runs = node_runs(cluster_, gpus);
    if (runs.size() == 1) {
      for (const int64_t g : gpus) loads.push_back({resource_of(cluster_.nvlink_up(g)), 1.0});
    } else {
      for (size_t r = 0; r < runs.size(); ++r) {
        const NodeRun& from = runs[r];
        const NodeRun& to = runs[(r + 1) % runs.size()];
        const double per_node = static_cast<double>(from.count);
        for (int64_t i = 0; i < from.count; ++i) {
          const int64_t g = gpus[static_cast<size_t>(from.first + i)];
          if (from.count > 1) {
            loads.push_back({resource_of(cluster_.nvlink_up(g)), (per_node - 1) / per_node});
          }
          const int64_t peer = gpus[static_cast<size_t>(to.first + i % to.count)];
          topology::route(cluster_, g, peer, path_);
          push_up_going(path_, 1.0 / per_node, loads);
        }
      }
    }
  }
  finish_footprint(out);
  return out;
}

FlowId CollectiveFlows::start(const Footprint& footprint, double busbw_factor,
                              double alone_rate_Bps) {
  CLUSTERSIM_CHECK(
      busbw_factor > 0 && alone_rate_Bps > 0 && std::isfinite(alone_rate_Bps),
      "busbw factor " + std::to_string(busbw_factor) + ", rate " + std::to_string(alone_rate_Bps));
  const FlowId flow = solver_.add_flow(footprint.loads, alone_rate_Bps, busbw_factor);
  const auto id = static_cast<size_t>(flow);
  if (rates_.size() <= id) rates_.resize(id + 1);
  rates_[id].alone_Bps = alone_rate_Bps;
  rates_[id].solo_Bps = solo_rate_Bps(footprint, busbw_factor, alone_rate_Bps);
  return flow;
}

void CollectiveFlows::finish(FlowId flow) { solver_.remove_flow(flow); }

double CollectiveFlows::rate(FlowId flow) const {
  const FlowRates& r = rates_[static_cast<size_t>(flow)];
  return moving_rate_Bps(solver_.rate(flow), r.solo_Bps, r.alone_Bps);
}

}  // namespace clustersim::collectives
