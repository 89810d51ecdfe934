#include "topology/routing.h"

#include <string>

#include "sim/check.h"

namespace clustersim::topology {

namespace {

// Salts: one per ECMP decision, so the choices are independent.
constexpr uint64_t kPlaneSalt = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kLeafSalt = 0xbf58476d1ce4e5b9ULL;
constexpr uint64_t kSpineSalt = 0x94d049bb133111ebULL;

constexpr uint64_t kLeafRehashSalt = 0xd6e8feb86659fd93ULL;
constexpr uint64_t kSpineRehashSalt = 0xa0761d6478bd642fULL;

int64_t pick(uint64_t hash, int64_t choices) {
  return static_cast<int64_t>(hash % static_cast<uint64_t>(choices));
}

// Resilient ECMP: a pair whose hashed choice is up keeps it; the pairs of a
// failed choice re-hash over the choices that are up, so only they move and
// they spread evenly. `up(i)` says whether choice i can be taken.
template <typename Up>
int64_t pick_up(const Cluster& c, int64_t first, int64_t choices, int64_t src, int64_t dst,
                uint64_t rehash_salt, Up up) {
  if (!c.has_down_links() || up(first)) return first;
  int64_t alive = 0;
  for (int64_t i = 0; i < choices; ++i) alive += up(i) ? 1 : 0;
  CLUSTERSIM_CHECK(alive > 0, "no route between GPUs " + std::to_string(src) + " and " +
                                  std::to_string(dst) + ": every uplink of the path is down");
  int64_t n = pick(ecmp_hash(src, dst, rehash_salt), alive);
  for (int64_t i = 0; i < choices; ++i) {
    if (up(i) && n-- == 0) return i;
  }
  return first;  // unreachable
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
    const int64_t pod_s = c.pod_of_leaf(leaf_s);
    const int64_t pod_d = c.pod_of_leaf(leaf_d);
    // With failed links: spine j must be reachable from both leaves and,
    // across pods, have an uplink up on both sides.
    const auto spine_up_both = [&](int64_t j, int64_t m) {
      return !c.is_down(c.spine_up(tree, pod_s * h + j, m)) &&
             !c.is_down(c.spine_up(tree, pod_d * h + j, m));
    };
    const auto leaf_ok = [&](int64_t j) {
      if (c.is_down(c.leaf_up(tree, leaf_s, j)) || c.is_down(c.leaf_up(tree, leaf_d, j))) {
        return false;
      }
      if (pod_s == pod_d) return true;
      for (int64_t m = 0; m < h; ++m) {
        if (spine_up_both(j, m)) return true;
      }
      return false;
    };
    const int64_t j = pick_up(c, pick(ecmp_hash(src, dst, kLeafSalt), h), h, src, dst,
                              kLeafRehashSalt, leaf_ok);
    out.push_back(c.leaf_up(tree, leaf_s, j));
    if (pod_s != pod_d) {
      const int64_t m =
          pick_up(c, pick(ecmp_hash(src, dst, kSpineSalt), h), h, src, dst, kSpineRehashSalt,
                  [&](int64_t mm) { return spine_up_both(j, mm); });
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
