// Test support: one step of a workload on a single HGX H100 node with the
// shipped h100 profile, the GPUs' speed spread off (every rank alike).
#pragma once

#include "tests/support/step_fixtures.h"
#include "workloads/model/compute_model.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::test_support {

inline workloads::StepResult simulate_on_one_node(const workloads::WorkloadSpec& w) {
  workloads::StepConfig c;
  c.workload = w;
  c.compute = workloads::compute_spec_from_profile(h100());
  c.compute.speed_variation = 0;
  return workloads::simulate_step(hgx_h100(1), h100(), c);
}

}  // namespace clustersim::test_support
