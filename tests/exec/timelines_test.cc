// exec/timelines.h and the engine's timelines: when the members of a TP
// group share one timeline, and that a grouped run gives what one timeline
// per rank gives: bit for bit with members of equal speed, the accounts by
// hand with unequal ones, and one timeline per rank again, by itself, on a
// fabric whose members' flows end apart.
#include "exec/timelines.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/engine.h"
#include "exec/program.h"
#include "exec/step_accounts.h"
#include "tests/support/program_builder.h"
#include "tests/support/step_fixtures.h"
#include "tests/topology/topology_test_util.h"
#include "topology/fabric_faults.h"

namespace clustersim::workloads {
namespace {

using step_accounts::kCompute;
using step_accounts::kExposedTp;
using step_accounts::kIdle;
using step_accounts::kSyncWait;

constexpr uint8_t kComm = 1;

using test_support::add;

Op segment(int64_t work_ns) {
  Op op;
  op.kind = OpKind::kSegment;
  op.stream = kComputeStream;
  op.task_count = 1;
  op.work_ns = work_ns;
  return op;
}

// A collective of `role` on `channel`'s stream: latency only, or `bytes` at
// `rate` (B/s) alone.
Op collective(GroupRole role, int32_t channel, uint8_t stream, int64_t latency_ns,
              int64_t bytes = 0, double rate = 0) {
  Op op;
  op.kind = OpKind::kCollective;
  op.stream = stream;
  op.op = collectives::CollectiveOp::kAllGather;
  op.role = role;
  op.channel = channel;
  op.exposed = role == GroupRole::kTp ? kExposedTp : step_accounts::kExposedAllGather;
  op.latency_ns = latency_ns;
  op.bytes = bytes;
  op.alone_Bps = rate;
  op.transfer_ns = rate > 0 ? static_cast<int64_t>(static_cast<double>(bytes) / rate * 1e9) : 0;
  return op;
}

// The channels (the shard group's on the comm stream, the TP group's on
// `tp_stream`), used streams, names and launch label.
void finish(Program& p, uint8_t tp_stream = kComputeStream) {
  p.channels.push_back(Program::Channel{GroupRole::kShard, kComm});
  p.channels.push_back(Program::Channel{GroupRole::kTp, tp_stream});
  for (int s = 0; s < kProgramStreams; ++s) {
    if (!p.stream_ops[static_cast<size_t>(s)].empty()) p.used_streams.push_back(s);
  }
  p.stream_names = {"compute", "comm", "reduce", "tp", "copy", "cpu"};
  p.launch = OpLabel{"host", "kernel_launches", "host", {}, 0, 0};
}

// Segment, TP collective (latency only), segment, on every rank.
Program tp_rounds(int64_t work_ns, int64_t tp_latency_ns) {
  Program p;
  add(p, segment(work_ns));
  add(p, collective(GroupRole::kTp, 1, kComputeStream, tp_latency_ns));
  add(p, segment(work_ns));
  finish(p);
  return p;
}

// Segment; the shard group's all-gather of `bytes` after it; a segment that
// needs the all-gather; a TP collective.
Program gather_rounds(int64_t bytes, double rate) {
  Program p;
  add(p, segment(1'000'000));
  add(p, collective(GroupRole::kShard, 0, kComm, 5'000, bytes, rate), {Dep{kComputeStream, 0}});
  add(p, segment(500'000), {Dep{kComm, 0}});
  add(p, collective(GroupRole::kTp, 1, kComputeStream, 20'000));
  finish(p);
  return p;
}

Layout tp_mesh(int64_t world, int64_t tp) {
  Layout l;
  l.world = world;
  l.tp = tp;
  l.shard = world / tp;
  return l;
}

// Factors that set TP group g's members to 1 + g / 10: members alike
// within a TP group, apart across them.
std::vector<double> by_tp_group(const Layout& l) {
  std::vector<double> f(static_cast<size_t>(l.world));
  for (int64_t r = 0; r < l.world; ++r) {
    f[static_cast<size_t>(r)] = 1 + static_cast<double>(l.group_of(GroupRole::kTp, r)) / 10;
  }
  return f;
}

TEST(Timelines, PlanIdenticalRanksOnceElseOneTimelinePerTpGroupElseOnePerRank) {
  const Program p = tp_rounds(1000, 100);
  const EngineJob job{std::span<const Program>(&p, 1), {}, nullptr};
  const Layout l = tp_mesh(16, 8);
  // Nothing tells the ranks apart: the stage's every rank is one timeline.
  TimelinePlan plan = plan_timelines(job, l, {});
  EXPECT_EQ(plan.ranks_per_timeline, 16);
  EXPECT_EQ(merged_dims_text(l, plan.merged), "dp_shard tp");
  EXPECT_EQ(plan.explicit_why, "");
  plan = plan_timelines(job, tp_mesh(16, 1), {});
  EXPECT_EQ(plan.ranks_per_timeline, 16);
  EXPECT_EQ(merged_dims_text(tp_mesh(16, 1), plan.merged), "dp_shard");
  // Speeds apart across TP groups: one timeline per TP group; without TP
  // groups, one per rank.
  EngineOptions apart;
  apart.rank_time_factors = by_tp_group(l);
  plan = plan_timelines(job, l, apart);
  EXPECT_EQ(plan.ranks_per_timeline, 8);
  EXPECT_EQ(merged_dims_text(l, plan.merged), "tp");
  apart.rank_time_factors = by_tp_group(tp_mesh(16, 1));
  plan = plan_timelines(job, tp_mesh(16, 1), apart);
  EXPECT_EQ(plan.ranks_per_timeline, 1);
  EXPECT_EQ(plan.explicit_why, "ranks of unequal speed, no TP groups");
  // One rank per stage: nothing to group, nothing to say.
  Layout stages;
  stages.world = 4;
  stages.pp = 4;
  EXPECT_EQ(plan_timelines(job, stages, {}).ranks_per_timeline, 1);
  EXPECT_EQ(plan_timelines(job, stages, {}).explicit_why, "");
  const auto why = [&](const EngineOptions& o, const EngineJob& j) {
    const TimelinePlan refused = plan_timelines(j, l, o);
    EXPECT_EQ(refused.ranks_per_timeline, 1);
    return refused.explicit_why;
  };
  EngineOptions o;
  o.explicit_ranks = true;
  EXPECT_EQ(why(o, job), "asked for (--explicit)");
  o = {};
  o.trace_ranks = {3};
  EXPECT_EQ(plan_timelines(job, l, o).ranks_per_timeline, 16);  // its timeline's records
  o.stragglers = {Straggler{2, 1.5}};
  EXPECT_EQ(why(o, job), "traced ranks among members of unequal speed keep their own timelines");
  o = {};
  o.segment_jitter_sd = 0.01;
  EXPECT_EQ(why(o, job), "gpu.segment_jitter draws each rank's kernels apart");
  o = {};
  o.host_lead_jitter_ns = 1000;
  EXPECT_EQ(why(o, job), "host.step_jitter starts each rank's host apart");
  // Two programs, rank 5 (in TP group 0) on the second.
  const std::vector<Program> two{p, p};
  std::vector<int32_t> program_of(16, 0);
  program_of[5] = 1;
  EXPECT_EQ(why({}, EngineJob{two, program_of, nullptr}),
            "the members of a TP group run different programs");
  // A ring inside the TP group: fine at equal speeds, not at unequal ones.
  Program ring = p;
  Op send;
  send.kind = OpKind::kSend;
  send.stream = 3;
  send.peer = 1;
  send.peer_role = GroupRole::kTp;
  ring.stream_ops[3].push_back(static_cast<int32_t>(ring.ops.size()));
  ring.ops.push_back(send);
  const EngineJob ring_job{std::span<const Program>(&ring, 1), {}, nullptr};
  EXPECT_EQ(plan_timelines(ring_job, l, {}).ranks_per_timeline, 16);
  o = {};
  o.stragglers = {Straggler{2, 1.5}};
  EXPECT_EQ(why(o, ring_job),
            "members of unequal speed exchange in a ring inside their TP group (async TP)");
  EXPECT_EQ(plan_timelines(job, l, o).ranks_per_timeline, 8);  // no ring: the slowest's pace
  // Send/recv to named ranks (a replay's).
  Program named = ring;
  named.ops.back().peer_role = GroupRole::kNone;
  EXPECT_EQ(why({}, EngineJob{std::span<const Program>(&named, 1), {}, nullptr}),
            "send/recv to named ranks");
}

// The timelines' layout and their members: merging tp, timeline t is TP
// group t and its other groups are its members' with the TP coordinate
// taken out; merging tp and dp_shard, a stage is one timeline whose groups
// stand for every real group of the stage.
TEST(Timelines, TimelineMapEnumeratesMembersAndTheRealGroupsTheyStandFor) {
  Layout l;
  l.world = 64;
  l.tp = 4;
  l.pp = 2;
  l.shard = 8;
  MeshDimSet tp{};
  tp[static_cast<size_t>(MeshDim::kTp)] = true;
  const TimelineMap groups(l, tp);
  EXPECT_EQ(groups.tl.world, 16);
  EXPECT_EQ(groups.tl.tp, 1);
  EXPECT_EQ(groups.k, 4);
  EXPECT_EQ(groups.copies(GroupRole::kTp), 1);
  EXPECT_EQ(groups.copies(GroupRole::kShard), 4);
  for (int64_t r = 0; r < l.world; ++r) {
    const int64_t timeline = l.group_of(GroupRole::kTp, r);
    EXPECT_EQ(groups.timeline_of(r), timeline);
    EXPECT_EQ(groups.real_rank(timeline, l.index_in_group(GroupRole::kTp, r)), r);
    EXPECT_EQ(groups.tl.stage_of(timeline), l.stage_of(r));
    EXPECT_EQ(groups.tl.index_in_group(GroupRole::kShard, timeline),
              l.index_in_group(GroupRole::kShard, r));
    EXPECT_EQ(groups.real_group(GroupRole::kShard, groups.tl.group_of(GroupRole::kShard, timeline),
                                l.index_in_group(GroupRole::kTp, r)),
              l.group_of(GroupRole::kShard, r));
  }
  // A stage per timeline, in an order that puts tp outermost: its members
  // still ascend with their index, and its shard (pipeline) group stands
  // for each of the stage's 4 shard (32 pipeline) groups once.
  l.order = {MeshDim::kTp, MeshDim::kPp, MeshDim::kDpReplicate, MeshDim::kDpShard, MeshDim::kCp};
  MeshDimSet stage = tp;
  stage[static_cast<size_t>(MeshDim::kDpShard)] = true;
  const TimelineMap stages(l, stage);
  EXPECT_EQ(stages.tl.world, 2);
  EXPECT_EQ(stages.k, 32);
  EXPECT_EQ(merged_dims_text(l, stage), "tp dp_shard");
  for (int64_t t = 0; t < 2; ++t) {
    std::vector<int64_t> shard_groups;
    std::vector<int64_t> pp_groups;
    for (int64_t c = 0; c < stages.k; ++c) {
      const int64_t r = stages.real_rank(t, c);
      EXPECT_EQ(stages.timeline_of(r), t);
      EXPECT_EQ(l.stage_of(r), t);
      if (c > 0) {
        EXPECT_GT(r, stages.real_rank(t, c - 1));
      }
    }
    for (int64_t c = 0; c < stages.copies(GroupRole::kShard); ++c) {
      shard_groups.push_back(stages.real_group(GroupRole::kShard, t, c));
      EXPECT_EQ(l.stage_of(l.member(GroupRole::kShard, shard_groups.back(), 0)), t);
    }
    for (int64_t c = 0; c < stages.copies(GroupRole::kPp); ++c) {
      pp_groups.push_back(stages.real_group(GroupRole::kPp, 0, c));
    }
    std::sort(shard_groups.begin(), shard_groups.end());
    std::sort(pp_groups.begin(), pp_groups.end());
    EXPECT_EQ(std::unique(shard_groups.begin(), shard_groups.end()), shard_groups.end());
    EXPECT_EQ(shard_groups.size(), 4U);
    ASSERT_EQ(pp_groups.size(), 32U);
    for (int64_t g = 0; g < 32; ++g) EXPECT_EQ(pp_groups[static_cast<size_t>(g)], g);
  }
  EXPECT_TRUE(stages.inside(GroupRole::kTp));
  EXPECT_TRUE(stages.inside(GroupRole::kShard));
  EXPECT_FALSE(stages.inside(GroupRole::kPp));
}

TEST(Timelines, MembersOfEqualSpeedGiveTheExplicitResultBitForBit) {
  const topology::Cluster cluster = test_support::hgx_h100(2);
  const Program p = gather_rounds(64 << 20, 50e9);
  EngineOptions options;
  // Identical ranks: one timeline; TP groups apart in speed: one each.
  for (const bool identical : {true, false}) {
    SCOPED_TRACE(identical ? "identical ranks" : "TP groups of unequal speed");
    options = {};
    if (!identical) options.rank_time_factors = by_tp_group(tp_mesh(16, 4));
    const EngineResult grouped =
        run_program(p, tp_mesh(16, 4), cluster, test_support::h100(), options);
    options.explicit_ranks = true;
    const EngineResult ranks =
        run_program(p, tp_mesh(16, 4), cluster, test_support::h100(), options);
    EXPECT_EQ(grouped.ranks_per_timeline, identical ? 16 : 4);
    const std::vector<std::string> dims =
        identical ? std::vector<std::string>{"dp_shard", "tp"} : std::vector<std::string>{"tp"};
    EXPECT_EQ(grouped.timeline_dims, dims);
    EXPECT_EQ(ranks.ranks_per_timeline, 1);
    EXPECT_EQ(ranks.explicit_why, "asked for (--explicit)");
    EXPECT_EQ(grouped.step_end_ns, ranks.step_end_ns);
    EXPECT_EQ(grouped.summed_accounts, ranks.summed_accounts);
    EXPECT_EQ(grouped.slowest_rank, ranks.slowest_rank);
    EXPECT_EQ(grouped.collectives, ranks.collectives);  // 4 all-gathers of 4 + 4 TP ones
    EXPECT_EQ(grouped.collectives, 8);
    EXPECT_LT(grouped.events, ranks.events);
  }
}

TEST(Timelines, AFasterMemberComputesItsShareAndWaitsTheRestAsSyncWait) {
  // Two ranks, one TP group: rank 1 is 1.5 times slower. Segment W, TP
  // collective of latency L, segment W: the step is 1.5W + L + 1.5W; rank 0
  // computes 2W, waits 0.5W for rank 1 at the collective (sync wait) and
  // is idle 0.5W at the end; rank 1 computes 3W; both L of exposed TP.
  constexpr int64_t w = 1'000'000;
  constexpr int64_t l = 30'000;
  const topology::Cluster cluster = test_support::hgx_h100(1);
  const Program p = tp_rounds(w, l);
  EngineOptions options;
  options.rank_time_factors = {1.0, 1.5};
  for (const bool explicit_ranks : {false, true}) {
    SCOPED_TRACE(explicit_ranks ? "explicit" : "grouped");
    options.explicit_ranks = explicit_ranks;
    const EngineResult r = run_program(p, tp_mesh(2, 2), cluster, test_support::h100(), options);
    EXPECT_EQ(r.ranks_per_timeline, explicit_ranks ? 1 : 2);
    EXPECT_EQ(r.step_end_ns, 3 * w + l);
    EXPECT_EQ(r.slowest_rank, 1);
    EXPECT_EQ(r.summed_accounts[kCompute], 2 * w + 3 * w);
    EXPECT_EQ(r.summed_accounts[kSyncWait], w / 2);
    EXPECT_EQ(r.summed_accounts[kExposedTp], 2 * l);
    EXPECT_EQ(r.summed_accounts[kIdle], w / 2);
  }
}

// Segments with a TP all-reduce of `bytes` between each two, on the TP
// stream: each waits for the segment before it, the next for it (the
// compute stream stops for it).
Program tp_stream_rounds(int rounds, int64_t bytes) {
  constexpr uint8_t kTpStream = 3;
  Program p;
  add(p, segment(400'000));
  for (int i = 0; i < rounds; ++i) {
    Op ar = collective(GroupRole::kTp, 1, kTpStream, 8'000, bytes, 300e9);
    ar.op = collectives::CollectiveOp::kAllReduce;
    add(p, ar, {Dep{kComputeStream, i}});
    add(p, segment(400'000), {Dep{kTpStream, i}});
  }
  finish(p, kTpStream);
  return p;
}

TEST(Timelines, TpCollectivesAloneOnTheirLinksEndInClosedFormAndInsideChains) {
  // Two HGX nodes, TP 8 inside each: the TP groups' NVLink links are their
  // own. Ten rounds of segment + TP all-reduce of 64 MiB at 300 GB/s alone
  // (the link allows more): each all-reduce ends at its start + 8 us + the
  // bytes at 300 GB/s, rounded up. One timeline per TP group runs the step
  // as one chain; one per rank ends each all-reduce with one event.
  const topology::Cluster cluster = test_support::hgx_h100(2);
  constexpr int kRounds = 10;
  constexpr int64_t kBytes = 64 << 20;
  const Program p = tp_stream_rounds(kRounds, kBytes);
  EngineOptions options;
  const EngineResult grouped =
      run_program(p, tp_mesh(16, 8), cluster, test_support::h100(), options);
  options.explicit_ranks = true;
  const EngineResult ranks = run_program(p, tp_mesh(16, 8), cluster, test_support::h100(), options);
  const auto transfer = static_cast<int64_t>(std::ceil(static_cast<double>(kBytes) / 300e9 * 1e9));
  EXPECT_EQ(ranks.step_end_ns, (kRounds + 1) * 400'000 + kRounds * (8'000 + transfer));
  EXPECT_EQ(grouped.step_end_ns, ranks.step_end_ns);
  EXPECT_EQ(grouped.summed_accounts, ranks.summed_accounts);
  EXPECT_EQ(grouped.summed_accounts[kExposedTp], 16 * kRounds * (8'000 + transfer));
  // No flows: each all-reduce one latency-only end with one timeline per
  // rank (two TP groups), none with the identical ranks' one timeline
  // (inside the chain, the two groups' all-reduces one end).
  EXPECT_EQ(grouped.ranks_per_timeline, 16);
  EXPECT_EQ(ranks.stats.transfer_begins, 0U);
  EXPECT_EQ(ranks.stats.latency_ends, 2U * kRounds);
  EXPECT_EQ(grouped.stats.latency_ends, 0U);
  EXPECT_EQ(grouped.stats.chained_tp_ends, 1U * kRounds);
  EXPECT_EQ(grouped.collectives, ranks.collectives);
}

TEST(Timelines, MembersWhoseFlowsEndApartRunAgainOneTimelinePerRank) {
  // Twelve nodes of two GPUs sharing one NIC, on a fat tree of radix 4; the
  // mesh puts TP outermost, so TP group t is ranks t and t + 12, and the
  // shard group of TP index 0 is nodes 0-5, of index 1 nodes 6-11. With an
  // uplink of leaf 0 down, member 0's all-gather ends later than member
  // 1's: the members did not move in step, and the engine runs again with
  // one timeline per rank, and says so.
  const std::string yaml =
      "name: t\ncluster:\n  nodes: 12\n  node: custom\n  custom_node:\n    gpus_per_node: 2\n"
      "    nvlink_bandwidth: 200GB/s\n    nics_per_node: 1\n    nic_bandwidth: 50GB/s\n"
      "    pcie_bandwidth: 64GB/s\n  fabric:\n    type: fat_tree\n    switch_radix: 4\n"
      "    leaf_oversubscription: 2\n";
  const topology::Cluster healthy = topology::testing::cluster_from_yaml(yaml);
  topology::Cluster degraded = topology::testing::cluster_from_yaml(yaml);
  topology::fail_leaf_uplink(degraded, 0, 0, 0);
  Layout l = tp_mesh(24, 2);
  l.order = {MeshDim::kTp, MeshDim::kPp, MeshDim::kDpReplicate, MeshDim::kDpShard, MeshDim::kCp};
  ASSERT_EQ(l.member(GroupRole::kTp, 0, 1), 12);
  const Program p = gather_rounds(256 << 20, 47e9);
  EngineOptions options;
  options.healthy_fabric = &healthy;
  const EngineResult apart = run_program(p, l, degraded, test_support::h100(), options);
  EXPECT_EQ(apart.ranks_per_timeline, 1);
  EXPECT_EQ(apart.explicit_why,
            "the flows of a timeline's members ended apart (an asymmetric fabric): ran again");
  options.explicit_ranks = true;
  const EngineResult ranks = run_program(p, l, degraded, test_support::h100(), options);
  EXPECT_EQ(apart.step_end_ns, ranks.step_end_ns);
  EXPECT_EQ(apart.summed_accounts, ranks.summed_accounts);
  // On the healthy fabric the two halves are alike: the ranks, identical,
  // are one timeline.
  options = {};
  const EngineResult alike = run_program(p, l, healthy, test_support::h100(), options);
  EXPECT_EQ(alike.ranks_per_timeline, 24);
  EXPECT_LT(alike.step_end_ns, ranks.step_end_ns);
}

}  // namespace
}  // namespace clustersim::workloads
