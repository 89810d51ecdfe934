// Test support for the failures layer: a job of whole HGX H100 nodes.
#pragma once

#include <cstdint>

#include "failures/job_components.h"
#include "tests/support/cluster_fixtures.h"

namespace clustersim::test_support {

// `nodes` HGX H100 nodes (8 GPUs, 8 NICs) on a rail-optimized fabric of
// radix-64 switches, every GPU in the job.
inline failures::JobComponents h100_job(int64_t nodes) {
  return failures::JobComponents(hgx_h100_spec(nodes), nodes * 8);
}

}  // namespace clustersim::test_support
