// Test support for the failures layer: a job of whole HGX H100 nodes.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "failures/job_components.h"
#include "topology/cluster_config.h"

namespace clustersim::test_support {

// `nodes` HGX H100 nodes (8 GPUs, 8 NICs) on a rail-optimized fabric of
// radix-64 switches, every GPU in the job.
inline failures::JobComponents h100_job(int64_t nodes) {
  topology::ClusterSpec spec;
  spec.nodes = nodes;
  EXPECT_TRUE(topology::node_preset("hgx_h100", spec.node));
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  return failures::JobComponents(spec, nodes * 8);
}

}  // namespace clustersim::test_support
