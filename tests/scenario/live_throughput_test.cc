// LiveThroughput: FT-HSDP's throughput with k of R groups is the simulated
// step of the k-group job, f(k) = (k / R) x step(R) / step(k), simulated once
// per k asked for; groups uneven over the nodes fall back to k / R.
#include "scenario/live_throughput.h"

#include <gtest/gtest.h>

#include "workloads/model/compute_model.h"
#include "tests/support/step_fixtures.h"

namespace clustersim::cli {
namespace {

using test_support::h100;
using test_support::hgx_h100;
using test_support::small_spec;

workloads::StepConfig config_for(const workloads::WorkloadSpec& w) {
  workloads::StepConfig c;
  c.workload = w;
  c.compute = workloads::compute_spec_from_profile(h100());
  return c;
}

TEST(LiveThroughput, EachKIsItsOwnSimulatedStep) {
  // HSDP 8 x 4 on 4 nodes: R = 4 replica groups of one node each.
  const topology::Cluster cluster = hgx_h100(4);
  const workloads::StepConfig full = config_for(small_spec(32, 8));
  const double full_s = workloads::simulate_step(cluster, h100(), full).step_time_s;
  LiveThroughput live(cluster, h100(), full, full_s);
  EXPECT_EQ(live(0), 0.0);
  EXPECT_EQ(live(4), 1.0);
  EXPECT_TRUE(live.simulated().empty());

  // The 2-group job by hand: 16 GPUs, the same shard groups.
  workloads::StepConfig two = config_for(small_spec(16, 8));
  const double two_s = workloads::simulate_step(cluster, h100(), two).step_time_s;
  EXPECT_DOUBLE_EQ(live(2), std::min(1.0, 0.5 * full_s / two_s));
  ASSERT_EQ(live.simulated().size(), 1u);
  EXPECT_EQ(live.simulated()[0].groups, 2);
  EXPECT_DOUBLE_EQ(live.simulated()[0].step_s, two_s);
  // Asked again: the same answer, nothing simulated anew.
  EXPECT_DOUBLE_EQ(live(2), std::min(1.0, 0.5 * full_s / two_s));
  live(3);
  ASSERT_EQ(live.simulated().size(), 2u);
  EXPECT_EQ(live.simulated()[1].groups, 3);
  // One group is plain FSDP over its node: 8 GPUs.
  const double one_s = workloads::simulate_step(cluster, h100(), config_for(small_spec(8, 8)))
                           .step_time_s;
  EXPECT_DOUBLE_EQ(live(1), std::min(1.0, 0.25 * full_s / one_s));
}

TEST(LiveThroughput, GroupsUnevenOverTheNodesScaleLinearly) {
  // Shard groups of 2 on 2 nodes: 8 replica groups. With 7 the replica
  // group (ranks 0, 2, ..., 12) holds 4 GPUs of node 0 and 3 of node 1.
  const topology::Cluster cluster = hgx_h100(2);
  const workloads::StepConfig full = config_for(small_spec(16, 2));
  const double full_s = workloads::simulate_step(cluster, h100(), full).step_time_s;
  LiveThroughput live(cluster, h100(), full, full_s);
  EXPECT_DOUBLE_EQ(live(7), 7.0 / 8.0);
  ASSERT_EQ(live.simulated().size(), 1u);
  EXPECT_EQ(live.simulated()[0].step_s, 0.0);
  EXPECT_EQ(live.simulated()[0].note, "groups uneven over the nodes");
}

}  // namespace
}  // namespace clustersim::cli
