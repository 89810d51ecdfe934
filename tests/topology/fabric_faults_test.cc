#include "topology/fabric_faults.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sim/check.h"
#include "tests/topology/topology_test_util.h"
#include "topology/routing.h"

namespace clustersim::topology {
namespace {

using testing::cluster_from_yaml;
using testing::small_fat_tree;

// 100 nodes per rail at radix 16: 13 leaves and 8 spines per rail tree.
constexpr const char* kHundredNodes =
    "name: t\ncluster:\n  nodes: 100\n  fabric:\n    switch_radix: 16\n";

bool avoids_down_links(const Cluster& c, const std::vector<EdgeId>& r) {
  for (const EdgeId e : r) {
    if (c.is_down(e)) return false;
  }
  return true;
}

// A failed spine takes uplink j of every leaf of its pod; routes from
// GPU 0 (rail 0) to every other node's rail-0 GPU avoid it, the pairs that
// did not use it keep their paths, and those that did spread over the 7 left.
TEST(FabricFaults, RoutesAvoidAFailedSpineAndOnlyItsPairsMove) {
  const Cluster healthy = cluster_from_yaml(kHundredNodes);
  Cluster degraded = cluster_from_yaml(kHundredNodes);
  ASSERT_EQ(degraded.shape().tiers, 2);
  const int64_t spine = 3;
  fail_spine(degraded, 0, spine);
  EXPECT_EQ(degraded.down_link_count(), degraded.shape().leaves);  // 13 leaf uplinks
  EXPECT_TRUE(degraded.is_down(degraded.leaf_up(0, 5, spine)));
  EXPECT_TRUE(degraded.is_down(Cluster::reverse(degraded.leaf_up(0, 5, spine))));
  EXPECT_FALSE(degraded.is_down(degraded.leaf_up(1, 5, spine)));  // another rail's tree
  int moved = 0;
  std::map<VertexId, int> moved_to;
  for (int64_t node = 8; node < 100; ++node) {
    const int64_t dst = healthy.first_gpu_of_node(node);
    const std::vector<EdgeId> before = route(healthy, 0, dst);
    const std::vector<EdgeId> after = route(degraded, 0, dst);
    ASSERT_TRUE(avoids_down_links(degraded, after)) << node;
    if (healthy.target(before[2]) == healthy.spine_vertex(0, spine)) {
      ++moved;
      EXPECT_NE(after[2], before[2]);
      ++moved_to[degraded.target(after[2])];
    } else {
      EXPECT_EQ(after, before) << node;
    }
  }
  EXPECT_GT(moved, 0);
  EXPECT_GT(moved_to.size(), 1U);  // re-hashed over several spines, not piled on one
}

// Three tiers (radix 4, 8 nodes x 2 NICs: 4 pods of 2 leaves, 4 cores): a
// failed core takes uplink m of spine j in every pod; a failed spine, its
// leaves' uplinks and its own; routes across pods avoid both.
TEST(FabricFaults, CoreAndSpineFaultsInThreeTiers) {
  Cluster c = cluster_from_yaml(small_fat_tree(8));
  ASSERT_EQ(c.shape().tiers, 3);
  const int64_t h = c.shape().half_radix;  // 2
  fail_core(c, 0, 3);                      // group 1, index 1
  EXPECT_EQ(c.down_link_count(), c.shape().pods);
  for (int64_t pod = 0; pod < c.shape().pods; ++pod) {
    EXPECT_TRUE(c.is_down(c.spine_up(0, pod * h + 1, 1)));
  }
  fail_spine(c, 0, 0);  // pod 0, index 0: 2 leaf uplinks and 2 core uplinks
  EXPECT_EQ(c.down_link_count(), c.shape().pods + 4);
  for (int64_t src = 0; src < c.gpu_count(); ++src) {
    for (int64_t dst = 0; dst < c.gpu_count(); ++dst) {
      if (src == dst) continue;
      EXPECT_TRUE(avoids_down_links(c, route(c, src, dst))) << src << " -> " << dst;
    }
  }
}

// A leaf with every uplink down cannot reach the other leaves: an error, not
// a route through a dead link.
TEST(FabricFaults, NoRouteLeftIsAnInvariantError) {
  Cluster c = cluster_from_yaml(small_fat_tree(4));
  ASSERT_EQ(c.shape().tiers, 2);
  fail_leaf_uplink(c, 0, 0, 0);
  EXPECT_TRUE(avoids_down_links(c, route(c, 0, 6)));
  fail_leaf_uplink(c, 0, 0, 1);
  EXPECT_THROW(route(c, 0, 6), sim::InvariantError);
  EXPECT_EQ(route(c, 0, 1).size(), 2U);                   // inside the node: unaffected
  EXPECT_THROW(fail_core(c, 0, 0), sim::InvariantError);  // two tiers: no core
  EXPECT_THROW(fail_spine(c, 0, 99), sim::InvariantError);
}

}  // namespace
}  // namespace clustersim::topology
