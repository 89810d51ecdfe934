// Context parallelism end to end: the mesh's context-parallel groups, the
// ring's exchanges in a block's schedule (counts and bytes by hand), and
// steps that run with either rotate method.
#include <gtest/gtest.h>

#include "exec/mesh_layout.h"
#include "tests/support/one_node_step.h"
#include "tests/support/step_fixtures.h"
#include "workloads/model/memory_model.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::workloads {
namespace {

TEST(ContextParallelMesh, CpGroupsAreConsecutiveMembersOfAShardGroup) {
  // [replica 2, dp_shard 2, cp 2, tp 2] on 16 ranks: the shard group (4
  // ranks) holds two cp groups.
  Layout l;
  l.world = 16;
  l.tp = 2;
  l.shard = 4;
  l.cp = 2;
  l.replica = 2;
  EXPECT_EQ(l.group_count(GroupRole::kCp), 8);
  EXPECT_EQ(l.group_size(GroupRole::kCp), 2);
  // Rank 5: tp index 1, shard index 2 = dp_shard 1 x cp 0.
  EXPECT_EQ(l.group_of(GroupRole::kCp, 5), 3);
  EXPECT_EQ(l.member(GroupRole::kCp, 3, 0), 5);
  EXPECT_EQ(l.member(GroupRole::kCp, 3, 1), 7);
  EXPECT_EQ(l.index_in_group(GroupRole::kCp, 7), 1);
  EXPECT_EQ(l.ring_neighbor(GroupRole::kCp, 5, 1), 7);
  EXPECT_EQ(l.ring_neighbor(GroupRole::kCp, 7, 1), 5);  // around the ring
  EXPECT_EQ(l.ring_neighbor(GroupRole::kCp, 5, -1), 7);
  // The second replica: rank 13 with rank 15.
  EXPECT_EQ(l.group_of(GroupRole::kCp, 13), 7);
  EXPECT_EQ(l.member(GroupRole::kCp, 7, 1), 15);
  // The shard group is unchanged: dp_shard x cp ranks with the same tp index.
  EXPECT_EQ(l.member(GroupRole::kShard, l.group_of(GroupRole::kShard, 5), 0), 1);
  // Every rank is in the cp group it names, at the index it names.
  for (int64_t r = 0; r < l.world; ++r) {
    const int64_t g = l.group_of(GroupRole::kCp, r);
    EXPECT_EQ(l.member(GroupRole::kCp, g, l.index_in_group(GroupRole::kCp, r)), r);
  }
}

// small_spec's model on 2 blocks, the sequence (2048 cp tokens) over the cp
// ranks of one shard group (FULL_SHARD over them), full checkpointing.
WorkloadSpec cp_spec(int64_t cp, CpRotateMethod method, int64_t tp = 1) {
  WorkloadSpec w = test_support::small_spec(cp * tp, cp);
  w.model.layers = 2;
  w.seq_len = 2048 * cp;
  w.tp = tp;
  w.cp = cp;
  w.cp_rotate = method;
  w.world_size = cp * tp;
  w.dp_size = cp;
  w.replica_group_size = 1;
  w.activation_checkpointing = ActivationCheckpointing::kFull;
  return w;
}

struct CpTasks {
  int64_t gathers = 0, sends = 0, recvs = 0;
  int64_t gather_bytes = 0, send_bytes = 0;
};
CpTasks cp_tasks(const FsdpSchedule& s) {
  CpTasks c;
  for (const Task& t : s.tasks) {
    if (t.group != GroupRole::kCp) continue;
    if (t.kind == TaskKind::kAllGather) {
      ++c.gathers;
      c.gather_bytes += t.bytes;
    }
    if (t.kind == TaskKind::kSend) {
      ++c.sends;
      c.send_bytes += t.bytes;
      EXPECT_EQ(t.peer_stage, 1);
    }
    if (t.kind == TaskKind::kRecv) {
      ++c.recvs;
      EXPECT_EQ(t.peer_stage, -1);
    }
  }
  return c;
}

TEST(ContextParallelSchedule, AllGatherOnceAPassAndTheGradientRing) {
  const FsdpSchedule s = build_fsdp_schedule(cp_spec(2, CpRotateMethod::kAllGather));
  // One rank's K and V: 2 x 2048 tokens x 16 heads x 128 x 2 bytes.
  EXPECT_EQ(s.cp_kv_bytes, 2 * 2048 * 2048 * 2);
  EXPECT_EQ(s.cp_kv_grad_bytes, 2 * 2048 * 2048 * 4);
  const CpTasks c = cp_tasks(s);
  // Per block: forward, recomputation and backward gather once each.
  EXPECT_EQ(c.gathers, 2 * 3);
  EXPECT_EQ(c.gather_bytes, 6 * 2 * s.cp_kv_bytes);  // nccl-tests: the output, cp x input
  // The backward passes dK, dV on after each of its cp steps.
  EXPECT_EQ(c.sends, 2 * 2);
  EXPECT_EQ(c.recvs, 2 * 2);
  EXPECT_EQ(c.send_bytes, 4 * s.cp_kv_grad_bytes);
}

TEST(ContextParallelSchedule, AllToAllRingPassesKeysAndValuesEveryStep) {
  const FsdpSchedule s = build_fsdp_schedule(cp_spec(4, CpRotateMethod::kAllToAll));
  const CpTasks c = cp_tasks(s);
  EXPECT_EQ(c.gathers, 0);
  // Per block: cp - 1 K/V passes in the forward, the recomputation and the
  // backward, and cp K/V-gradient passes in the backward.
  EXPECT_EQ(c.sends, 2 * (3 * 3 + 4));
  EXPECT_EQ(c.send_bytes, 2 * (9 * s.cp_kv_bytes + 4 * s.cp_kv_grad_bytes));
  EXPECT_EQ(c.recvs, c.sends);
}

StepResult simulate(const WorkloadSpec& w) { return test_support::simulate_on_one_node(w); }

TEST(ContextParallelStep, BothRotateMethodsRunWithTheSameKernels) {
  for (const int64_t tp : {1, 2}) {
    const StepResult gather = simulate(cp_spec(2, CpRotateMethod::kAllGather, tp));
    const StepResult ring = simulate(cp_spec(2, CpRotateMethod::kAllToAll, tp));
    ASSERT_GT(gather.step_time_s, 0) << tp;
    ASSERT_GT(ring.step_time_s, 0) << tp;
    EXPECT_GT(gather.breakdown.exposed_cp_s + gather.breakdown.sync_wait_s, 0) << tp;
    // The ranks' tokens: seq_len / cp per step, shared by the tp ranks.
    EXPECT_NEAR(gather.tokens_per_s_per_gpu * gather.step_time_s, 2048.0 / static_cast<double>(tp),
                1e-6)
        << tp;
    // The same kernels either way: compute differs only by SM sharing with
    // transfers, at most the profile's slowdown on the overlapped part.
    EXPECT_NEAR(gather.breakdown.compute_s, ring.breakdown.compute_s,
                0.1 * gather.breakdown.compute_s)
        << tp;
  }
}

TEST(ContextParallelMemory, TheRingsBuffersJoinABlocksBackward) {
  WorkloadSpec w = cp_spec(2, CpRotateMethod::kAllGather);
  w.model.vocab = 256;  // the loss's peak below the block's backward
  const ActivationBreakdown a = activation_breakdown(w);
  // T = 2048 tokens at Q = 2048: the gathered K and V (cp x 2 T Q x 2) and
  // 28 T Q bytes of fp32 gradients and ring buffers.
  const int64_t tq = int64_t{2048} * 2048;
  EXPECT_EQ(a.ring, 2 * 2 * tq * 2 + 28 * tq);
  w.cp_rotate = CpRotateMethod::kAllToAll;
  EXPECT_EQ(activation_breakdown(w).ring, 2 * 2 * tq * 2 + 28 * tq);
  w.cp = 4;
  w.seq_len = 8192;
  w.shard_group_size = w.dp_size = 4;
  EXPECT_EQ(activation_breakdown(w).ring, 2 * 2 * tq * 2 + 28 * tq);
  w.cp_rotate = CpRotateMethod::kAllGather;
  EXPECT_EQ(activation_breakdown(w).ring, 4 * 2 * tq * 2 + 28 * tq);
  // K and V at the model's 8 KV heads (width 1024) in the ring.
  w.cp_kv_heads = CpKvHeads::kModel;
  EXPECT_EQ(activation_breakdown(w).ring, 4 * 2 * tq / 2 * 2 + 4 * tq + 24 * tq / 2);
  w.cp_kv_heads = CpKvHeads::kQuery;
  EXPECT_EQ(activation_breakdown(w).total, activation_breakdown(w).layers +
                                               activation_breakdown(w).block_recompute +
                                               2048 * 2048 * 2 + activation_breakdown(w).ring);
}

}  // namespace
}  // namespace clustersim::workloads
