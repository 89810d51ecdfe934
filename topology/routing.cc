#include "topology/routing.h"

#include <string>

#include "sim/check.h"

namespace clustersim::topology {

namespace {

// Salts: one per ECMP decision, so the choices are independent.
constexpr uint64_t kPlaneSalt = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kLeafSalt = 0xbf58476d1ce4e5b9ULL;
constexpr uint64_t kSpineSalt = 0x94d049bb133111ebULL;

int64_t pick(uint64_t hash, int64_t choices) {
  return static_cast<int64_t>(hash % static_cast<uint64_t>(choices));
}

}  // namespace

uint64_t ecmp_hash(int64_t src_gpu, int64_t dst_gpu, uint64_t salt) {
  uint64_t z = (static_cast<uint64_t>(src_gpu) << 32) ^ static_cast<uint64_t>(dst_gpu) ^ salt;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void route(const Cluster& c, int64_t src, int64_t dst, std::vector<EdgeId>& out) {
  out.clear();
  CLUSTERSIM_CHECK(src >= 0 && src < c.gpu_count() && dst >= 0 && dst < c.gpu_count(),
                   "route between GPUs " + std::to_string(src) + " and " + std::to_string(dst) +
                       " of " + std::to_string(c.gpu_count()));
  if (src == dst) return;
  const int64_t node = c.node_of_gpu(src);
  if (node == c.node_of_gpu(dst)) {
    out.push_back(c.nvlink_up(src));
    out.push_back(Cluster::reverse(c.nvlink_up(dst)));
    return;
  }
  int64_t sender = src;
  if (c.spec().fabric.type == FabricType::kRailOptimized &&
      c.rail_of_gpu(src) != c.rail_of_gpu(dst)) {
    sender = c.gpu_on_rail(node, c.rail_of_gpu(dst));
    if (sender != src) {
      out.push_back(c.nvlink_up(src));
      out.push_back(Cluster::reverse(c.nvlink_up(sender)));
    }
  }
  const int64_t nic_s = c.nic_of_gpu(sender);
  const int64_t nic_d = c.nic_of_gpu(dst);
  const FabricShape& s = c.shape();
  const int64_t planes = c.spec().fabric.planes;
  const int64_t plane = planes > 1 ? pick(ecmp_hash(src, dst, kPlaneSalt), planes) : 0;
  const int64_t tree = c.tree_of_nic(nic_s, plane);
  CLUSTERSIM_CHECK(tree == c.tree_of_nic(nic_d, plane), "route stays in one switch tree");

  out.push_back(c.gpu_nic_up(sender));
  out.push_back(c.nic_up(nic_s, plane));
  const int64_t leaf_s = c.leaf_of_endpoint(c.endpoint_of_nic(nic_s));
  const int64_t leaf_d = c.leaf_of_endpoint(c.endpoint_of_nic(nic_d));
  if (leaf_s != leaf_d) {
    const int64_t h = s.half_radix;
    const int64_t j = pick(ecmp_hash(src, dst, kLeafSalt), h);
    out.push_back(c.leaf_up(tree, leaf_s, j));
    const int64_t pod_s = c.pod_of_leaf(leaf_s);
    const int64_t pod_d = c.pod_of_leaf(leaf_d);
    if (pod_s != pod_d) {
      const int64_t m = pick(ecmp_hash(src, dst, kSpineSalt), h);
      out.push_back(c.spine_up(tree, pod_s * h + j, m));
      out.push_back(Cluster::reverse(c.spine_up(tree, pod_d * h + j, m)));
    }
    out.push_back(Cluster::reverse(c.leaf_up(tree, leaf_d, j)));
  }
  out.push_back(Cluster::reverse(c.nic_up(nic_d, plane)));
  out.push_back(Cluster::reverse(c.gpu_nic_up(dst)));
}

std::vector<EdgeId> route(const Cluster& cluster, int64_t src_gpu, int64_t dst_gpu) {
  std::vector<EdgeId> out;
  route(cluster, src_gpu, dst_gpu, out);
  return out;
}

int longest_route_hops(const Cluster& c) {
  const bool intra = c.gpus_per_node() > 1;
  if (c.node_count() < 2) return intra ? 2 : 0;
  // With 2+ nodes the first and last node's NICs sit in different leaves
  // (pods) whenever the tree has 2 (3) tiers: tiers are chosen minimally,
  // so one leaf (pod) cannot hold every endpoint.
  const int tiers = c.shape().tiers;
  const bool pxn =
      c.spec().fabric.type == FabricType::kRailOptimized && c.spec().node.nics_per_node > 1;
  return 2 + 2 * tiers + (pxn ? 2 : 0);
}

}  // namespace clustersim::topology
