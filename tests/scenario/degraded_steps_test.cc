// DegradedSteps: the step with one spine, core switch or switch-to-switch
// cable down is a simulated step on the cluster without its links, once per
// kind asked for.
#include "scenario/degraded_steps.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/step_fixtures.h"
#include "tests/topology/topology_test_util.h"
#include "topology/fabric_faults.h"
#include "workloads/model/compute_model.h"

namespace clustersim::cli {
namespace {

using failures::ComponentKind;
using test_support::h100;

// Six nodes of 2 GPUs behind one 50 GB/s NIC, radix-4 leaves of two nodes
// with two 25 GB/s uplinks each (2:1): the leaves' uplinks carry as much as
// the NICs, so losing one spine halves what crosses the leaves
// (tests/exec/engine_test.cc, AFailedSpineHalvesARingThroughOversubscribedLeaves).
const std::string kOversubscribed =
    "name: t\ncluster:\n  nodes: 6\n  node: custom\n  custom_node:\n    gpus_per_node: 2\n"
    "    nvlink_bandwidth: 200GB/s\n    nics_per_node: 1\n    nic_bandwidth: 50GB/s\n"
    "    pcie_bandwidth: 64GB/s\n  fabric:\n    type: fat_tree\n    switch_radix: 4\n"
    "    leaf_oversubscription: 2\n";

// FSDP over the 12 GPUs at 128 tokens per GPU: the step is its all-gathers
// and reduce-scatters, every ring crossing the leaves.
workloads::StepConfig comm_bound_step() {
  workloads::StepConfig c;
  c.workload = test_support::small_spec(12, 12);
  c.workload.seq_len = 128;
  c.compute = workloads::compute_spec_from_profile(h100());
  return c;
}

TEST(DegradedSteps, ASpineDownIsTheStepOnTheClusterWithoutIt) {
  const topology::Cluster cluster = topology::testing::cluster_from_yaml(kOversubscribed);
  const workloads::StepConfig config = comm_bound_step();
  const double healthy_s = workloads::simulate_step(cluster, h100(), config).step_time_s;
  DegradedSteps steps(cluster, h100(), config, healthy_s);
  EXPECT_TRUE(steps.simulated().empty());
  EXPECT_EQ(steps(ComponentKind::kGpu), 1.0);  // not a fabric part

  // By hand: the same cluster with spine 0 of its one tree down.
  topology::Cluster degraded = topology::testing::cluster_from_yaml(kOversubscribed);
  topology::fail_spine(degraded, 0, 0);
  workloads::StepConfig on_degraded = config;
  on_degraded.healthy_fabric = &cluster;
  const double degraded_s = workloads::simulate_step(degraded, h100(), on_degraded).step_time_s;
  // Every transfer crossing the leaves runs at half its healthy rate; only
  // the latencies and the little compute do not stretch.
  EXPECT_GT(degraded_s, 1.9 * healthy_s);
  EXPECT_LT(degraded_s, 2.0 * healthy_s);
  EXPECT_DOUBLE_EQ(steps(ComponentKind::kSpineSwitch), degraded_s / healthy_s);
  ASSERT_EQ(steps.simulated().size(), 1u);
  EXPECT_EQ(steps.simulated()[0].kind, ComponentKind::kSpineSwitch);
  EXPECT_DOUBLE_EQ(steps.simulated()[0].step_s, degraded_s);
  // Asked again: the same answer, nothing simulated anew.
  EXPECT_DOUBLE_EQ(steps(ComponentKind::kSpineSwitch), degraded_s / healthy_s);
  ASSERT_EQ(steps.simulated().size(), 1u);

  // One cable, leaf 0's uplink 0: leaf 0's two flows share one uplink, and
  // the ring runs at its slowest hop: the same halving.
  EXPECT_GT(steps(ComponentKind::kFabricLink), 1.9);
  // Two tiers: no core switch to lose.
  EXPECT_EQ(steps(ComponentKind::kCoreSwitch), 1.0);
  ASSERT_EQ(steps.simulated().size(), 3u);
  EXPECT_EQ(steps.simulated()[1].kind, ComponentKind::kCoreSwitch);
  EXPECT_EQ(steps.simulated()[1].step_s, 0.0);
  EXPECT_EQ(steps.simulated()[1].note, "the fabric has no such tier");
}

// Without oversubscription a leaf's two uplinks carry twice what its NICs
// send: one left still carries all of it, and the step does not change.
TEST(DegradedSteps, SpareUplinkCapacityHidesTheFault) {
  std::string yaml = kOversubscribed;
  yaml.replace(yaml.find("leaf_oversubscription: 2"), 24, "leaf_oversubscription: 1");
  const topology::Cluster cluster = topology::testing::cluster_from_yaml(yaml);
  const workloads::StepConfig config = comm_bound_step();
  const double healthy_s = workloads::simulate_step(cluster, h100(), config).step_time_s;
  DegradedSteps steps(cluster, h100(), config, healthy_s);
  EXPECT_DOUBLE_EQ(steps(ComponentKind::kSpineSwitch), 1.0);
  ASSERT_EQ(steps.simulated().size(), 1u);
  EXPECT_DOUBLE_EQ(steps.simulated()[0].step_s, healthy_s);
}

// A straggler node: the step with node 0's 8 GPUs computing 1.5 times
// slower, simulated once; the slowest node gates the collectives, so the
// step stretches by less than 1.5 where communication or latency is part of
// it, and by more than 1 wherever compute is.
TEST(DegradedSteps, AStragglerIsTheStepWithOneNodeSlowed) {
  const topology::Cluster cluster = test_support::hgx_h100(2);
  workloads::StepConfig config;
  config.workload = test_support::small_spec(16, 16);
  config.compute = workloads::compute_spec_from_profile(h100());
  const double healthy_s = workloads::simulate_step(cluster, h100(), config).step_time_s;
  DegradedSteps steps(cluster, h100(), config, healthy_s);
  workloads::StepConfig slow = config;
  for (int64_t r = 0; r < 8; ++r) slow.stragglers.push_back({r, 1.5});
  const double slow_s = workloads::simulate_step(cluster, h100(), slow).step_time_s;
  EXPECT_DOUBLE_EQ(steps.straggler(1.5), slow_s / healthy_s);
  EXPECT_GT(steps.straggler(1.5), 1.2);
  EXPECT_LT(steps.straggler(1.5), 1.5);
  ASSERT_EQ(steps.simulated().size(), 1u);
  EXPECT_EQ(steps.simulated()[0].kind, ComponentKind::kHost);
  EXPECT_DOUBLE_EQ(steps.simulated()[0].step_s, slow_s);
}

}  // namespace
}  // namespace clustersim::cli
