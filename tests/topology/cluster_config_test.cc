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

}  // namespace
}  // namespace clustersim::topology
