#include "topology/cluster.h"

#include <gtest/gtest.h>

#include "tests/topology/topology_test_util.h"
#include "topology/cluster_graphviz.h"
#include "topology/cluster_summary.h"

namespace clustersim::topology {
namespace {

using testing::cluster_from_yaml;
using testing::small_fat_tree;

constexpr const char* kTwoH100 = "name: t\ncluster:\n  nodes: 2\n  node: hgx_h100\n";

TEST(Cluster, TwoHgxH100NodesRailOptimizedHaveHandCountedParts) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  EXPECT_EQ(c.gpu_count(), 16);
  EXPECT_EQ(c.count(VertexKind::kGpu), 16);
  EXPECT_EQ(c.count(VertexKind::kNvSwitch), 2);
  EXPECT_EQ(c.count(VertexKind::kHost), 2);
  EXPECT_EQ(c.count(VertexKind::kNic), 16);
  // 2 NICs per rail fit one radix-64 switch: one leaf per rail, no spines.
  EXPECT_EQ(c.count(VertexKind::kLeaf), 8);
  EXPECT_EQ(c.count(VertexKind::kSpine), 0);
  EXPECT_EQ(c.count(VertexKind::kCore), 0);
  EXPECT_EQ(c.vertex_count(), 44U);
  EXPECT_EQ(c.link_count(LinkKind::kNvLink), 16);
  EXPECT_EQ(c.link_count(LinkKind::kGpuNic), 16);
  EXPECT_EQ(c.link_count(LinkKind::kGpuHost), 16);
  EXPECT_EQ(c.link_count(LinkKind::kNicLeaf), 16);
  EXPECT_EQ(c.link_count(LinkKind::kLeafSpine), 0);
  EXPECT_EQ(c.link_count(), 64U);
  EXPECT_EQ(c.edge_count(), 128U);
  EXPECT_EQ(boost::num_vertices(c.graph()), 44U);
  EXPECT_EQ(boost::num_edges(c.graph()), 128U);
}

TEST(Cluster, PresetFiguresArePerDirection) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  // NVLink4 900 GB/s bidirectional -> 450 GB/s each way; 400 Gb/s -> 50 GB/s.
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(c.nvlink_up(0)), 450e9);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(Cluster::reverse(c.nvlink_up(0))), 450e9);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(c.nic_up(0, 0)), 50e9);
  EXPECT_EQ(c.latency(c.nvlink_up(0)), sim::SimTime::ns(300));
}

TEST(Cluster, QueriesMapGpusToNodesNicsAndRails) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  EXPECT_EQ(c.node_of_gpu(11), 1);
  EXPECT_EQ(c.first_gpu_of_node(1), 8);
  EXPECT_EQ(c.rail_of_gpu(11), 3);
  EXPECT_EQ(c.nic_of_gpu(11), 11);
  EXPECT_EQ(c.kind(c.nic_vertex(11)), VertexKind::kNic);
  EXPECT_EQ(c.index_in_kind(c.nic_vertex(11)), 11);
  EXPECT_EQ(c.source(c.gpu_nic_up(11)), c.gpu_vertex(11));
  EXPECT_EQ(c.target(c.gpu_nic_up(11)), c.nic_vertex(11));
  // Rail 3's leaf is the 4th leaf.
  EXPECT_EQ(c.target(c.nic_up(11, 0)), c.leaf_vertex(3, 0));
}

TEST(Cluster, NicsSharedByGpusServeConsecutiveGpus) {
  const Cluster c = cluster_from_yaml(
      "name: t\ncluster:\n  nodes: 2\n  node: custom\n  custom_node:\n    gpus_per_node: 4\n"
      "    nvlink_bandwidth: 1GB/s\n    nics_per_node: 2\n    nic_bandwidth: 1GB/s\n"
      "    pcie_bandwidth: 1GB/s\n");
  EXPECT_EQ(c.rail_of_gpu(5), 0);
  EXPECT_EQ(c.rail_of_gpu(6), 1);
  EXPECT_EQ(c.nic_of_gpu(7), 3);
  EXPECT_EQ(c.gpu_on_rail(1, 1), 6);
}

TEST(Cluster, SmallFatTreeHasLeavesAndSpines) {
  // 8 NICs, radix 4: leaves of 2 down + 2 up ports -> 4 leaves, 2 spines.
  const Cluster c = cluster_from_yaml(small_fat_tree(4));
  EXPECT_EQ(c.shape().tiers, 2);
  EXPECT_EQ(c.count(VertexKind::kLeaf), 4);
  EXPECT_EQ(c.count(VertexKind::kSpine), 2);
  EXPECT_EQ(c.count(VertexKind::kCore), 0);
  EXPECT_EQ(c.link_count(LinkKind::kLeafSpine), 8);
}

TEST(Cluster, ThreeTierFatTreeHasPodsAndCores) {
  // 16 NICs at radix 4 = k^3/4: 8 leaves, 4 pods of 2 spines, 4 cores.
  const Cluster c = cluster_from_yaml(small_fat_tree(8));
  EXPECT_EQ(c.shape().tiers, 3);
  EXPECT_EQ(c.count(VertexKind::kLeaf), 8);
  EXPECT_EQ(c.count(VertexKind::kSpine), 8);
  EXPECT_EQ(c.count(VertexKind::kCore), 4);
  EXPECT_EQ(c.link_count(LinkKind::kSpineCore), 16);
  // Spine 1 of pod 2 (spine 5) serves core group 1: cores 2 and 3.
  EXPECT_EQ(c.target(c.spine_up(0, 5, 0)), c.core_vertex(0, 2));
  EXPECT_EQ(c.target(c.spine_up(0, 5, 1)), c.core_vertex(0, 3));
}

TEST(Cluster, OversubscriptionDividesUplinkCapacity) {
  const Cluster c = cluster_from_yaml(small_fat_tree(4, 2.0));
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(c.nic_up(0, 0)), 100e9);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(c.leaf_up(0, 0, 1)), 50e9);
}

TEST(Cluster, PlanesSplitTheNicAndReplicateTheFabric) {
  const Cluster c = cluster_from_yaml(std::string(kTwoH100) + "  fabric:\n    planes: 2\n");
  EXPECT_EQ(c.count(VertexKind::kLeaf), 16);
  EXPECT_EQ(c.link_count(LinkKind::kNicLeaf), 32);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(c.nic_up(5, 1)), 25e9);
  EXPECT_EQ(c.target(c.nic_up(5, 1)), c.leaf_vertex(8 + 5, 0));
}

TEST(Cluster, SingleSwitchPutsEveryNicOnOneSwitch) {
  const Cluster c =
      cluster_from_yaml(std::string(kTwoH100) + "  fabric:\n    type: single_switch\n");
  EXPECT_EQ(c.count(VertexKind::kLeaf), 1);
  EXPECT_EQ(c.target(c.nic_up(15, 0)), c.leaf_vertex(0, 0));
}

TEST(Summary, BisectionOfTwoNodesIsEveryRailsNic) {
  // One NIC per rail on each side: 8 rails x 50 GB/s.
  EXPECT_DOUBLE_EQ(bisection_bandwidth_Bps(cluster_from_yaml(kTwoH100)), 400e9);
}

TEST(Summary, BisectionOfNonBlockingAndOversubscribedTrees) {
  // 8 NICs of 100 GB/s: half of them is 400 GB/s; leaf uplinks total
  // 4 leaves x 2 x 100 GB/s, half is 400 GB/s.
  EXPECT_DOUBLE_EQ(bisection_bandwidth_Bps(cluster_from_yaml(small_fat_tree(4))), 400e9);
  // 2:1: uplinks of 50 GB/s, 400 GB/s in all, half crosses: 200 GB/s.
  EXPECT_DOUBLE_EQ(bisection_bandwidth_Bps(cluster_from_yaml(small_fat_tree(4, 2.0))), 200e9);
}

TEST(Summary, FormatsEveryCount) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  const std::string text = format_summary(c, summarize(c));
  EXPECT_NE(text.find("gpus: 16\n"), std::string::npos) << text;
  EXPECT_NE(text.find("switches: leaf 8, spine 0, core 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("bisection bandwidth: 400GB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("longest route: 6 hops\n"), std::string::npos) << text;
}

TEST(Graphviz, WritesLabelledVerticesAndOneEdgePerLink) {
  const Cluster c = cluster_from_yaml(kTwoH100);
  const std::string dot = cluster_to_dot(c);
  EXPECT_EQ(dot.rfind("graph G {", 0), 0U) << dot.substr(0, 40);
  EXPECT_NE(dot.find("[label=\"nic 15\"]"), std::string::npos);
  EXPECT_NE(dot.find("[label=\"450GB/s 300ns\"]"), std::string::npos);
  size_t edges = 0;
  for (size_t at = dot.find("--"); at != std::string::npos; at = dot.find("--", at + 1)) {
    ++edges;
  }
  EXPECT_EQ(edges, 64U);
}

TEST(Scale, Builds131072GpusWithFormulaCounts) {
  const Cluster c = cluster_from_yaml("name: t\ncluster:\n  nodes: 16384\n");
  EXPECT_EQ(c.gpu_count(), 131072);
  // Per rail: 16384 NICs, 512 leaves, 16 pods -> 512 spines, 32^2 cores.
  EXPECT_EQ(c.shape().tiers, 3);
  EXPECT_EQ(c.count(VertexKind::kLeaf), 8 * 512);
  EXPECT_EQ(c.count(VertexKind::kSpine), 8 * 512);
  EXPECT_EQ(c.count(VertexKind::kCore), 8 * 1024);
  EXPECT_EQ(boost::num_edges(c.graph()), c.edge_count());
}

}  // namespace
}  // namespace clustersim::topology
