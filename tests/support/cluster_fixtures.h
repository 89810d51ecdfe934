// Test support: the spec of a cluster of HGX H100 nodes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "topology/cluster_config.h"

namespace clustersim::test_support {

// `nodes` HGX H100 nodes (8 GPUs, 8 NICs) on a rail-optimized fabric of
// radix-64 switches.
inline topology::ClusterSpec hgx_h100_spec(int64_t nodes) {
  topology::ClusterSpec spec;
  spec.nodes = nodes;
  EXPECT_TRUE(topology::node_preset("hgx_h100", spec.node));
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  return spec;
}

}  // namespace clustersim::test_support
