// One timeline per TP group against one per rank (exec/timelines.h) on the
// shipped and published scenarios with tensor parallelism, run as shipped
// or scaled down where a step of the explicit engine would take minutes
// (the overrides say how): with the profile's GPU speed spread, the step
// time and every line of the breakdown within 0.1% of the step; with
// identical GPUs, bit for bit. A scenario whose members cannot move in step
// runs one timeline per rank and says why.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "scenario/step_config.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {
namespace {

struct Case {
  std::string file;  // under scenarios/
  std::vector<std::string> sets;
};

std::array<double, 11> lines(const workloads::StepBreakdown& b) {
  return {b.compute_s,
          b.exposed_all_gather_s,
          b.exposed_reduce_scatter_s,
          b.exposed_all_reduce_s,
          b.exposed_tp_s,
          b.exposed_pcie_s,
          b.exposed_cp_s,
          b.pipeline_bubble_s,
          b.sync_wait_s,
          b.launch_bound_s,
          b.idle_s};
}

workloads::StepResult step(const Case& c, bool explicit_ranks, bool identical_gpus) {
  StepScenario s = load_step_scenario(CLUSTERSIM_SOURCE_DIR "/scenarios/" + c.file, c.sets);
  s.config.explicit_ranks = explicit_ranks;
  if (identical_gpus) s.config.compute.speed_variation = 0;
  return workloads::simulate_step(s.net.cluster, s.net.profile, s.config);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"llama3_70b_fsdp_tp_64xh100.yaml", {}},
      {"examples/llama3_70b_whatif.yaml", {}},
      {"published/tt_70b_tp8_h100.yaml", {}},
      {"published/tt_405b_3d_h100.yaml", {}},
      // 3D: TP 8 x PP 16 x FSDP 4 (the shipped FSDP 128 on 2,048 nodes).
      {"llama3_405b_3d_16384xh100.yaml", {"cluster.nodes=64"}},
      // 4D FT-HSDP: TP 8 x CP 2 x PP 16 x FSDP 2 x 2 replica groups.
      {"llama3_405b_ft_hsdp_4d_98304xh100.yaml",
       {"cluster.nodes=128", "workload.parallelism.shard_group_size=4",
        "workload.parallelism.replica_group_size=2"}},
      // Long context: CP 2 in place of 16, on 64 nodes.
      {"llama3_405b_long_context_16384xh100.yaml",
       {"cluster.nodes=64", "workload.parallelism.cp=2"}},
      // Megatron-LM's DDP with TP 8 x PP 8 on 8 nodes, 32 sequences a step.
      {"published/megascale_175b_a100.yaml", {"cluster.nodes=8", "workload.global_batch=32"}},
  };
  return all;
}

TEST(GroupedEngine, WithTheSpeedSpreadEveryLineIsWithinATenthOfAPercentOfTheStep) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.file);
    const workloads::StepResult grouped = step(c, false, false);
    const workloads::StepResult ranks = step(c, true, false);
    ASSERT_GT(grouped.ranks_per_timeline, 1) << grouped.explicit_why;
    EXPECT_EQ(ranks.ranks_per_timeline, 1);
    const double step_s = ranks.step_time_s;
    EXPECT_NEAR(grouped.step_time_s, step_s, 1e-3 * step_s);
    const std::array<double, 11> g = lines(grouped.breakdown);
    const std::array<double, 11> e = lines(ranks.breakdown);
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-3 * step_s) << "line " << i;
    EXPECT_EQ(grouped.collectives, ranks.collectives);
    EXPECT_LT(grouped.events, ranks.events);
  }
}

TEST(GroupedEngine, WithIdenticalGpusTheStepIsTheExplicitOneBitForBit) {
  // The pipelined cases' copies share links that bind (a stage's shard
  // groups and its send/recv on one NIC port): their member flows are
  // solved by link class, and bit for bit too.
  std::vector<std::string> by_link_class;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.file);
    const workloads::StepResult grouped = step(c, false, true);
    const workloads::StepResult ranks = step(c, true, true);
    ASSERT_GT(grouped.ranks_per_timeline, 1) << grouped.explicit_why;
    EXPECT_EQ(grouped.step_time_s, ranks.step_time_s);
    EXPECT_EQ(lines(grouped.breakdown), lines(ranks.breakdown));
    EXPECT_EQ(grouped.slowest_rank, ranks.slowest_rank);
    EXPECT_EQ(grouped.collectives, ranks.collectives);
    if (grouped.engine.bundle_solve == "by link class") by_link_class.push_back(c.file);
  }
  EXPECT_EQ(by_link_class, (std::vector<std::string>{"llama3_405b_3d_16384xh100.yaml",
                                                     "llama3_405b_ft_hsdp_4d_98304xh100.yaml",
                                                     "llama3_405b_long_context_16384xh100.yaml"}));
}

TEST(GroupedEngine, ATracedMemberRecordsWhatItDidExplicitly) {
  // Ranks 0 and 3 (TP group 0) and 8 (group 1) of the 64-GPU FSDP + TP step,
  // identical GPUs: the same records, field by field, as one timeline per
  // rank records for them.
  const Case c{"llama3_70b_fsdp_tp_64xh100.yaml", {}};
  const auto traced = [&](bool explicit_ranks) {
    StepScenario s = load_step_scenario(CLUSTERSIM_SOURCE_DIR "/scenarios/" + c.file, c.sets);
    s.config.explicit_ranks = explicit_ranks;
    s.config.compute.speed_variation = 0;
    s.config.trace_ranks = {0, 3, 8};
    return workloads::simulate_step(s.net.cluster, s.net.profile, s.config);
  };
  const workloads::StepResult grouped = traced(false);
  const workloads::StepResult ranks = traced(true);
  EXPECT_EQ(grouped.ranks_per_timeline, 64);  // identical ranks: one timeline
  ASSERT_EQ(grouped.trace.size(), ranks.trace.size());
  ASSERT_GT(ranks.trace.size(), 3000U);
  for (size_t i = 0; i < ranks.trace.size(); ++i) {
    const workloads::TraceRecord& g = grouped.trace[i];
    const workloads::TraceRecord& e = ranks.trace[i];
    ASSERT_EQ(g.rank, e.rank) << i;
    ASSERT_EQ(g.name, e.name) << i;
    ASSERT_EQ(g.track, e.track) << i;
    ASSERT_EQ(g.start, e.start) << i;
    ASSERT_EQ(g.duration, e.duration) << i;
    ASSERT_EQ(g.wait, e.wait) << i;
    ASSERT_EQ(g.group_size, e.group_size) << i;
    ASSERT_EQ(g.bytes, e.bytes) << i;
  }
  EXPECT_EQ(grouped.step_time_s, ranks.step_time_s);
}

TEST(GroupedEngine, AsyncTpRingsGroupOnlyMembersOfEqualSpeed) {
  // NeMo's Nemotron-4 340B layout with async TP (send/recv rings inside each
  // TP group), 24 layers in 3 virtual stages of 8 pipeline stages: grouped
  // and bit for bit with identical GPUs; with the speed spread one timeline
  // per rank, and the reason on the engine line.
  const Case c{"examples/nemotron4_340b_h100.yaml",
               {"workload.custom_model.layers=24", "workload.pipeline.virtual_stages=3",
                "workload.global_batch=16"}};
  const workloads::StepResult grouped = step(c, false, true);
  const workloads::StepResult ranks = step(c, true, true);
  EXPECT_EQ(grouped.ranks_per_timeline, 16);  // a stage's identical ranks: TP 8 x DP 2
  EXPECT_EQ(grouped.step_time_s, ranks.step_time_s);
  EXPECT_EQ(lines(grouped.breakdown), lines(ranks.breakdown));
  const workloads::StepResult spread = step(c, false, false);
  EXPECT_EQ(spread.ranks_per_timeline, 1);
  EXPECT_EQ(spread.explicit_why,
            "members of unequal speed exchange in a ring inside their TP group (async TP)");
}

}  // namespace
}  // namespace clustersim::cli
