// Pipeline parallelism end to end: the stages' schedules (sends, receives,
// one gradient reduction per step), the mesh's groups with a pp dim, and
// simulated steps whose bubble follows the pipeline formula.
#include <gtest/gtest.h>

#include <algorithm>

#include "exec/mesh_layout.h"
#include "workloads/model/memory_model.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_simulator.h"
#include "tests/support/step_fixtures.h"

namespace clustersim::workloads {
namespace {

using test_support::h100;
using test_support::hgx_h100;

// small_spec's blocks, 8 of them, a vocab of 256 (an embedding and head that
// cost next to nothing, so the stages are alike), FULL_SHARD over 2 ranks of
// each of pp stages.
WorkloadSpec pipeline_spec(int64_t pp, int64_t microbatches, PipelineSchedule schedule) {
  WorkloadSpec w = test_support::small_spec(2 * pp, 2);
  w.model.layers = 8;
  w.model.vocab = 256;
  w.pp = pp;
  w.grad_accum = microbatches;
  w.pipeline_schedule = schedule;
  w.dp_size = 2;
  w.replica_group_size = 1;
  w.strategy = ShardingStrategy::kFullShard;
  return w;
}

int64_t count(const FsdpSchedule& s, TaskKind kind, int8_t peer) {
  int64_t n = 0;
  for (const Task& t : s.tasks) n += t.kind == kind && t.peer_stage == peer ? 1 : 0;
  return n;
}

TEST(PipelineSchedule, StagesSendAndReceiveEachMicrobatchOnce) {
  const WorkloadSpec w = pipeline_spec(4, 6, PipelineSchedule::k1F1B);
  for (int64_t stage = 0; stage < 4; ++stage) {
    FsdpScheduleOptions o;
    o.stage = stage;
    const FsdpSchedule s = build_fsdp_schedule(w, o);
    const int64_t later = stage < 3 ? 6 : 0;    // there is a next stage
    const int64_t earlier = stage > 0 ? 6 : 0;  // there is a previous stage
    EXPECT_EQ(count(s, TaskKind::kSend, +1), later) << stage;
    EXPECT_EQ(count(s, TaskKind::kRecv, +1), later) << stage;
    EXPECT_EQ(count(s, TaskKind::kRecv, -1), earlier) << stage;
    EXPECT_EQ(count(s, TaskKind::kSend, -1), earlier) << stage;
    // Two blocks a stage, the root on the ends: each gathered once and
    // reduced once per step, whatever the micro-batches.
    const int64_t units = 2 + (stage == 0 || stage == 3 ? 1 : 0);
    EXPECT_EQ(s.count(TaskKind::kAllGather), units) << stage;
    EXPECT_EQ(s.count(TaskKind::kReduceScatter), units) << stage;
    // One micro-batch's activation of one rank: 2048 tokens x 2048 x 2 bytes.
    EXPECT_EQ(s.pipeline_bytes, 2048 * 2048 * 2);
  }
}

TEST(PipelineMesh, StagesAreTheOutermostDim) {
  Layout l;
  l.world = 32;
  l.tp = 2;
  l.shard = 4;
  l.replica = 2;
  l.pp = 2;
  EXPECT_EQ(l.group_count(GroupRole::kShard), 8);
  EXPECT_EQ(l.group_count(GroupRole::kPp), 16);
  // Rank 21 = stage 1, in-stage rank 5: tp index 1, shard index 2, replica 0.
  EXPECT_EQ(l.stage_of(21), 1);
  EXPECT_EQ(l.group_of(GroupRole::kShard, 21), 5);
  EXPECT_EQ(l.member(GroupRole::kShard, 5, 2), 21);
  EXPECT_EQ(l.member(GroupRole::kShard, 5, 0), 17);
  EXPECT_EQ(l.group_of(GroupRole::kReplica, 21), 2 * 4 + 2 * 2 + 1);
  EXPECT_EQ(l.member(GroupRole::kReplica, 13, 1), 16 + 8 + 4 + 1);
  EXPECT_EQ(l.group_of(GroupRole::kPp, 21), 5);
  EXPECT_EQ(l.member(GroupRole::kPp, 5, 0), 5);
  EXPECT_EQ(l.member(GroupRole::kPp, 5, 1), 21);
  // Every rank is member group_of's index of its own group, for every role.
  for (const GroupRole role : {GroupRole::kShard, GroupRole::kReplica, GroupRole::kTp, GroupRole::kPp}) {
    for (int64_t r = 0; r < l.world; ++r) {
      const int64_t g = l.group_of(role, r);
      bool found = false;
      for (int64_t i = 0; i < l.group_size(role); ++i) found |= l.member(role, g, i) == r;
      EXPECT_TRUE(found) << group_role_name(role) << " " << r;
    }
  }
}

StepResult simulate(const WorkloadSpec& w, int64_t nodes = 1) {
  StepConfig c;
  c.workload = w;
  c.compute = compute_spec_from_profile(h100());
  c.compute.comm_overlap_slowdown = 1;
  c.compute.speed_variation = 0;
  c.host.kernel_launch = sim::SimTime::zero();
  c.host.graph_launch = sim::SimTime::zero();
  return simulate_step(hgx_h100(nodes), h100(), c);
}

TEST(PipelineStep, TheBubbleIsThePipelineFormulasShare) {
  // Alike stages of forward F and backward B: GPipe and 1F1B both take
  // (m + p - 1)(F + B), of which (p - 1)(F + B) idle on each stage: the
  // bubble is (p - 1) / (m + p - 1) of the step (Huang et al., GPipe,
  // arXiv:1811.06965; Narayanan et al., arXiv:2104.04473, sec. 2.2.1). The
  // stages are not quite alike (the ends hold the embedding and the head;
  // sends take tens of microseconds), and after the last backward every stage
  // waits at the gradient norm's all-reduce over the pipeline group for the
  // first stage's last reductions: within 3 points (no pipelining at all
  // would idle 3/4 of each stage).
  for (const PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::k1F1B}) {
    for (const int64_t m : {4, 8}) {
      const StepResult r = simulate(pipeline_spec(4, m, schedule));
      const double bubble = r.breakdown.pipeline_bubble_s / r.step_time_s;
      EXPECT_NEAR(bubble, 3.0 / static_cast<double>(m + 3), 0.03)
          << pipeline_schedule_name(schedule) << " m " << m;
      const StepBreakdown& b = r.breakdown;
      EXPECT_NEAR(b.compute_s + b.exposed_comm_s() + b.pipeline_bubble_s + b.sync_wait_s +
                      b.launch_bound_s + b.idle_s,
                  r.step_time_s, 1e-9);
    }
  }
}

TEST(PipelineStep, InterleavingShrinksTheBubbleByTheVirtualStages) {
  // v chunks per rank cut the bubble to (p - 1)(F + B) / v of m (F + B):
  // (p - 1) / (v m + p - 1) of the step (Narayanan et al., sec. 2.2), 3/19
  // for p 4, v 2, m 8; within 3 points as above. One rank a stage: no
  // gradient reduction, whose post-backward blocks a rank after its chunk's
  // last backward (below).
  WorkloadSpec w = pipeline_spec(4, 8, PipelineSchedule::kInterleaved1F1B);
  w.virtual_stages = 2;
  w.world_size = 4;
  w.dp_size = 1;
  w.shard_group_size = 1;
  const StepResult r = simulate(w);
  // 3.2 points over: twice the stage-to-stage sends of 1F1B, each with its
  // latency, over chunks half as long (H100's measured clock).
  EXPECT_NEAR(r.breakdown.pipeline_bubble_s / r.step_time_s, 3.0 / 19.0, 0.035);
  WorkloadSpec plain = pipeline_spec(4, 8, PipelineSchedule::k1F1B);
  plain.world_size = 4;
  plain.dp_size = 1;
  plain.shard_group_size = 1;
  EXPECT_LT(r.step_time_s, simulate(plain).step_time_s);
  // Each chunk's forward of each micro-batch is a forward of its own (where
  // the loop's host work per micro-batch falls): 2 x 8 on every stage.
  for (int64_t stage = 0; stage < 4; ++stage) {
    FsdpScheduleOptions o;
    o.stage = stage;
    EXPECT_EQ(build_fsdp_schedule(w, o).forward_begins.size(), 16u) << stage;
  }
}

// Where stage 0's gradient reductions sit in its schedule (8 micro-batches
// of 1F1B on 4 stages, FSDP2): the reduce-scatters' units in task order,
// the first one's index and the stage's last backward kernel's (copy-ins
// aside). With chained, each copy-in must wait for the reduce-scatter
// before it.
struct Reductions {
  std::vector<int32_t> units;
  int32_t first = -1;
  int32_t last_backward_kernel = -1;
};

Reductions stage0_reductions(bool during_last_backward, bool chained) {
  WorkloadSpec w = pipeline_spec(4, 8, PipelineSchedule::k1F1B);
  w.fsdp_version = 2;
  w.reduce_during_last_backward = during_last_backward;
  FsdpScheduleOptions o;
  o.stage = 0;
  const FsdpSchedule s = build_fsdp_schedule(w, o);
  Reductions r;
  int32_t previous = -1;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    const bool copy_in = t.kernel != kNoKernel && (t.kernel == s.block_reduce_copy_in ||
                                                   t.kernel == s.root_reduce_copy_in);
    if (chained && copy_in && previous >= 0) {
      const auto deps = s.deps_of(i);
      EXPECT_NE(std::find(deps.begin(), deps.end(), previous), deps.end()) << i;
    }
    if (t.kind == TaskKind::kKernel && t.phase == Phase::kBackward && !copy_in) {
      r.last_backward_kernel = i;
    }
    if (t.kind != TaskKind::kReduceScatter) continue;
    EXPECT_EQ(t.micro_batch, 7);
    if (r.first < 0) r.first = i;
    r.units.push_back(t.unit);
    previous = i;
  }
  return r;
}

TEST(PipelineStep, PostBackwardReducesAStagesGradientsAfterItsLastBackward) {
  // torch.distributed.pipelining runs FSDP2's post-backward once a stage's
  // last backward is done: every unit's reduce-scatter in module order (the
  // root, then the blocks), each copy-in waiting for the previous unit's
  // reduce-scatter. Stage 0 holds the root (the embedding) and blocks 0 and 1.
  const Reductions r = stage0_reductions(/*during_last_backward=*/false, /*chained=*/true);
  EXPECT_EQ(r.units, (std::vector<int32_t>{kRootUnit, 0, 1}));
  EXPECT_GT(r.first, r.last_backward_kernel);
}

TEST(PipelineStep, MegatronReducesEachUnitDuringTheLastBackward) {
  // Megatron-Core's --overlap-grad-reduce (grad_reduction during_last_backward):
  // in the last micro-batch's backward each unit's reduce-scatter follows its
  // own gradients, in backward order (stage 0: block 1, block 0, then the
  // embedding's root), before the stage's last backward kernel is issued.
  const Reductions r = stage0_reductions(/*during_last_backward=*/true, /*chained=*/false);
  EXPECT_EQ(r.units, (std::vector<int32_t>{1, 0, kRootUnit}));
  EXPECT_LT(r.first, r.last_backward_kernel);

  // Over a network (4 nodes: each stage's shard group of 16 spans two), the
  // reductions overlapped with the last backward leave less of the step
  // waiting on them, and the step is shorter.
  WorkloadSpec net = pipeline_spec(2, 4, PipelineSchedule::k1F1B);
  net.world_size = 32;
  net.dp_size = 16;
  net.shard_group_size = 16;
  const StepResult deferred = simulate(net, 4);
  net.reduce_during_last_backward = true;
  const StepResult overlapped = simulate(net, 4);
  EXPECT_LT(overlapped.breakdown.exposed_reduce_scatter_s + overlapped.breakdown.sync_wait_s,
            deferred.breakdown.exposed_reduce_scatter_s + deferred.breakdown.sync_wait_s);
  EXPECT_LT(overlapped.step_time_s, deferred.step_time_s);
}

TEST(PipelineStep, ZeroBubbleFillsTheBubbleWithWeightGradients) {
  // ZBV on 4 stages x 2 chunks (8 layers: one block a chunk), 8 micro-batches:
  // the weight gradients run where 1F1B idles. Its bubble is not zero (the
  // halves of a backward are not the forward's time each, rank 0 holds both
  // the embedding and the head), but well under 1F1B's 3/11.
  WorkloadSpec zbv = pipeline_spec(4, 8, PipelineSchedule::kZbv);
  zbv.virtual_stages = 2;
  const StepResult z = simulate(zbv);
  const StepResult plain = simulate(pipeline_spec(4, 8, PipelineSchedule::k1F1B));
  const double z_bubble = z.breakdown.pipeline_bubble_s / z.step_time_s;
  const double plain_bubble = plain.breakdown.pipeline_bubble_s / plain.step_time_s;
  EXPECT_LT(z_bubble, 0.5 * plain_bubble);
  EXPECT_LT(z.step_time_s, plain.step_time_s);
  // Every kernel still runs once: the same compute as 1F1B's.
  EXPECT_NEAR(z.breakdown.compute_s, plain.breakdown.compute_s, 1e-3 * plain.breakdown.compute_s);
}

// 8 stages over 16 layers, 16 micro-batches, 2 chunks a rank for the V
// schedules.
WorkloadSpec eight_stages(PipelineSchedule schedule) {
  WorkloadSpec w = pipeline_spec(8, 16, schedule);
  w.model.layers = 16;
  w.virtual_stages = v_shaped(schedule) ? 2 : 1;
  return w;
}

TEST(PipelineStep, DualPipeVFillsTheBubbleAsZbvDoes) {
  // DualPipeV on 8 stages x 2 chunks (16 layers), 16 micro-batches: it
  // finishes (its sends alternate between both neighbours), runs every
  // kernel once (1F1B's compute) and idles well under 1F1B's 7/23.
  const StepResult d = simulate(eight_stages(PipelineSchedule::kDualPipeV), 2);
  const StepResult p = simulate(eight_stages(PipelineSchedule::k1F1B), 2);
  EXPECT_NEAR(d.breakdown.compute_s, p.breakdown.compute_s, 1e-3 * p.breakdown.compute_s);
  EXPECT_LT(d.breakdown.pipeline_bubble_s / d.step_time_s,
            0.5 * p.breakdown.pipeline_bubble_s / p.step_time_s);
  EXPECT_LT(d.step_time_s, p.step_time_s);
}

TEST(PipelineStep, ZbvOnEightStagesFinishes) {
  // 8 stages x 2 chunks, 16 micro-batches: the order sends to the next and
  // the previous rank in turns; with one FIFO per channel (per peer and
  // kind) no send waits behind another's peer, so the step finishes (it
  // deadlocked while a rank's activation sends shared one stream).
  const StepResult z = simulate(eight_stages(PipelineSchedule::kZbv), 2);
  const StepResult p = simulate(eight_stages(PipelineSchedule::k1F1B), 2);
  EXPECT_LT(z.breakdown.pipeline_bubble_s, p.breakdown.pipeline_bubble_s);
  EXPECT_NEAR(z.breakdown.compute_s, p.breakdown.compute_s, 1e-3 * p.breakdown.compute_s);
}

TEST(PipelineStep, ALayerSplitMovesWorkBetweenStages) {
  // 8 blocks on 4 stages as 3, 2, 2, 1 instead of 2 each: stage 0 has the
  // most work, and 1F1B's step is bound by its slowest stage, so it grows;
  // stage 0's schedule holds three blocks' parameters.
  const WorkloadSpec even = pipeline_spec(4, 8, PipelineSchedule::k1F1B);
  WorkloadSpec uneven = even;
  uneven.layers_per_chunk = {3, 2, 2, 1};
  EXPECT_GT(simulate(uneven).step_time_s, simulate(even).step_time_s);
  const FsdpSchedule s = build_fsdp_schedule(uneven);
  EXPECT_EQ(s.chunks.front().blocks(), 3);
  EXPECT_EQ(s.count(TaskKind::kAllGather), 3 + 1);  // three blocks and the embedding's root
}

TEST(PipelineStep, OneFOneBHoldsFewerActivationsThanGpipe) {
  // Stage 0 holds p = 4 micro-batches under 1F1B, all m = 8 under GPipe.
  const WorkloadSpec gpipe = pipeline_spec(4, 8, PipelineSchedule::kGpipe);
  const WorkloadSpec one_f_one_b = pipeline_spec(4, 8, PipelineSchedule::k1F1B);
  const MemoryBreakdown g = stage_memory_breakdown(gpipe, 0);
  const MemoryBreakdown o = stage_memory_breakdown(one_f_one_b, 0);
  const ActivationBreakdown a = activation_breakdown(gpipe);
  EXPECT_EQ(g.activations - o.activations, (8 - 4) * 2 * a.block_stored);
  // The last stage holds one micro-batch under 1F1B, and the head's activations.
  const MemoryBreakdown last = stage_memory_breakdown(one_f_one_b, 3);
  EXPECT_EQ(last.activations, 2 * a.block_stored +
                                  std::max(a.head, a.block_recompute + 2048 * 2048 * 2));
  // The job's peak is the stage with the largest total, and says which.
  EXPECT_EQ(last.stage, 3);
  int64_t highest = 0;
  for (int64_t stage = 1; stage < 4; ++stage) {
    if (stage_memory_breakdown(one_f_one_b, stage).total() >
        stage_memory_breakdown(one_f_one_b, highest).total()) {
      highest = stage;
    }
  }
  EXPECT_EQ(memory_breakdown(one_f_one_b).stage, highest);
  EXPECT_EQ(memory_breakdown(one_f_one_b).total(),
            stage_memory_breakdown(one_f_one_b, highest).total());
}

TEST(PipelineSchedule, Fsdp2AccumulatesUnshardedGradientsInTheReduceDtype) {
  // Stage 1 of 4 (blocks 2, 3; no root), 3 micro-batches, fp32 reduction:
  // micro-batch 0 casts each block's bf16 gradient to fp32, 1 and 2 add it.
  WorkloadSpec w = pipeline_spec(4, 3, PipelineSchedule::k1F1B);
  w.reduce_dtype = Dtype::kFp32;
  FsdpScheduleOptions o;
  o.stage = 1;
  const FsdpSchedule s = build_fsdp_schedule(w, o);
  int64_t casts = 0;
  int64_t adds = 0;
  for (const Task& t : s.tasks) {
    casts += t.kernel == s.block_grad_cast ? 1 : 0;
    adds += t.kernel == s.block_grad_accumulate ? 1 : 0;
  }
  EXPECT_EQ(casts, 2);
  EXPECT_EQ(adds, 4);
  const double params = static_cast<double>(s.block_bytes) / 2;
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.block_grad_cast)].bytes, params * (2 + 4));
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.block_grad_accumulate)].bytes,
                   params * (2 + 4 + 4));
  // Memory: the stage's unsharded gradients in fp32 on top of the bf16 shard.
  WorkloadSpec bf16 = w;
  bf16.reduce_dtype = Dtype::kBf16;
  EXPECT_EQ(stage_memory_breakdown(w, 1).grads - stage_memory_breakdown(bf16, 1).grads,
            2 * (s.block_bytes / 2) * 2);
}

}  // namespace
}  // namespace clustersim::workloads
