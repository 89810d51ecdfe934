// What `clustersim topo` reports about a cluster, computed from its
// structure in O(1) (no search over pairs): counts, bisection bandwidth and
// the longest route.
//
// Bisection bandwidth (bytes/s, one direction): the capacity that crosses a
// balanced cut of the fabric's NICs, taken at its narrowest tier and summed
// over all switch trees (rails x planes). For one tree it is
//   min( floor(E/2) x NIC-leaf link,            -- the NICs of one half
//        1/2 x total leaf uplink capacity,      -- 2 or 3 tiers
//        1/2 x total spine uplink capacity )    -- 3 tiers
// For a fully populated fat-tree this is the minimum balanced cut (half the
// top tier's capacity when non-blocking); for a partially populated one it
// assumes traffic spreads evenly over the uplinks. NVLink and PCIe are not
// part of it: it measures the scale-out network only. With rail_optimized
// fabrics, cross-rail traffic reaches the other rail over NVLink (PXN), so
// summing the rails' trees is the cluster's bisection.
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "topology/cluster.h"

namespace clustersim::topology {

struct ClusterSummary {
  int64_t gpus = 0;
  int64_t nodes = 0;
  std::array<int64_t, kVertexKinds> vertices{};  // by VertexKind
  std::array<int64_t, kLinkKinds> links{};       // physical links by LinkKind
  int64_t total_links = 0;                       // each is two directed edges
  int tiers = 0;                                 // switch tiers per tree
  int64_t trees = 0;
  double bisection_Bps = 0;
  int longest_route_hops = 0;
};

ClusterSummary summarize(const Cluster& cluster);
double bisection_bandwidth_Bps(const Cluster& cluster);

// The report `clustersim topo` prints: one "name: value" line each.
std::string format_summary(const Cluster& cluster, const ClusterSummary& summary);

}  // namespace clustersim::topology
