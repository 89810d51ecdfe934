// export_step of pipelined and context-parallel steps: each stage's graph
// with its sends and receives (peers, tags and sizes by hand), peers that
// follow the mesh order, and CP's ring between cp neighbours. That they
// replay to the step simulator's time: chakra_export_test.cc's round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "tests/support/step_fixtures.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/model/compute_model.h"

namespace clustersim::workloads::chakra {
namespace {

using test_support::h100;
using test_support::hgx_h100;
using test_support::small_spec;

// small_spec's blocks (hidden 2048), 8 of them over 4 stages of 2 ranks,
// 8 micro-batches of one 2048-token sequence.
WorkloadSpec four_stages(PipelineSchedule schedule) {
  WorkloadSpec w = small_spec(8, 2);
  w.model.layers = 8;
  w.pp = 4;
  w.grad_accum = 8;
  w.pipeline_schedule = schedule;
  w.dp_size = 2;
  w.replica_group_size = 1;
  w.strategy = ShardingStrategy::kFullShard;
  return w;
}

StepConfig config_for(const WorkloadSpec& w) {
  StepConfig c;
  c.workload = w;
  c.compute = compute_spec_from_profile(h100());
  return c;
}

// (send?, peer, tag) -> (count, bytes of each) of rank's send/recv nodes.
using P2pCounts = std::map<std::tuple<bool, int64_t, int64_t>, std::pair<int, int64_t>>;

P2pCounts p2p_of(const StepExporter& e, int64_t rank) {
  P2pCounts out;
  for (const Node& n : e.trace(rank).nodes) {
    const bool send = n.type == static_cast<int32_t>(NodeType::kCommSend);
    if (!send && n.type != static_cast<int32_t>(NodeType::kCommRecv)) continue;
    EXPECT_EQ(send ? *n.comm_src : *n.comm_dst, rank) << n.name;
    auto& [count, bytes] = out[{send, send ? *n.comm_dst : *n.comm_src, n.comm_tag.value_or(-1)}];
    ++count;
    bytes = *n.comm_size;
  }
  return out;
}

// One activation: local_batch 1 x 2048 tokens x hidden 2048 in bf16.
constexpr int64_t kActivationBytes = 2048 * 2048 * 2;

TEST(ChakraExportP2p, EachStageSendsItsActivationsOnAndGradientsBack) {
  const StepExporter e(hgx_h100(1), h100(), config_for(four_stages(PipelineSchedule::k1F1B)));
  ASSERT_EQ(e.stage_count(), 4);
  // Rank 2 is stage 1 (ranks 2 and 3): activations from rank 0, on to rank
  // 4; gradients from rank 4, back to rank 0. Tags: 0 activations, 1
  // gradients.
  const P2pCounts middle = {{{false, 0, 0}, {8, kActivationBytes}},
                            {{true, 4, 0}, {8, kActivationBytes}},
                            {{false, 4, 1}, {8, kActivationBytes}},
                            {{true, 0, 1}, {8, kActivationBytes}}};
  EXPECT_EQ(p2p_of(e, 2), middle);
  // The first stage only sends activations and receives gradients.
  const P2pCounts first = {{{true, 2, 0}, {8, kActivationBytes}},
                           {{false, 2, 1}, {8, kActivationBytes}}};
  EXPECT_EQ(p2p_of(e, 0), first);
  // The last stage (ranks 6, 7) holds the head and the loss: a graph of its own.
  EXPECT_NE(e.nodes_per_rank(3), e.nodes_per_rank(1));
  const P2pCounts last = {{{false, 5, 0}, {8, kActivationBytes}},
                          {{true, 5, 1}, {8, kActivationBytes}}};
  EXPECT_EQ(p2p_of(e, 7), last);
}

TEST(ChakraExportP2p, PeersFollowTheMeshOrder) {
  WorkloadSpec w = four_stages(PipelineSchedule::kGpipe);
  // dp_shard outermost: rank r is stage r % 4, so stage 1's rank 5 (dp_shard
  // 1) hears from rank 4 and sends on to rank 6.
  ASSERT_EQ(parse_mesh_order("dp_shard pp dp_replicate cp tp", &w.mesh_order), "");
  const StepExporter e(hgx_h100(1), h100(), config_for(w));
  const P2pCounts expected = {{{false, 4, 0}, {8, kActivationBytes}},
                              {{true, 6, 0}, {8, kActivationBytes}},
                              {{false, 6, 1}, {8, kActivationBytes}},
                              {{true, 4, 1}, {8, kActivationBytes}}};
  EXPECT_EQ(p2p_of(e, 5), expected);
  // Its shard group is ranks 1 and 5.
  CommGroups groups;
  e.add_groups(5, groups);
  bool found = false;
  for (const auto& [id, members] : groups) found |= members == std::vector<int64_t>{1, 5};
  EXPECT_TRUE(found);
}

TEST(ChakraExportP2p, TheCpRingRunsBetweenNeighbours) {
  WorkloadSpec w = small_spec(8, 8);
  w.cp = 4;
  w.cp_rotate = CpRotateMethod::kAllToAll;
  const StepExporter e(hgx_h100(1), h100(), config_for(w));
  // Rank 0's cp group is ranks 0-3: it sends to rank 1, receives from rank
  // 3, all on the ring's tag 2, K/V blocks and their fp32 gradients.
  const P2pCounts p2p = p2p_of(e, 0);
  ASSERT_EQ(p2p.size(), 2u);
  EXPECT_TRUE(p2p.contains({true, 1, 2}));
  EXPECT_TRUE(p2p.contains({false, 3, 2}));
  EXPECT_EQ(p2p.at({true, 1, 2}).first, p2p.at({false, 3, 2}).first);
  EXPECT_EQ(p2p_of(e, 6).count({true, 7, 2}), 1u);
  EXPECT_EQ(p2p_of(e, 7).count({true, 4, 2}), 1u);  // around the ring
}

// Async TP 4 x FSDP 2 (compiled): rank 0's TP group is ranks 0-3; each
// all-gathered GEMM sends rank 0's chunk to the peers 1, 2, 3 on and takes
// theirs from 3, 2, 1 back, as many each way, one activation chunk each,
// every copy marked as a copy engine's (no SMs taken); nothing else is a
// send or a receive.
TEST(ChakraExportP2p, AsyncTpCopiesGoAroundTheTpRingOnCopyEngines) {
  const StepExporter e(hgx_h100(1), h100(), config_for(test_support::tp_spec(8, 4, true)));
  const P2pCounts p2p = p2p_of(e, 0);
  ASSERT_EQ(p2p.size(), 6u);
  const int count = p2p.begin()->second.first;
  EXPECT_GT(count, 0);
  for (const int64_t peer : {1, 2, 3}) {
    for (const bool send : {true, false}) {
      const auto it = std::find_if(p2p.begin(), p2p.end(), [&](const auto& kv) {
        return std::get<0>(kv.first) == send && std::get<1>(kv.first) == peer;
      });
      ASSERT_NE(it, p2p.end()) << send << " " << peer;
      EXPECT_EQ(it->second.first, count) << send << " " << peer;
    }
  }
  // One chunk: a quarter of the tokens (2048 / 4 = 512) x hidden 2048 in bf16.
  for (const auto& [key, value] : p2p) EXPECT_EQ(value.second, 512 * 2048 * 2);
  int copies = 0;
  for (const Node& n : e.trace(0).nodes) {
    if (n.type != static_cast<int32_t>(NodeType::kCommSend) &&
        n.type != static_cast<int32_t>(NodeType::kCommRecv)) {
      continue;
    }
    ++copies;
    EXPECT_EQ(n.copy_engine.value_or(0), 1) << n.name;
    EXPECT_EQ(n.kernel_class.value_or(""), "tp") << n.name;
  }
  EXPECT_EQ(copies, 6 * count);
}

}  // namespace
}  // namespace clustersim::workloads::chakra
