#include "failures/job_components.h"

#include <gtest/gtest.h>

#include "failures/llama3_fit.h"
#include "topology/cluster.h"
#include "topology/cluster_config.h"

namespace clustersim::failures {
namespace {

using topology::VertexKind;

topology::ClusterSpec h100_cluster(
    int64_t nodes, int64_t radix,
    topology::FabricType type = topology::FabricType::kRailOptimized) {
  topology::ClusterSpec spec;
  spec.nodes = nodes;
  EXPECT_TRUE(topology::node_preset("hgx_h100", spec.node));
  spec.fabric.type = type;
  spec.fabric.switch_radix = radix;
  return spec;
}

// Whole-cluster jobs count the same switches and links as topology's graph.
void expect_counts_match_cluster(const topology::ClusterSpec& spec) {
  const topology::Cluster cluster = topology::build_cluster(spec);
  const JobComponents job(spec, cluster.gpu_count());
  EXPECT_EQ(job.count(ComponentKind::kGpu), cluster.count(VertexKind::kGpu));
  EXPECT_EQ(job.count(ComponentKind::kGpuHbm), cluster.count(VertexKind::kGpu));
  EXPECT_EQ(job.count(ComponentKind::kHost), cluster.count(VertexKind::kHost));
  EXPECT_EQ(job.count(ComponentKind::kNvSwitch), cluster.count(VertexKind::kNvSwitch));
  EXPECT_EQ(job.count(ComponentKind::kNic), cluster.count(VertexKind::kNic));
  EXPECT_EQ(job.count(ComponentKind::kLeafSwitch), cluster.count(VertexKind::kLeaf));
  EXPECT_EQ(job.count(ComponentKind::kSpineSwitch), cluster.count(VertexKind::kSpine));
  EXPECT_EQ(job.count(ComponentKind::kCoreSwitch), cluster.count(VertexKind::kCore));
  EXPECT_EQ(job.count(ComponentKind::kNicCable), cluster.link_count(topology::LinkKind::kNicLeaf));
  EXPECT_EQ(job.count(ComponentKind::kFabricLink),
            cluster.link_count(topology::LinkKind::kLeafSpine) +
                cluster.link_count(topology::LinkKind::kSpineCore));
  EXPECT_EQ(job.count(ComponentKind::kNodeSoftware), spec.nodes);
  EXPECT_EQ(job.count(ComponentKind::kJobSoftware), 1);
}

TEST(JobComponents, WholeClusterMatchesTopology) {
  expect_counts_match_cluster(h100_cluster(1, 64));                                  // 1 tier
  expect_counts_match_cluster(h100_cluster(40, 8));                                  // 3 tiers
  expect_counts_match_cluster(h100_cluster(12, 8, topology::FabricType::kFatTree));  // 3 tiers
  expect_counts_match_cluster(h100_cluster(3, 8, topology::FabricType::kFatTree));   // 2 tiers
  topology::ClusterSpec planes = h100_cluster(20, 8);
  planes.fabric.planes = 2;
  expect_counts_match_cluster(planes);
}

TEST(JobComponents, LlamaFittingCluster) {
  // 2,048 nodes of 8 GPUs and 8 NICs; one rail tree per NIC, 2,048 endpoints
  // each on radix-64 switches: 2 tiers, 64 leaves and 32 spines per tree.
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  EXPECT_EQ(job.gpus(), 16'384);
  EXPECT_EQ(job.nodes(), 2'048);
  EXPECT_EQ(job.count(ComponentKind::kNic), 16'384);
  EXPECT_EQ(job.count(ComponentKind::kNicCable), 16'384);
  EXPECT_EQ(job.fabric_tiers(), 2);
  EXPECT_EQ(job.count(ComponentKind::kLeafSwitch), 8 * 64);
  EXPECT_EQ(job.count(ComponentKind::kSpineSwitch), 8 * 32);
  EXPECT_EQ(job.count(ComponentKind::kCoreSwitch), 0);
  EXPECT_EQ(job.count(ComponentKind::kFabricLink), 8 * 64 * 32);
}

TEST(JobComponents, PartOfTheCluster) {
  // One node's job on the 2,048-node cluster: one leaf per rail, no spine.
  const JobComponents one_node(llama3_fitting_cluster(), 8);
  EXPECT_EQ(one_node.nodes(), 1);
  EXPECT_EQ(one_node.count(ComponentKind::kLeafSwitch), 8);
  EXPECT_EQ(one_node.count(ComponentKind::kSpineSwitch), 0);
  EXPECT_EQ(one_node.count(ComponentKind::kFabricLink), 0);
  // 12 GPUs: 2 nodes, the second half used; 100 nodes: 4 leaves of 32 per rail.
  const JobComponents partial(llama3_fitting_cluster(), 12);
  EXPECT_EQ(partial.gpus(), 12);
  EXPECT_EQ(partial.nodes(), 2);
  EXPECT_EQ(partial.count(ComponentKind::kNic), 16);
  const JobComponents hundred(llama3_fitting_cluster(), 800);
  EXPECT_EQ(hundred.count(ComponentKind::kLeafSwitch), 8 * 4);
  EXPECT_EQ(hundred.count(ComponentKind::kSpineSwitch), 8 * 32);
  EXPECT_EQ(hundred.count(ComponentKind::kFabricLink), 8 * 4 * 32);
}

// A fat tree of 5 nodes with 2 NICs each and radix-8 switches (4 endpoints
// a leaf), every GPU in the job.
JobComponents small_fat_tree() {
  topology::ClusterSpec fat;
  fat.nodes = 5;
  fat.node = {"custom", 2, 1e11, 2, 1e10, 1e10};
  fat.fabric.type = topology::FabricType::kFatTree;
  fat.fabric.switch_radix = 8;
  return JobComponents(fat, 10);
}

TEST(JobComponents, NodesOfAComponent) {
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  EXPECT_EQ(job.nodes_of(ComponentKind::kGpu, 17).first, 2);
  EXPECT_EQ(job.nodes_of(ComponentKind::kGpu, 17).count, 1);
  EXPECT_EQ(job.nodes_of(ComponentKind::kNic, 8 * 100 + 3).first, 100);
  EXPECT_EQ(job.nodes_of(ComponentKind::kNicCable, 8 * 100 + 7).first, 100);
  EXPECT_EQ(job.nodes_of(ComponentKind::kHost, 2'047).first, 2'047);
  // Leaf 5 of rail tree 3 serves the NICs on rail 3 of nodes 160..191.
  const NodeRange leaf = job.nodes_of(ComponentKind::kLeafSwitch, 3 * 64 + 5);
  EXPECT_EQ(leaf.first, 160);
  EXPECT_EQ(leaf.count, 32);
  EXPECT_EQ(job.nodes_of(ComponentKind::kSpineSwitch, 0).count, 0);
  EXPECT_EQ(job.nodes_of(ComponentKind::kJobSoftware, 0).count, 2'048);
  EXPECT_DOUBLE_EQ(job.capacity_left_after(ComponentKind::kSpineSwitch), 31.0 / 32.0);
  EXPECT_EQ(job.capacity_left_after(ComponentKind::kGpu), 1.0);

  // Fat tree, 2 NICs per node, radix 8 (4 endpoints per leaf): leaf 1 holds
  // NICs 4..7, i.e. nodes 2 and 3; the last leaf of a 5-node job only NIC 8
  // and 9 (node 4).
  const JobComponents small = small_fat_tree();
  EXPECT_EQ(small.count(ComponentKind::kLeafSwitch), 3);
  EXPECT_EQ(small.nodes_of(ComponentKind::kLeafSwitch, 1).first, 2);
  EXPECT_EQ(small.nodes_of(ComponentKind::kLeafSwitch, 1).count, 2);
  EXPECT_EQ(small.nodes_of(ComponentKind::kLeafSwitch, 2).first, 4);
  EXPECT_EQ(small.nodes_of(ComponentKind::kLeafSwitch, 2).count, 1);
}

TEST(JobComponents, LeafNodesOfAComponent) {
  // Rail-optimized, 32 nodes a leaf: GPU 8 x 40 + 5 sits on node 40, whose
  // leaf serves nodes 32..63; a leaf switch's own nodes for a leaf switch.
  const JobComponents job(llama3_fitting_cluster(), 16'384);
  const NodeRange gpu = job.leaf_nodes_of(ComponentKind::kGpu, 8 * 40 + 5);
  EXPECT_EQ(gpu.first, 32);
  EXPECT_EQ(gpu.count, 32);
  EXPECT_EQ(job.leaf_nodes_of(ComponentKind::kHost, 2'047).first, 2'016);
  EXPECT_EQ(job.leaf_nodes_of(ComponentKind::kLeafSwitch, 3 * 64 + 5).first, 160);
  // Fat tree, 2 NICs a node, 4 endpoints a leaf: node 3's NICs 6, 7 are on
  // leaf 1 (nodes 2 and 3).
  const JobComponents small = small_fat_tree();
  const NodeRange leaf = small.leaf_nodes_of(ComponentKind::kNic, 7);
  EXPECT_EQ(leaf.first, 2);
  EXPECT_EQ(leaf.count, 2);
}

}  // namespace
}  // namespace clustersim::failures
