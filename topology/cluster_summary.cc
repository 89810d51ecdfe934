#include "topology/cluster_summary.h"

#include <algorithm>
#include <sstream>

#include "config/units.h"
#include "topology/routing.h"

namespace clustersim::topology {

double bisection_bandwidth_Bps(const Cluster& c) {
  const FabricShape& s = c.shape();
  const double half_endpoints = static_cast<double>(s.endpoints / 2);
  double per_tree = half_endpoints * s.plane_Bps;
  if (s.tiers >= 2) {
    const double leaf_up = static_cast<double>(s.leaves * s.half_radix) * s.leaf_up_Bps;
    per_tree = std::min(per_tree, leaf_up / 2);
  }
  if (s.tiers == 3) {
    const double spine_up = static_cast<double>(s.spines * s.half_radix) * s.spine_up_Bps;
    per_tree = std::min(per_tree, spine_up / 2);
  }
  return per_tree * static_cast<double>(s.trees);
}

ClusterSummary summarize(const Cluster& c) {
  ClusterSummary out;
  out.gpus = c.gpu_count();
  out.nodes = c.node_count();
  for (int k = 0; k < kVertexKinds; ++k) {
    out.vertices[static_cast<size_t>(k)] = c.count(static_cast<VertexKind>(k));
  }
  for (int k = 0; k < kLinkKinds; ++k) {
    out.links[static_cast<size_t>(k)] = c.link_count(static_cast<LinkKind>(k));
  }
  out.total_links = static_cast<int64_t>(c.link_count());
  out.tiers = c.shape().tiers;
  out.trees = c.shape().trees;
  out.bisection_Bps = bisection_bandwidth_Bps(c);
  out.longest_route_hops = longest_route_hops(c);
  return out;
}

std::string format_summary(const Cluster& c, const ClusterSummary& s) {
  const ClusterSpec& spec = c.spec();
  auto v = [&s](VertexKind k) { return s.vertices[static_cast<size_t>(k)]; };
  std::ostringstream os;
  os << "node: " << spec.node.preset << " (" << spec.node.gpus_per_node << " GPUs, "
     << spec.node.nics_per_node << " NICs of " << sim::format_bandwidth(spec.node.nic_Bps)
     << ", NVLink " << sim::format_bandwidth(spec.node.nvlink_Bps) << " per GPU per direction)\n";
  os << "fabric: " << fabric_type_name(spec.fabric.type) << ", radix " << spec.fabric.switch_radix
     << ", " << spec.fabric.planes << (spec.fabric.planes == 1 ? " plane" : " planes") << ", "
     << s.trees << (s.trees == 1 ? " switch tree" : " switch trees") << " of " << s.tiers
     << (s.tiers == 1 ? " tier" : " tiers") << "\n";
  os << "gpus: " << s.gpus << "\n";
  os << "nodes: " << s.nodes << "\n";
  os << "nics: " << v(VertexKind::kNic) << "\n";
  os << "nvswitch domains: " << v(VertexKind::kNvSwitch) << "\n";
  os << "hosts: " << v(VertexKind::kHost) << "\n";
  os << "switches: leaf " << v(VertexKind::kLeaf) << ", spine " << v(VertexKind::kSpine)
     << ", core " << v(VertexKind::kCore) << "\n";
  os << "links: " << s.total_links << " (";
  for (int k = 0; k < kLinkKinds; ++k) {
    if (k > 0) os << ", ";
    os << link_kind_name(static_cast<LinkKind>(k)) << " " << s.links[static_cast<size_t>(k)];
  }
  os << "), each full duplex\n";
  os << "bisection bandwidth: " << sim::format_bandwidth(s.bisection_Bps)
     << " per direction (narrowest tier of a balanced cut of the NICs, all trees)\n";
  os << "longest route: " << s.longest_route_hops << " hops\n";
  return os.str();
}

}  // namespace clustersim::topology
