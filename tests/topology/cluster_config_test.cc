#include "topology/cluster_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/config_error.h"
#include "tests/topology/topology_test_util.h"

namespace clustersim::topology {
namespace {

using ::testing::HasSubstr;
using testing::spec_from_yaml;

std::string error_of(std::string_view yaml) {
  try {
    spec_from_yaml(yaml);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ClusterConfig, DefaultsGiveRailOptimizedHgxH100) {
  const ClusterSpec spec = spec_from_yaml("name: t\ncluster:\n  nodes: 4\n");
  EXPECT_EQ(spec.nodes, 4);
  EXPECT_EQ(spec.node.preset, "hgx_h100");
  EXPECT_EQ(spec.node.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(spec.node.nvlink_Bps, 450e9);
  EXPECT_DOUBLE_EQ(spec.node.nic_Bps, 50e9);
  EXPECT_EQ(spec.fabric.type, FabricType::kRailOptimized);
  EXPECT_EQ(spec.fabric.switch_radix, 64);
  EXPECT_EQ(spec.fabric.planes, 1);
}

TEST(ClusterConfig, PresetsCarryDatasheetFiguresPerDirection) {
  NodeSpec a100;
  ASSERT_TRUE(node_preset("hgx_a100", a100));
  EXPECT_DOUBLE_EQ(a100.nvlink_Bps, 300e9);
  EXPECT_DOUBLE_EQ(a100.nic_Bps, 25e9);
  NodeSpec nvl72;
  ASSERT_TRUE(node_preset("gb200_nvl72", nvl72));
  EXPECT_EQ(nvl72.gpus_per_node, 72);
  EXPECT_EQ(nvl72.nics_per_node, 72);
  EXPECT_DOUBLE_EQ(nvl72.nvlink_Bps, 900e9);
  EXPECT_DOUBLE_EQ(nvl72.pcie_Bps, 225e9);  // NVLink-C2C: 900 GB/s both ways per two GPUs
  NodeSpec b200;
  ASSERT_TRUE(node_preset("hgx_b200", b200));
  EXPECT_EQ(b200.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(b200.nvlink_Bps, 900e9);  // NVLink 5: 1.8 TB/s both ways
  EXPECT_DOUBLE_EQ(b200.nic_Bps, 50e9);
  NodeSpec gb300;
  ASSERT_TRUE(node_preset("gb300_nvl72", gb300));
  EXPECT_EQ(gb300.gpus_per_node, 72);
  EXPECT_DOUBLE_EQ(gb300.nic_Bps, 100e9);  // ConnectX-8, 800 Gb/s
  NodeSpec none;
  EXPECT_FALSE(node_preset("custom", none));
}

TEST(ClusterConfig, UnknownPresetSuggestsTheNearest) {
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 2\n  node: hgx_h10\n"),
              HasSubstr("scenario.yaml:4:9: error: cluster.node: "));
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 2\n  node: hgx_h10\n"),
              HasSubstr("did you mean 'hgx_h100'?"));
}

TEST(ClusterConfig, CustomNodeWithZeroBandwidthIsRefused) {
  const std::string error = error_of(
      "name: t\ncluster:\n  nodes: 2\n  node: custom\n  custom_node:\n    gpus_per_node: 4\n"
      "    nvlink_bandwidth: 0GB/s\n    nics_per_node: 4\n    nic_bandwidth: 400Gbps\n"
      "    pcie_bandwidth: 64GB/s\n");
  EXPECT_THAT(error, HasSubstr("scenario.yaml:7:23: error: cluster.custom_node.nvlink_bandwidth: "
                               "expected a positive bandwidth"));
}

TEST(ClusterConfig, IncompleteCustomNodePointsAtTheNodeKey) {
  const std::string error = error_of(
      "name: t\ncluster:\n  nodes: 2\n  node: custom\n  custom_node:\n    gpus_per_node: 4\n");
  EXPECT_THAT(error, HasSubstr("scenario.yaml:4:9: error: cluster.custom_node.nic_bandwidth: "
                               "expected a value because cluster.node is 'custom', found nothing"));
}

TEST(ClusterConfig, NicsMustDivideGpus) {
  const std::string error = error_of(
      "name: t\ncluster:\n  nodes: 2\n  node: custom\n  custom_node:\n    gpus_per_node: 8\n"
      "    nvlink_bandwidth: 1GB/s\n    nics_per_node: 3\n    nic_bandwidth: 1GB/s\n"
      "    pcie_bandwidth: 1GB/s\n");
  EXPECT_THAT(error, HasSubstr("scenario.yaml:8:20: error: cluster.custom_node.nics_per_node: "
                               "expected a divisor of gpus_per_node (8), found 3"));
}

TEST(ClusterConfig, CustomKeysWithAPresetAreRefused) {
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 2\n  custom_node:\n    gpus_per_node: 4\n"),
              HasSubstr("scenario.yaml:5:20: error: cluster.custom_node.gpus_per_node: expected "
                        "no custom_node keys unless cluster.node is 'custom'"));
}

TEST(ClusterConfig, NodesBeyondThreeTiersOfTheRadixAreRefused) {
  // Radix 4: at most 4 * 2 * 2 = 16 NICs per rail.
  EXPECT_NO_THROW(
      spec_from_yaml("name: t\ncluster:\n  nodes: 16\n  fabric:\n    switch_radix: 4\n"));
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 17\n  fabric:\n    switch_radix: 4\n"),
              HasSubstr("scenario.yaml:3:10: error: cluster.nodes: expected at most 16 NICs per "
                        "rail (3 tiers of radix-4 switches), found 17"));
}

TEST(ClusterConfig, SingleSwitchMustHoldEveryNic) {
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 9\n  fabric:\n    type: single_switch\n"),
              HasSubstr("scenario.yaml:3:10: error: cluster.nodes: expected at most 64 NICs (one "
                        "radix-64 switch), found 72"));
}

TEST(ClusterConfig, FabricKeysAreValidated) {
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 2\n  fabric:\n    switch_radix: 7\n"),
              HasSubstr("cluster.fabric.switch_radix: expected"));
  EXPECT_THAT(
      error_of("name: t\ncluster:\n  nodes: 2\n  fabric:\n    leaf_oversubscription: 0.5\n"),
      HasSubstr("scenario.yaml:5:28: error: cluster.fabric.leaf_oversubscription:"));
}

TEST(ClusterConfig, MissingNodesIsReported) {
  EXPECT_THAT(error_of("name: t\n"),
              HasSubstr("scenario.yaml: error: cluster.nodes: expected a positive integer"));
}

// cluster.gpus: the fewest nodes that hold the job evenly, each running its
// share; cluster.gpus_used_per_node: part of each node.
TEST(ClusterConfig, AJobSizedInGpusTakesTheFewestNodesThatHoldItEvenly) {
  const ClusterSpec racks = spec_from_yaml("name: t\ncluster:\n  gpus: 256\n  node: gb200_nvl72\n");
  EXPECT_EQ(racks.nodes, 4);  // 256 / 72 = 3.6: four racks of 64
  EXPECT_EQ(racks.node.gpus_per_node, 64);
  EXPECT_EQ(racks.node.nics_per_node, 64);
  const ClusterSpec hgx = spec_from_yaml("name: t\ncluster:\n  gpus: 256\n  node: hgx_b200\n");
  EXPECT_EQ(hgx.nodes, 32);
  EXPECT_EQ(hgx.node.gpus_per_node, 8);
  // 1,000 GPUs: 14 racks do not divide them, 20 of 50 do.
  const ClusterSpec odd = spec_from_yaml("name: t\ncluster:\n  gpus: 1000\n  node: gb200_nvl72\n");
  EXPECT_EQ(odd.nodes, 20);
  EXPECT_EQ(odd.node.gpus_per_node, 50);
  const ClusterSpec part = spec_from_yaml(
      "name: t\ncluster:\n  nodes: 2\n  node: gb200_nvl72\n  gpus_used_per_node: 64\n");
  EXPECT_EQ(part.nodes, 2);
  EXPECT_EQ(part.node.gpus_per_node, 64);
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 2\n  gpus: 16\n"),
              HasSubstr(":4:9: error: cluster.gpus: expected either cluster.gpus or cluster.nodes "
                        "(the one follows from the other), found both"));
  EXPECT_THAT(error_of("name: t\ncluster:\n  nodes: 1\n  gpus_used_per_node: 12\n"),
              HasSubstr(":4:23: error: cluster.gpus_used_per_node: expected at most the node's 8 "
                        "GPUs, found 12"));
}

}  // namespace
}  // namespace clustersim::topology
