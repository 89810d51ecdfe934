#include "topology/fabric_faults.h"

#include <algorithm>
#include <string>

#include "sim/check.h"

namespace clustersim::topology {

namespace {

void check_tree(const Cluster& c, int64_t tree, int tiers, const char* what) {
  CLUSTERSIM_CHECK(c.shape().tiers >= tiers, std::string(what) + " needs a fabric of " +
                                                 std::to_string(tiers) + " tiers, found " +
                                                 std::to_string(c.shape().tiers));
  CLUSTERSIM_CHECK(tree >= 0 && tree < c.shape().trees, std::string(what) + ": tree " +
                                                            std::to_string(tree) + " of " +
                                                            std::to_string(c.shape().trees));
}

void check_index(int64_t i, int64_t count, const char* what) {
  CLUSTERSIM_CHECK(i >= 0 && i < count,
                   std::string(what) + " " + std::to_string(i) + " of " + std::to_string(count));
}

}  // namespace

void fail_spine(Cluster& c, int64_t tree, int64_t spine) {
  check_tree(c, tree, 2, "fail_spine");
  const FabricShape& s = c.shape();
  check_index(spine, s.spines, "spine");
  const int64_t h = s.half_radix;
  const int64_t pod = spine / h;
  const int64_t j = spine % h;
  // Two tiers: one pod of every leaf.
  const int64_t first_leaf = s.tiers == 3 ? pod * h : 0;
  const int64_t last_leaf = s.tiers == 3 ? std::min(s.leaves, (pod + 1) * h) : s.leaves;
  for (int64_t leaf = first_leaf; leaf < last_leaf; ++leaf) {
    c.take_down(c.leaf_up(tree, leaf, j));
  }
  if (s.tiers == 3) {
    for (int64_t m = 0; m < h; ++m) c.take_down(c.spine_up(tree, spine, m));
  }
}

void fail_core(Cluster& c, int64_t tree, int64_t core) {
  check_tree(c, tree, 3, "fail_core");
  const FabricShape& s = c.shape();
  check_index(core, s.cores, "core");
  const int64_t h = s.half_radix;
  for (int64_t pod = 0; pod < s.pods; ++pod) {
    c.take_down(c.spine_up(tree, pod * h + core / h, core % h));
  }
}

void fail_leaf_uplink(Cluster& c, int64_t tree, int64_t leaf, int64_t j) {
  check_tree(c, tree, 2, "fail_leaf_uplink");
  check_index(leaf, c.shape().leaves, "leaf");
  check_index(j, c.shape().half_radix, "leaf uplink");
  c.take_down(c.leaf_up(tree, leaf, j));
}

}  // namespace clustersim::topology
