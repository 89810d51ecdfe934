#include "topology/routing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/topology/topology_test_util.h"

namespace clustersim::topology {
namespace {

using testing::cluster_from_yaml;
using testing::small_fat_tree;

constexpr const char* kTwoH100 = "name: t\ncluster:\n  nodes: 2\n  node: hgx_h100\n";

std::vector<VertexKind> kinds_along(const Cluster& c, int64_t src, const std::vector<EdgeId>& r) {
  std::vector<VertexKind> kinds = {c.kind(c.gpu_vertex(src))};
  for (EdgeId e : r) kinds.push_back(c.kind(c.target(e)));
  return kinds;
}

// Every route is a connected walk from the source GPU to the destination.
void expect_connected(const Cluster& c, int64_t src, int64_t dst, const std::vector<EdgeId>& r) {
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(c.source(r.front()), c.gpu_vertex(src));
  EXPECT_EQ(c.target(r.back()), c.gpu_vertex(dst));
  for (size_t i = 1; i < r.size(); ++i) EXPECT_EQ(c.source(r[i]), c.target(r[i - 1]));
}

using K = VertexKind;

TEST(Routing, SameNodeCrossesTheNvSwitch) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  const std::vector<EdgeId> r = route(c, 1, 6);
  EXPECT_EQ(r, (std::vector<EdgeId>{c.nvlink_up(1), Cluster::reverse(c.nvlink_up(6))}));
  EXPECT_TRUE(route(c, 3, 3).empty());
}

TEST(Routing, SameRailStaysOnTheRailsLeaf) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  const std::vector<EdgeId> r = route(c, 2, 10);
  expect_connected(c, 2, 10, r);
  EXPECT_EQ(kinds_along(c, 2, r), (std::vector<K>{K::kGpu, K::kNic, K::kLeaf, K::kNic, K::kGpu}));
  EXPECT_EQ(c.target(r[1]), c.leaf_vertex(2, 0));
}

TEST(Routing, CrossRailHopsOverNvLinkFirstLikePxn) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  // GPU 0 (node 0, rail 0) to GPU 11 (node 1, rail 3): via GPU 3 of node 0.
  const std::vector<EdgeId> r = route(c, 0, 11);
  expect_connected(c, 0, 11, r);
  EXPECT_EQ(r,
            (std::vector<EdgeId>{c.nvlink_up(0), Cluster::reverse(c.nvlink_up(3)), c.gpu_nic_up(3),
                                 c.nic_up(3, 0), Cluster::reverse(c.nic_up(11, 0)),
                                 Cluster::reverse(c.gpu_nic_up(11))}));
}

TEST(Routing, FatTreeRouteMatchesTheHandDrawing) {
  // 4 nodes x 2 NICs, radix 4: NICs 0-1 on leaf 0, ..., NICs 6-7 on leaf 3.
  const Cluster c = cluster_from_yaml(small_fat_tree(4));
  const std::vector<EdgeId> r = route(c, 0, 6);
  expect_connected(c, 0, 6, r);
  EXPECT_EQ(kinds_along(c, 0, r),
            (std::vector<K>{K::kGpu, K::kNic, K::kLeaf, K::kSpine, K::kLeaf, K::kNic, K::kGpu}));
  EXPECT_EQ(c.target(r[1]), c.leaf_vertex(0, 0));
  EXPECT_EQ(c.target(r[3]), c.leaf_vertex(0, 3));
  // No PXN in a fat-tree: GPU 1 uses its own NIC towards a rail-0 GPU.
  const std::vector<EdgeId> r2 = route(c, 1, 4);
  EXPECT_EQ(r2.front(), c.gpu_nic_up(1));
  EXPECT_EQ(r2.size(), 6U);
}

TEST(Routing, ThreeTiersClimbToTheCoreOnlyAcrossPods) {
  const Cluster c = cluster_from_yaml(small_fat_tree(8));
  // GPUs 0 and 15: NICs 0 and 15, pods 0 and 3.
  const std::vector<EdgeId> far = route(c, 0, 15);
  expect_connected(c, 0, 15, far);
  EXPECT_EQ(kinds_along(c, 0, far), (std::vector<K>{K::kGpu, K::kNic, K::kLeaf, K::kSpine, K::kCore,
                                                    K::kSpine, K::kLeaf, K::kNic, K::kGpu}));
  // GPUs 0 and 2: NICs 0 and 2, leaves 0 and 1 of pod 0: turn at a spine.
  EXPECT_EQ(route(c, 0, 2).size(), 6U);
}

TEST(Routing, EcmpIsDeterministicAndSpreads) {
  // 100 nodes per rail at radix 16: 13 leaves, 8 spines per rail.
  const Cluster c =
      cluster_from_yaml("name: t\ncluster:\n  nodes: 100\n  fabric:\n    switch_radix: 16\n");
  ASSERT_EQ(c.shape().tiers, 2);
  std::set<VertexId> spines;
  for (int64_t node = 8; node < 100; ++node) {
    const int64_t dst = c.first_gpu_of_node(node);
    const std::vector<EdgeId> r = route(c, 0, dst);
    EXPECT_EQ(r, route(c, 0, dst));
    ASSERT_EQ(r.size(), 6U);
    spines.insert(c.target(r[2]));
  }
  EXPECT_EQ(spines.size(), 8U);
  EXPECT_EQ(ecmp_hash(3, 5, 7), ecmp_hash(3, 5, 7));
  EXPECT_NE(ecmp_hash(3, 5, 7), ecmp_hash(5, 3, 7));
}

TEST(Routing, PlanesAreChosenByHashAndBothUsed) {
  const Cluster c = cluster_from_yaml("name: t\ncluster:\n  nodes: 2\n  fabric:\n    planes: 2\n");
  std::set<int64_t> planes;
  for (int64_t src = 0; src < 8; ++src) {
    for (int64_t dst = 8; dst < 16; ++dst) {
      const std::vector<EdgeId> r = route(c, src, dst);
      expect_connected(c, src, dst, r);
      for (EdgeId e : r) {
        // Trees are numbered plane-major: 8 rails of plane 0, then plane 1.
        if (c.link_kind(e) == LinkKind::kNicLeaf && c.kind(c.target(e)) == VertexKind::kLeaf) {
          planes.insert(c.index_in_kind(c.target(e)) / 8);
        }
      }
    }
  }
  EXPECT_EQ(planes, (std::set<int64_t>{0, 1}));
}

// The structural longest route equals the longest over every pair.
void expect_longest_matches_all_pairs(const Cluster& c) {
  size_t longest = 0;
  std::vector<EdgeId> r;
  for (int64_t s = 0; s < c.gpu_count(); ++s) {
    for (int64_t d = 0; d < c.gpu_count(); ++d) {
      route(c, s, d, r);
      if (s != d) expect_connected(c, s, d, r);
      longest = std::max(longest, r.size());
    }
  }
  EXPECT_EQ(static_cast<size_t>(longest_route_hops(c)), longest);
}

TEST(Routing, LongestRouteFromStructureMatchesAllPairs) {
  expect_longest_matches_all_pairs(cluster_from_yaml(kTwoH100));           // 6: PXN + 1 tier
  expect_longest_matches_all_pairs(cluster_from_yaml(small_fat_tree(4)));  // 6
  expect_longest_matches_all_pairs(cluster_from_yaml(small_fat_tree(8)));  // 8
  expect_longest_matches_all_pairs(cluster_from_yaml(
      "name: t\ncluster:\n  nodes: 12\n  fabric:\n    switch_radix: 4\n"));  // 3 tiers + PXN
  EXPECT_EQ(longest_route_hops(cluster_from_yaml(
                "name: t\ncluster:\n  nodes: 12\n  fabric:\n    switch_radix: 4\n")),
            10);
}

}  // namespace
}  // namespace clustersim::topology
