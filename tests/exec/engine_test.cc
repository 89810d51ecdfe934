// exec/engine: hand-built programs on a few ranks against hand-computed
// times and accounts (segments, launch-bound tails, host gates, collective
// rendezvous with sync wait, stragglers, SM sharing, deadlocks, traces).
#include "exec/engine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/program.h"
#include "exec/step_accounts.h"
#include "sim/check.h"
#include "sim/distributions.h"
#include "sim/random_stream.h"
#include "tests/support/program_builder.h"
#include "tests/support/step_fixtures.h"
#include "tests/topology/topology_test_util.h"
#include "topology/fabric_faults.h"

namespace clustersim::workloads {
namespace {

using step_accounts::kCompute;
using step_accounts::kExposedAllReduce;
using step_accounts::kIdle;
using step_accounts::kLaunchBound;
using step_accounts::kSyncWait;

constexpr uint8_t kComm = 1;

using test_support::add;

Op segment(int64_t work_ns, int64_t first_launch_ns, int64_t tail_ns, int64_t host_start_ns = 0) {
  Op op;
  op.kind = OpKind::kSegment;
  op.stream = kComputeStream;
  op.task_count = 1;
  op.work_ns = work_ns;
  op.first_launch_ns = first_launch_ns;
  op.tail_ns = tail_ns;
  op.host_start_ns = host_start_ns;
  return op;
}

// An all-reduce of the shard group that moves nothing: latency only.
Op latency_collective(int64_t latency_ns) {
  Op op;
  op.kind = OpKind::kCollective;
  op.stream = kComm;
  op.op = collectives::CollectiveOp::kAllReduce;
  op.role = GroupRole::kShard;
  op.exposed = kExposedAllReduce;
  op.channel = 0;
  op.latency_ns = latency_ns;
  return op;
}

void finish(Program& p) {
  p.channels.push_back(Program::Channel{GroupRole::kShard, kComm});
  for (int s = 0; s < kProgramStreams; ++s) {
    if (!p.stream_ops[static_cast<size_t>(s)].empty()) p.used_streams.push_back(s);
  }
  p.stream_names = {"compute", "comm", "reduce", "tp", "copy", "cpu"};
  p.launch = OpLabel{"host", "kernel_launches", "host", {}, 0, 0};
}

Layout mesh(int64_t ranks) {
  Layout l;
  l.world = ranks;
  l.shard = ranks;
  return l;
}

EngineResult run(const Program& p, int64_t ranks, EngineOptions options = {}) {
  static const topology::Cluster cluster = test_support::hgx_h100(1);
  return run_program(p, mesh(ranks), cluster, test_support::h100(), options);
}

TEST(Engine, SegmentEndsAfterItsWorkAndItsFirstLaunch) {
  Program p;
  add(p, segment(1000, 10, 1010));
  finish(p);
  const EngineResult r = run(p, 1);
  EXPECT_EQ(r.step_end_ns, 1010);
  EXPECT_EQ(r.summed_accounts[kCompute], 1000);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 10);
  EXPECT_EQ(r.summed_accounts[kIdle], 0);
}

TEST(Engine, LaunchBoundTailHoldsTheSegmentOpen) {
  // 100 ns of kernels whose launches take until 500 ns after host start.
  Program p;
  add(p, segment(100, 10, 500));
  finish(p);
  const EngineResult r = run(p, 1);
  EXPECT_EQ(r.step_end_ns, 500);
  EXPECT_EQ(r.summed_accounts[kCompute], 100);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 400);
}

// seg(1000) -> all_reduce (latency 50) -> seg(500).
Program compute_sync_compute() {
  Program p;
  add(p, segment(1000, 0, 1000));
  add(p, latency_collective(50), {Dep{kComputeStream, 0}});
  add(p, segment(500, 0, 500), {Dep{kComm, 0}});
  finish(p);
  return p;
}

TEST(Engine, CollectiveStartsWhenTheLastMemberArrivesAndCountsSyncWait) {
  // Rank 1 computes 3x slower.
  const Program p = compute_sync_compute();
  EngineOptions options;
  options.stragglers = {Straggler{1, 3.0}};
  options.trace_ranks = {0};
  const EngineResult r = run(p, 2, options);
  // Rank 1 arrives at 3000; the collective ends at 3050; rank 1's last
  // segment takes 1500.
  EXPECT_EQ(r.step_end_ns, 4550);
  EXPECT_EQ(r.slowest_rank, 1);
  EXPECT_EQ(r.collectives, 1);
  // Rank 0: compute 1500, sync wait 2000 (1000 -> 3000), exposed 50, idle 1000.
  // Rank 1: compute 4500, exposed 50.
  EXPECT_EQ(r.summed_accounts[kCompute], 6000);
  EXPECT_EQ(r.summed_accounts[kSyncWait], 2000);
  EXPECT_EQ(r.summed_accounts[kExposedAllReduce], 100);
  EXPECT_EQ(r.summed_accounts[kIdle], 1000);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 0);
  // Rank 0's trace: launch + kernel twice (the host issues both launches at
  // 0: no launch costs here), and the collective.
  ASSERT_EQ(r.trace.size(), 5u);
  EXPECT_EQ(r.trace[2].track, "host");
  const TraceRecord& c = r.trace[3];
  EXPECT_EQ(c.track, "comm");
  EXPECT_EQ(c.start.count_ns(), 3000);
  EXPECT_EQ(c.duration.count_ns(), 50);
  EXPECT_EQ(c.wait.count_ns(), 2000);
  EXPECT_EQ(c.group_size, 2);
  EXPECT_EQ(r.trace[4].start.count_ns(), 3050);
  EXPECT_EQ(r.trace[4].duration.count_ns(), 500);
}

TEST(Engine, RankTimeFactorsScaleComputeAndCombineWithStragglers) {
  // Same program; GPU speeds 0.8x and 1.5x the median's time, rank 1 also a
  // 2x straggler: rank 0 arrives at 800, rank 1 at 1000 * 1.5 * 2 = 3000;
  // the collective ends at 3050; the last segments take 400 and 1500.
  const Program p = compute_sync_compute();
  EngineOptions options;
  options.rank_time_factors = {0.8, 1.5};
  options.stragglers = {Straggler{1, 2.0}};
  const EngineResult r = run(p, 2, options);
  EXPECT_EQ(r.step_end_ns, 4550);
  EXPECT_EQ(r.slowest_rank, 1);
  EXPECT_EQ(r.summed_accounts[kCompute], 800 + 400 + 4500);
  // Rank 0's faster first segment leaves its launch-bound tail (1000 ns
  // after host start) open for 200 ns; it then waits 1000 -> 3000.
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 200);
  EXPECT_EQ(r.summed_accounts[kSyncWait], 2000);
}

TEST(Engine, HostLeadDelaysEveryRanksFirstIssueAndIsLaunchBound) {
  // The loop's host work before the step: 700 ns on every rank, then the
  // program of CollectiveStartsWhenTheLastMemberArrives... on time: the
  // step ends at 700 + 1000 + 50 + 500; the 700 ns are launch-bound.
  EngineOptions options;
  options.host_lead_ns = 700;
  const EngineResult r = run(compute_sync_compute(), 2, options);
  EXPECT_EQ(r.step_end_ns, 2250);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 2 * 700);
  EXPECT_EQ(r.summed_accounts[kCompute], 2 * 1500);
  EXPECT_EQ(r.summed_accounts[kSyncWait], 0);
  EXPECT_EQ(r.summed_accounts[kExposedAllReduce], 2 * 50);
}

TEST(Engine, HostLeadJitterMakesTheFirstCollectiveWaitForTheLatestHost) {
  // Each rank's host starts 700 + |1000 z_r| ns late (z_r from the seed's
  // stream ("host.step_jitter", r)); the collective after the first
  // segment waits for the latest: the earlier rank's wait is sync wait.
  EngineOptions options;
  options.host_lead_ns = 700;
  options.host_lead_jitter_ns = 1000;
  options.jitter_seed = 3;
  const auto lead = [](int64_t r) {
    sim::RandomStream draws(3, "host.step_jitter", static_cast<uint64_t>(r));
    return 700 + std::llround(1000 * std::abs(sim::Normal::standard(draws)));
  };
  const int64_t lead0 = lead(0), lead1 = lead(1);
  ASSERT_NE(lead0, lead1);
  const EngineResult r = run(compute_sync_compute(), 2, options);
  EXPECT_EQ(r.step_end_ns, std::max(lead0, lead1) + 1550);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], lead0 + lead1);
  EXPECT_EQ(r.summed_accounts[kSyncWait], std::abs(lead0 - lead1));
  EXPECT_EQ(r.summed_accounts[kCompute], 2 * 1500);
}

TEST(Engine, RankTimeFactorsMustCoverEveryRank) {
  Program p;
  add(p, segment(1000, 0, 1000));
  finish(p);
  EngineOptions options;
  options.rank_time_factors = {1.0};
  EXPECT_THROW(run(p, 2, options), sim::InvariantError);
  options.rank_time_factors = {1.0, 0.0};
  EXPECT_THROW(run(p, 2, options), sim::InvariantError);
}

// Rank r's factor on its segment at compute position k, as the engine
// draws it (EngineOptions::segment_jitter_sd): the stream ("gpu.segment_jitter", r)
// at draw 16 k.
double jitter_factor(uint64_t seed, int64_t r, int k, double sd) {
  sim::RandomStream draws(seed, "gpu.segment_jitter", static_cast<uint64_t>(r));
  draws.seek(static_cast<uint64_t>(k) * 16);
  return std::exp(sd * sim::Normal::standard(draws));
}

// A millisecond of compute, a 50 ns rendezvous, half a millisecond more:
// long enough that each segment's time is its work (no launch-bound tail).
Program jittered_sync() {
  Program p;
  add(p, segment(1'000'000, 0, 0));
  add(p, latency_collective(50), {Dep{kComputeStream, 0}});
  add(p, segment(500'000, 0, 0), {Dep{kComm, 0}});
  finish(p);
  return p;
}

TEST(Engine, SegmentJitterDrawsEachRanksSegmentsAndTheCollectiveWaitsForTheSlowest) {
  constexpr double kSd = 0.05;
  constexpr uint64_t kSeed = 7;
  EngineOptions options;
  options.segment_jitter_sd = kSd;
  options.jitter_seed = kSeed;
  const EngineResult r = run(jittered_sync(), 8, options);
  double last_arrival = 0;
  for (int64_t m = 0; m < 8; ++m) {
    last_arrival = std::max(last_arrival, 1e6 * jitter_factor(kSeed, m, 0, kSd));
  }
  double step_end = 0;
  double wait = 0;
  for (int64_t m = 0; m < 8; ++m) {
    wait += last_arrival - 1e6 * jitter_factor(kSeed, m, 0, kSd);
    step_end = std::max(step_end, last_arrival + 50 + 5e5 * jitter_factor(kSeed, m, 1, kSd));
  }
  // Segments end on whole nanoseconds: within a few of the exact sums.
  EXPECT_NEAR(static_cast<double>(r.step_end_ns), step_end, 3);
  EXPECT_NEAR(static_cast<double>(r.summed_accounts[kSyncWait]), wait, 8 * 3);
  // Some wait there is: eight draws are not all equal.
  EXPECT_GT(r.summed_accounts[kSyncWait], 8 * 1000);
  // Same seed, same bytes; another seed, another step.
  EXPECT_EQ(run(jittered_sync(), 8, options).step_end_ns, r.step_end_ns);
  options.jitter_seed = kSeed + 1;
  EXPECT_NE(run(jittered_sync(), 8, options).step_end_ns, r.step_end_ns);
}

// `rounds` rounds of a millisecond of compute and a rendezvous of every rank.
Program jittered_rounds(int rounds) {
  Program p;
  for (int i = 0; i < rounds; ++i) {
    const std::vector<Dep> after_sync =
        i == 0 ? std::vector<Dep>{} : std::vector<Dep>{Dep{kComm, i - 1}};
    add(p, segment(1'000'000, 0, 0), after_sync);
    add(p, latency_collective(50), {Dep{kComputeStream, i}});
  }
  finish(p);
  return p;
}

TEST(Engine, SegmentJitterWaitGrowsWithTheGroupAsTheExpectedMaximumOfNormals) {
  // Each round every rank waits for the slowest of n draws: the mean wait
  // per rank and round is about sd x (E[max of n normals] - E[their mean]),
  // E[max] = 1.4236 for n = 8 and 2.4175 for n = 64 (Harter, Biometrika
  // 1961, tables of expected normal order statistics). Over 48 rounds the
  // sample mean's spread is about 0.09 (n = 8) and 0.06 (n = 64).
  static const topology::Cluster cluster = test_support::hgx_h100(8);
  constexpr double kSd = 0.04;
  constexpr int kRounds = 48;
  EngineOptions options;
  options.segment_jitter_sd = kSd;
  options.jitter_seed = 11;
  const auto mean_wait = [&](int64_t n) {
    const EngineResult r =
        run_program(jittered_rounds(kRounds), mesh(n), cluster, test_support::h100(), options);
    return static_cast<double>(r.summed_accounts[kSyncWait]) / static_cast<double>(n) / kRounds /
           1e6 / kSd;
  };
  EXPECT_NEAR(mean_wait(8), 1.42, 0.3);
  EXPECT_NEAR(mean_wait(64), 2.42, 0.25);
  // Without jitter, identical ranks never wait.
  options.segment_jitter_sd = 0;
  EXPECT_EQ(run_program(jittered_rounds(kRounds), mesh(64), cluster, test_support::h100(), options)
                .summed_accounts[kSyncWait],
            0);
}

TEST(Engine, HostGateWaitsForTheComputeOpsBeforeIt) {
  // Two segments; the host may issue the second (host start 100) only once
  // one compute op is done (at 1000): it then starts at 1000 + its first
  // launch of 10 and runs 200 -> 1210; 10 ns launch-bound.
  Program p;
  add(p, segment(1000, 0, 1000));
  const int32_t gated = add(p, segment(200, 10, 210, /*host_start_ns=*/100));
  add_compute_gate(p, gated, 1, /*host_ns=*/100);
  finish(p);
  const EngineResult r = run(p, 1);
  EXPECT_EQ(r.step_end_ns, 1210);
  EXPECT_EQ(r.summed_accounts[kCompute], 1200);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 10);
}

// A 1,000-byte all-reduce at 1 GB/s (far below NVLink: uncontended) that
// moves for 1000 ns beside 1000 ns of compute (and then `then_ns` more of
// compute, if not 0).
Program transfer_beside_compute(int64_t then_ns = 0) {
  Program p;
  Op transfer = latency_collective(0);
  transfer.bytes = 1000;
  transfer.alone_Bps = 1e9;
  transfer.transfer_ns = 1000;
  add(p, transfer);
  add(p, segment(1000, 0, 1000));
  if (then_ns > 0) add(p, segment(then_ns, 0, then_ns));
  finish(p);
  return p;
}

TEST(Engine, ComputeRunsSlowerWhileATransferOfTheRankIsInFlight) {
  // At half speed beside the transfer, the compute has 500 ns of work left
  // at 1000 and ends at 1500.
  EngineOptions options;
  options.comm_overlap_slowdown = 2.0;
  options.trace_ranks = {0};
  const EngineResult r = run(transfer_beside_compute(), 2, options);
  EXPECT_EQ(r.step_end_ns, 1500);
  EXPECT_EQ(r.summed_accounts[kCompute], 3000);
  ASSERT_EQ(r.trace.size(), 3u);
  const TraceRecord& c = r.trace[0].track == "comm" ? r.trace[0] : r.trace[1];
  EXPECT_EQ(c.start.count_ns(), 0);
  EXPECT_EQ(c.duration.count_ns(), 1000);
}

TEST(Engine, StatsCountEachEventByKind) {
  // transfer_beside_compute() on 2 ranks: the transfer begins at 0 and
  // ends at 1000 (one event each, solved alone: no solve event). Each
  // rank's look at 1000 finds 500 ns of work left (a re-look, to 2000 at
  // half speed); the transfer's end then moves it to 1500 (the look at 2000
  // goes stale), where the segment ends. The two ranks, identical, are one
  // timeline (exec/timelines.h): its events once; one per rank, twice.
  EngineOptions options;
  options.comm_overlap_slowdown = 2.0;
  for (const bool explicit_ranks : {false, true}) {
    SCOPED_TRACE(explicit_ranks ? "one timeline per rank" : "one timeline");
    options.explicit_ranks = explicit_ranks;
    const EngineResult r = run(transfer_beside_compute(), 2, options);
    ASSERT_EQ(r.step_end_ns, 1500);
    const uint64_t timelines = explicit_ranks ? 2 : 1;
    const EngineStats& s = r.stats;
    EXPECT_EQ(s.segment_ends, timelines);
    EXPECT_EQ(s.relooks, timelines);
    EXPECT_EQ(s.stale_looks, timelines);
    EXPECT_EQ(s.transfer_begins, 1u);
    EXPECT_EQ(s.transfer_ends, 1u);
    EXPECT_EQ(s.group_starts + s.latency_ends + s.flow_solves + s.local_ends, 0u);
    EXPECT_EQ(r.events, 2 + 2 * timelines);
    EXPECT_EQ(s.components_solved, 0u);  // one flow alone: never coupled
  }
}

// Six nodes of 2 GPUs behind one 50 GB/s NIC each, radix-4 leaves of two
// nodes with two 25 GB/s uplinks (oversubscribed 2:1) to two spines: a ring
// over the 12 GPUs leaves each leaf on two flows (one per ring, half the
// bytes each), so a leaf's uplinks carry what its NICs do, 47 GB/s of busbw
// (x 0.94, the network efficiency) and 47 x 12/11 GB/s of all-gather buffer.
// Tuned at exactly that rate, the all-gather moves its bytes in
// bytes / rate; with spine 0 down each leaf has one uplink for both flows,
// half the capacity, so twice as long.
TEST(Engine, AFailedSpineHalvesARingThroughOversubscribedLeaves) {
  const std::string yaml =
      "name: t\ncluster:\n  nodes: 6\n  node: custom\n  custom_node:\n    gpus_per_node: 2\n"
      "    nvlink_bandwidth: 200GB/s\n    nics_per_node: 1\n    nic_bandwidth: 50GB/s\n"
      "    pcie_bandwidth: 64GB/s\n  fabric:\n    type: fat_tree\n    switch_radix: 4\n"
      "    leaf_oversubscription: 2\n";
  const topology::Cluster healthy = topology::testing::cluster_from_yaml(yaml);
  topology::Cluster degraded = topology::testing::cluster_from_yaml(yaml);
  ASSERT_EQ(degraded.shape().tiers, 2);
  topology::fail_spine(degraded, 0, 0);
  ASSERT_DOUBLE_EQ(test_support::h100().network_efficiency, 0.94);
  const double rate = 47e9 * 12 / 11;
  const double bytes = 1e9;
  Program p;
  Op transfer = latency_collective(0);
  transfer.op = collectives::CollectiveOp::kAllGather;
  transfer.bytes = static_cast<int64_t>(bytes);
  transfer.alone_Bps = rate;
  transfer.transfer_ns = static_cast<int64_t>(bytes / rate * 1e9);
  add(p, transfer);
  finish(p);
  EngineOptions options;
  const int64_t healthy_ns =
      run_program(p, mesh(12), healthy, test_support::h100(), options).step_end_ns;
  EXPECT_NEAR(static_cast<double>(healthy_ns), bytes / rate * 1e9, 1.0);  // 21.28 ms
  options.healthy_fabric = &healthy;
  EXPECT_NEAR(
      static_cast<double>(
          run_program(p, mesh(12), degraded, test_support::h100(), options).step_end_ns),
      2 * bytes / rate * 1e9, 1.0);
  // Without the healthy reference the engine cannot tell a lost link from
  // a fabric the tuner priced: the tuner's rate.
  EXPECT_EQ(run_program(p, mesh(12), degraded, test_support::h100(), {}).step_end_ns, healthy_ns);
}

// A ring exchange on the context-parallel group of 4 ranks: each rank sends
// to the next member and receives from the previous one (rank 0 from rank
// 3, around the ring's end), each pair starting when both of its ranks got
// there. Rank 2 computes 3x slower, so the pairs (1, 2) and (2, 3) start at
// 3000 and (3, 0), (0, 1) at 1000, all taking the same time.
TEST(Engine, RingExchangePairsEachRankWithItsGroupNeighbours) {
  Program p;
  add(p, segment(1000, 0, 1000));
  Op send;
  send.kind = OpKind::kSend;
  send.stream = 1;
  send.peer = 1;
  send.peer_role = GroupRole::kCp;
  send.tag = 2;
  send.bytes = int64_t{1} << 20;
  send.exposed = step_accounts::kExposedCp;
  add(p, send, {Dep{kComputeStream, 0}});
  Op recv = send;
  recv.kind = OpKind::kRecv;
  recv.stream = 2;
  recv.peer = -1;
  add(p, recv, {Dep{kComputeStream, 0}});
  add(p, segment(500, 0, 500), {Dep{2, 0}});
  finish(p);
  Layout l;
  l.world = 4;
  l.shard = 4;
  l.cp = 4;
  EngineOptions options;
  options.stragglers = {Straggler{2, 3.0}};
  options.trace_ranks = {0, 3};
  static const topology::Cluster cluster = test_support::hgx_h100(1);
  const EngineResult r = run_program(p, l, cluster, test_support::h100(), options);
  std::vector<const TraceRecord*> exchanges;
  for (const TraceRecord& t : r.trace) {
    if (t.track == "comm") exchanges.push_back(&t);
  }
  // Each traced rank's send and receive.
  ASSERT_EQ(exchanges.size(), 4u);
  int64_t duration = -1;
  for (const TraceRecord* t : exchanges) {
    const int64_t start = t->start.count_ns();
    // Rank 0's pair with rank 3 and its own with rank 1 start at 1000; rank
    // 3's receive from rank 2 at 3000, its send to rank 0 at 1000.
    EXPECT_TRUE(start == 1000 || (t->rank == 3 && start == 3000)) << t->rank << " " << start;
    if (duration < 0) duration = t->duration.count_ns();
    EXPECT_EQ(t->duration.count_ns(), duration);
  }
  EXPECT_GT(duration, 0);
  // Rank 2 receives from rank 1 at 3000 and computes 1500 after.
  EXPECT_EQ(r.step_end_ns, 3000 + duration + 1500);
  EXPECT_EQ(r.slowest_rank, 2);
}

// A copy-engine transfer (async TP's copies) takes no SMs: beside it the
// compute runs at full speed, where an NCCL send of the same bytes slows it
// (comm_overlap_slowdown 2) once it moves (after the tuner's latency).
TEST(Engine, CopyEngineTransfersDoNotSlowCompute) {
  for (const bool copy_engine : {true, false}) {
    Program p;
    Op send;
    send.kind = OpKind::kSend;
    send.stream = 1;
    send.peer = 1;
    send.peer_role = GroupRole::kTp;
    send.tag = 3;
    send.bytes = int64_t{64} << 20;  // hundreds of us, beside 100 us of compute
    send.copy_engine = copy_engine;
    add(p, send);
    Op recv = send;
    recv.kind = OpKind::kRecv;
    recv.stream = 2;
    recv.peer = -1;
    add(p, recv);
    add(p, segment(100000, 0, 100000));
    finish(p);
    Layout l;
    l.world = 2;
    l.shard = 2;
    l.tp = 2;
    EngineOptions options;
    options.comm_overlap_slowdown = 2.0;
    static const topology::Cluster cluster = test_support::hgx_h100(1);
    const EngineResult r = run_program(p, l, cluster, test_support::h100(), options);
    // Each rank's 100 us of work takes 100 us beside copies, longer beside NCCL.
    if (copy_engine) {
      EXPECT_EQ(r.summed_accounts[kCompute], 200000);
    } else {
      EXPECT_GT(r.summed_accounts[kCompute], 200000 + 100000);
    }
  }
}

TEST(Engine, SegmentsNothingElseWaitsOnRunAsOneChainWithOneLook) {
  // c0 (1,000 ns) then c1 (500 ns, issued by the host at 1,200 with a
  // 10 ns first launch): c1 starts at 1,210 and ends at 1,710, the 210 ns
  // between launch-bound. No other stream or host gate waits on c0, and
  // c1's dependencies hold from the start, so one look (at 1,710) ends
  // both.
  Program p;
  add(p, segment(1000, 0, 1000));
  add(p, segment(500, 10, 510, /*host_start_ns=*/1200));
  finish(p);
  const EngineResult r = run(p, 1);
  EXPECT_EQ(r.step_end_ns, 1710);
  EXPECT_EQ(r.summed_accounts[kCompute], 1500);
  EXPECT_EQ(r.summed_accounts[kLaunchBound], 210);
  EXPECT_EQ(r.events, 1u);
  EXPECT_EQ(r.stats.segment_ends, 1u);
  EXPECT_EQ(r.stats.chained_ends, 1u);
}

TEST(Engine, ATransferStartingOnTheRankBreaksTheChainIntoItsLooks) {
  // transfer_beside_compute() with a second segment of 1,000 ns after the
  // first: the chain planned at 0 breaks when the transfer begins (at 0,
  // after the segments started); c0 then runs as alone: a look at 1,000
  // finds 500 ns of work left (half speed beside the transfer), the next
  // ends it at 1,500, and c1 runs to 2,500. Per timeline (the two identical
  // ranks, or each with --explicit): the chain's look goes stale, three
  // looks are delivered, none ends a segment inside a chain.
  EngineOptions options;
  options.comm_overlap_slowdown = 2.0;
  for (const bool explicit_ranks : {false, true}) {
    SCOPED_TRACE(explicit_ranks ? "one timeline per rank" : "one timeline");
    options.explicit_ranks = explicit_ranks;
    const EngineResult r = run(transfer_beside_compute(1000), 2, options);
    const uint64_t timelines = explicit_ranks ? 2 : 1;
    EXPECT_EQ(r.step_end_ns, 2500);
    EXPECT_EQ(r.summed_accounts[kCompute], 5000);
    EXPECT_EQ(r.stats.segment_ends, 2 * timelines);
    EXPECT_EQ(r.stats.relooks, timelines);
    EXPECT_EQ(r.stats.stale_looks, timelines);
    EXPECT_EQ(r.stats.chained_ends, 0u);
    EXPECT_EQ(r.events, 2 + 3 * timelines);
  }
}

Op local(uint8_t stream, int64_t duration_ns) {
  Op op;
  op.kind = OpKind::kLocal;
  op.stream = stream;
  op.duration_ns = duration_ns;
  return op;
}

TEST(Engine, AnOpWaitingOnTwoStreamsStartsWhenTheLaterOfItsOpsEnds) {
  // compute: c0 (100 ns), c1 (1,000 ns) after X. copy: L0 (300 ns), L1
  // (50 ns) after c0. cpu: X (10 ns) after c0 and L1. c0 ends at 100, when
  // L1 is not yet next on its stream and X still waits for L1; L0 ends at
  // 300, L1 runs to 350, X to 360, c1 to 1,360. An engine that tried only
  // the ops waiting on the op that just ended, or forgot an op waiting on
  // an op that ended earlier, would stall here.
  constexpr uint8_t kCopy = 4;
  constexpr uint8_t kCpu = 5;
  Program p;
  add(p, segment(100, 0, 100));
  add(p, local(kCopy, 300));
  add(p, local(kCopy, 50), {Dep{kComputeStream, 0}});
  add(p, local(kCpu, 10), {Dep{kComputeStream, 0}, Dep{kCopy, 1}});
  add(p, segment(1000, 0, 1000), {Dep{kCpu, 0}});
  finish(p);
  const EngineResult r = run(p, 1);
  EXPECT_EQ(r.step_end_ns, 1360);
  EXPECT_EQ(r.summed_accounts[kCompute], 1100);
  EXPECT_EQ(r.stats.local_ends, 3u);
  EXPECT_EQ(r.stats.segment_ends, 2u);
}

TEST(Engine, ADependencyCycleIsAnInvariantFailureNotAHang) {
  Program p;
  add(p, segment(100, 0, 100), {Dep{kComm, 0}});
  add(p, latency_collective(10), {Dep{kComputeStream, 0}});
  finish(p);
  EXPECT_THROW(run(p, 2), sim::InvariantError);
}

}  // namespace
}  // namespace clustersim::workloads
