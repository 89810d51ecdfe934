#include "workloads/schedules/fsdp_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "workloads/model/model_spec.h"
#include "workloads/model/transformer_kernels.h"

namespace clustersim::workloads {
namespace {

using ::testing::ElementsAre;

// A tiny Llama-style model: 2 blocks of hidden 64, under FSDP1 (gathered and
// reduced in place; FSDP2's copy kernels have their own tests below).
WorkloadSpec tiny_spec(int64_t layers = 2) {
  WorkloadSpec w;
  w.fsdp_version = 1;
  w.model.name = "custom";
  w.model.layers = layers;
  w.model.hidden = 64;
  w.model.heads = 4;
  w.model.kv_heads = 4;
  w.model.ffn_hidden = 128;
  w.model.vocab = 256;
  w.seq_len = 16;
  w.local_batch = 1;
  w.world_size = 8;
  w.dp_size = 8;
  w.shard_group_size = 8;
  w.replica_group_size = 1;
  w.grad_clip = false;  // GradientClippingRunsBeforeTheOptimizer covers it
  return w;
}

KernelConfig tiny_kernel_config() {
  KernelConfig c;
  c.seq_len = 16;
  c.micro_batch = 1;
  return c;
}

std::vector<int32_t> deps(const FsdpSchedule& s, int32_t i) {
  const std::span<const int32_t> d = s.deps_of(i);
  return {d.begin(), d.end()};
}

// The nth task (0-based) matching, or -1.
int32_t find(const FsdpSchedule& s, TaskKind kind, Phase phase, int32_t unit, int32_t mb = 0,
             int nth = 0) {
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind == kind && t.phase == phase && t.unit == unit && t.micro_batch == mb && nth-- == 0) {
      return i;
    }
  }
  return -1;
}

int32_t first_kernel(const FsdpSchedule& s, Phase phase, int32_t unit, int32_t mb = 0) {
  return find(s, TaskKind::kKernel, phase, unit, mb);
}

int32_t last_kernel(const FsdpSchedule& s, Phase phase, int32_t unit, int32_t mb = 0) {
  int32_t last = -1;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind == TaskKind::kKernel && t.phase == phase && t.unit == unit && t.micro_batch == mb) {
      last = i;
    }
  }
  return last;
}

// The head's backward kernels open the backward; the embedding's close it.
int32_t last_head_backward(const FsdpSchedule& s) {
  return first_kernel(s, Phase::kBackward, kRootUnit) + s.head_backward.count - 1;
}

int64_t count(const FsdpSchedule& s, TaskKind kind, Phase phase) {
  int64_t n = 0;
  for (const Task& t : s.tasks) n += (t.kind == kind && t.phase == phase) ? 1 : 0;
  return n;
}

// anc[i][j]: task j must finish before task i starts (transitively).
std::vector<std::vector<bool>> ancestors(const FsdpSchedule& s) {
  const auto n = static_cast<size_t>(s.size());
  std::vector<std::vector<bool>> anc(n, std::vector<bool>(n, false));
  for (size_t i = 0; i < n; ++i) {
    for (const int32_t d : s.deps_of(static_cast<int32_t>(i))) {
      const auto du = static_cast<size_t>(d);
      anc[i][du] = true;
      for (size_t j = 0; j < du; ++j) {
        if (anc[du][j]) anc[i][j] = true;
      }
    }
  }
  return anc;
}

// The most block all-gathers that may be in flight (issued, buffer not
// provably freed) when one of them starts.
int max_in_flight_all_gathers(const FsdpSchedule& s) {
  const auto anc = ancestors(s);
  int worst = 0;
  for (int32_t k = 0; k < s.size(); ++k) {
    const Task& tk = s.tasks[static_cast<size_t>(k)];
    if (tk.kind != TaskKind::kAllGather || tk.unit == kRootUnit) continue;
    int live = 0;
    for (int32_t j = 0; j <= k; ++j) {
      const Task& tj = s.tasks[static_cast<size_t>(j)];
      if (tj.kind != TaskKind::kAllGather || tj.unit == kRootUnit) continue;
      int32_t free = -1;
      for (int32_t f = j + 1; f < s.size(); ++f) {
        const Task& tf = s.tasks[static_cast<size_t>(f)];
        if (tf.kind == TaskKind::kFree && tf.unit == tj.unit) {
          free = f;
          break;
        }
      }
      const bool freed = free >= 0 && anc[static_cast<size_t>(k)][static_cast<size_t>(free)];
      live += freed ? 0 : 1;
    }
    worst = std::max(worst, live);
  }
  return worst;
}

struct Sizes {
  int64_t fwd, bwd, emb_f, emb_b, head_f, head_b;
};

// The blocks run as torch_compile says, the rest eager (torchtitan compiles
// blocks only).
KernelConfig block_config(const WorkloadSpec& w) {
  KernelConfig c = tiny_kernel_config();
  c.fusion = w.torch_compile ? KernelFusion::kCompiled : KernelFusion::kEager;
  return c;
}

Sizes kernel_sizes(const WorkloadSpec& w) {
  const KernelConfig c = block_config(w);
  KernelConfig eager = tiny_kernel_config();
  eager.fusion = KernelFusion::kEager;
  return {static_cast<int64_t>(block_forward(w.model, c).size()),
          static_cast<int64_t>(block_backward(w.model, c).size()),
          static_cast<int64_t>(embedding_forward(w.model, eager).size()),
          static_cast<int64_t>(embedding_backward(w.model, eager).size()),
          static_cast<int64_t>(head_forward(w.model, eager).size()),
          static_cast<int64_t>(head_backward(w.model, eager).size())};
}

TEST(FsdpSchedule, FullShardTaskCounts) {
  const WorkloadSpec w = tiny_spec();
  const FsdpSchedule s = build_fsdp_schedule(w);
  const Sizes k = kernel_sizes(w);
  // Eager attn_norm.to_fp32 .. mlp_residual of a rotary SwiGLU block (no
  // repeat_kv copies: kv_heads == heads).
  EXPECT_EQ(k.fwd, 31);
  WorkloadSpec compiled = w;
  compiled.torch_compile = true;
  EXPECT_EQ(kernel_sizes(compiled).fwd, 11);  // attn_norm .. mlp_residual, fused
  EXPECT_EQ(s.count(TaskKind::kKernel),
            2 * (k.fwd + k.bwd) + k.emb_f + k.emb_b + k.head_f + k.head_b);
  EXPECT_EQ(s.count(TaskKind::kAllGather), 5);  // root + 2 forward + 2 backward
  EXPECT_EQ(s.count(TaskKind::kFree), 5);       // 2 after forward, 2 after backward, root
  EXPECT_EQ(s.count(TaskKind::kReduceScatter), 3);
  EXPECT_EQ(s.count(TaskKind::kAllReduce), 0);
  EXPECT_EQ(s.count(TaskKind::kOptimizer), 1);
  EXPECT_EQ(s.tasks.back().kind, TaskKind::kOptimizer);
  EXPECT_EQ(s.dep_begin.size(), s.tasks.size() + 1);
  for (const Task& t : s.tasks) {
    const bool comm = t.kind == TaskKind::kAllGather || t.kind == TaskKind::kReduceScatter ||
                      t.kind == TaskKind::kAllReduce;
    EXPECT_EQ(t.stream, comm ? Stream::kComm : Stream::kCompute);
  }
}

TEST(FsdpSchedule, IndexOrderIsTopologicalForEveryOption) {
  for (const ShardingStrategy st : {ShardingStrategy::kFullShard, ShardingStrategy::kShardGradOp,
                                    ShardingStrategy::kHybridShard, ShardingStrategy::kNoShard}) {
    for (const BackwardPrefetch pf : {BackwardPrefetch::kBackwardPre,
                                      BackwardPrefetch::kBackwardPost, BackwardPrefetch::kNone}) {
      for (const int flags : {0, 1, 2, 3, 4, 5, 6, 7}) {
        WorkloadSpec w = tiny_spec(4);
        w.strategy = st;
        if (st == ShardingStrategy::kHybridShard) {
          w.shard_group_size = 4;
          w.replica_group_size = 2;
        }
        if (st == ShardingStrategy::kNoShard) {
          w.shard_group_size = 1;
          w.replica_group_size = 8;
        }
        w.backward_prefetch = pf;
        w.forward_prefetch = (flags & 1) != 0;
        w.limit_all_gathers = (flags & 2) != 0;
        w.activation_checkpointing =
            (flags & 4) != 0 ? ActivationCheckpointing::kFull : ActivationCheckpointing::kNone;
        w.grad_accum = 2;
        for (const bool separate : {false, true}) {
          const FsdpSchedule s = build_fsdp_schedule(w, {separate, (flags & 1) != 0});
          std::vector<int32_t> last_on(3, -1);
          for (int32_t i = 0; i < s.size(); ++i) {
            const Task& t = s.tasks[static_cast<size_t>(i)];
            const std::vector<int32_t> d = deps(s, i);
            EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
            for (const int32_t x : d) EXPECT_LT(x, i);
            int32_t& prev = last_on[static_cast<size_t>(t.stream)];
            if (prev >= 0) {
              EXPECT_THAT(d, ::testing::Contains(prev)) << "stream order";
            }
            prev = i;
            if (t.host_wait >= 0) {
              EXPECT_THAT(d, ::testing::Contains(t.host_wait));
            }
            if (t.kind == TaskKind::kKernel || t.kind == TaskKind::kOptimizer) {
              EXPECT_GE(t.kernel, 0);
              EXPECT_LT(t.kernel, static_cast<int32_t>(s.kernels.size()));
            }
          }
        }
      }
    }
  }
}

TEST(FsdpSchedule, BackwardPrePrefetchesBeforeTheKernels) {
  const FsdpSchedule s = build_fsdp_schedule(tiny_spec());
  const int32_t f0 = find(s, TaskKind::kFree, Phase::kForward, 0);
  const int32_t ag_f1 = find(s, TaskKind::kAllGather, Phase::kForward, 1);
  const int32_t ag_b1 = find(s, TaskKind::kAllGather, Phase::kBackward, 1);
  const int32_t ag_b0 = find(s, TaskKind::kAllGather, Phase::kBackward, 0);
  const int32_t rs1 = find(s, TaskKind::kReduceScatter, Phase::kBackward, 1);
  const int32_t head_b = first_kernel(s, Phase::kBackward, kRootUnit);
  // Block 1's all-gather is prefetched in the head's pre-backward, after the
  // host waited for block 0's forward free (two block buffers live).
  EXPECT_LT(ag_b1, head_b);
  EXPECT_THAT(deps(s, ag_b1), ElementsAre(f0, ag_f1));
  EXPECT_EQ(s.tasks[static_cast<size_t>(ag_b1)].host_wait, f0);
  // Block 0's is issued in block 1's pre-backward: before its kernels.
  // FSDP1's free-event queue holds one event then (block 1's forward free;
  // block 0's was taken above), under its limit of two: no host wait.
  EXPECT_LT(ag_b0, first_kernel(s, Phase::kBackward, 1));
  EXPECT_THAT(deps(s, ag_b0), ElementsAre(ag_b1));
  EXPECT_EQ(s.tasks[static_cast<size_t>(ag_b0)].host_wait, kNoHostWait);
  EXPECT_THAT(deps(s, first_kernel(s, Phase::kBackward, 1)),
              ElementsAre(ag_b1, last_head_backward(s)));
  // The reduce-scatter queues behind that all-gather on the one comm stream.
  EXPECT_THAT(deps(s, rs1), ElementsAre(ag_b0, last_kernel(s, Phase::kBackward, 1)));
  EXPECT_EQ(ag_b1, last_kernel(s, Phase::kForward, kRootUnit) + 1);
  EXPECT_EQ(head_b, ag_b1 + 1);
}

TEST(FsdpSchedule, BackwardPostPrefetchesAfterTheKernels) {
  WorkloadSpec w = tiny_spec();
  w.backward_prefetch = BackwardPrefetch::kBackwardPost;
  const FsdpSchedule s = build_fsdp_schedule(w);
  const int32_t f0 = find(s, TaskKind::kFree, Phase::kForward, 0);
  const int32_t f1 = find(s, TaskKind::kFree, Phase::kForward, 1);
  const int32_t ag_f1 = find(s, TaskKind::kAllGather, Phase::kForward, 1);
  const int32_t ag_b1 = find(s, TaskKind::kAllGather, Phase::kBackward, 1);
  const int32_t ag_b0 = find(s, TaskKind::kAllGather, Phase::kBackward, 0);
  const int32_t fb1 = find(s, TaskKind::kFree, Phase::kBackward, 1);
  const int32_t rs1 = find(s, TaskKind::kReduceScatter, Phase::kBackward, 1);
  const int32_t last_b1 = last_kernel(s, Phase::kBackward, 1);
  // Block 1 is gathered on demand, after the head's backward was issued.
  EXPECT_GT(ag_b1, last_head_backward(s));
  EXPECT_THAT(deps(s, ag_b1), ElementsAre(f0, ag_f1));
  // Post-backward of block 1: free, prefetch block 0, reduce-scatter.
  EXPECT_EQ(fb1, last_b1 + 1);
  EXPECT_EQ(ag_b0, fb1 + 1);
  EXPECT_EQ(rs1, ag_b0 + 1);
  EXPECT_THAT(deps(s, fb1), ElementsAre(last_b1));
  EXPECT_THAT(deps(s, ag_b0), ElementsAre(f1, ag_b1));
  EXPECT_EQ(s.tasks[static_cast<size_t>(ag_b0)].host_wait, f1);
  EXPECT_THAT(deps(s, rs1), ElementsAre(last_b1, ag_b0));
  EXPECT_THAT(deps(s, first_kernel(s, Phase::kBackward, 0)), ElementsAre(fb1, ag_b0));
}

TEST(FsdpSchedule, BackwardNoneGathersOnlyWhenNeeded) {
  WorkloadSpec w = tiny_spec();
  w.backward_prefetch = BackwardPrefetch::kNone;
  const FsdpSchedule s = build_fsdp_schedule(w);
  const int32_t f1 = find(s, TaskKind::kFree, Phase::kForward, 1);
  const int32_t ag_b0 = find(s, TaskKind::kAllGather, Phase::kBackward, 0);
  const int32_t fb1 = find(s, TaskKind::kFree, Phase::kBackward, 1);
  const int32_t rs1 = find(s, TaskKind::kReduceScatter, Phase::kBackward, 1);
  // Block 0's all-gather comes after block 1's reduce-scatter, in its own
  // pre-backward, and queues behind it on the comm stream.
  EXPECT_EQ(ag_b0, rs1 + 1);
  EXPECT_THAT(deps(s, ag_b0), ElementsAre(f1, rs1));
  EXPECT_EQ(first_kernel(s, Phase::kBackward, 0), ag_b0 + 1);
  EXPECT_THAT(deps(s, ag_b0 + 1), ElementsAre(fb1, ag_b0));
}

TEST(FsdpSchedule, ForwardPrefetchIssuesTheNextAllGatherEarly) {
  WorkloadSpec w = tiny_spec();
  const FsdpSchedule plain = build_fsdp_schedule(w);
  {
    const int32_t ag1 = find(plain, TaskKind::kAllGather, Phase::kForward, 1);
    const int32_t f0 = find(plain, TaskKind::kFree, Phase::kForward, 0);
    EXPECT_EQ(ag1, f0 + 1);  // issued when block 1 is reached
    EXPECT_THAT(deps(plain, ag1),
                ElementsAre(find(plain, TaskKind::kAllGather, Phase::kForward, 0)));
    EXPECT_THAT(deps(plain, ag1 + 1), ElementsAre(f0, ag1));
  }
  w.forward_prefetch = true;
  const FsdpSchedule s = build_fsdp_schedule(w);
  const int32_t ag_root = find(s, TaskKind::kAllGather, Phase::kForward, kRootUnit);
  const int32_t ag0 = find(s, TaskKind::kAllGather, Phase::kForward, 0);
  const int32_t ag1 = find(s, TaskKind::kAllGather, Phase::kForward, 1);
  EXPECT_EQ(ag_root, 0);
  EXPECT_EQ(ag0, 1);  // prefetched in the root's pre-forward
  EXPECT_LT(ag1, first_kernel(s, Phase::kForward, 0));
  EXPECT_THAT(deps(s, ag1), ElementsAre(ag0));
  EXPECT_THAT(deps(s, first_kernel(s, Phase::kForward, 0)),
              ElementsAre(ag0, ag1 - 1));  // ag1 - 1: the last embedding kernel
  EXPECT_THAT(deps(s, first_kernel(s, Phase::kForward, kRootUnit)), ElementsAre(ag_root));
}

// FSDP1's limiter counts recorded frees, not buffers: with a prefetch, the
// queue of two free events lets a third block all-gather through (the next
// unit's, issued before the current one's free is recorded). FSDP2 keeps two.
TEST(FsdpSchedule, LimitAllGathersCapsInFlightAtThreeInFsdp1AndTwoInFsdp2) {
  for (const BackwardPrefetch pf :
       {BackwardPrefetch::kBackwardPre, BackwardPrefetch::kBackwardPost, BackwardPrefetch::kNone}) {
    for (const bool fwd_prefetch : {false, true}) {
      WorkloadSpec w = tiny_spec(6);
      w.backward_prefetch = pf;
      w.forward_prefetch = fwd_prefetch;
      w.grad_accum = 2;
      const bool prefetches = fwd_prefetch || pf == BackwardPrefetch::kBackwardPre;
      EXPECT_EQ(max_in_flight_all_gathers(build_fsdp_schedule(w)), prefetches ? 3 : 2)
          << backward_prefetch_name(pf) << " forward_prefetch " << fwd_prefetch;
      w.fsdp_version = 2;
      EXPECT_EQ(max_in_flight_all_gathers(build_fsdp_schedule(w)), 2)
          << "FSDP2 " << backward_prefetch_name(pf) << " forward_prefetch " << fwd_prefetch;
      w.fsdp_version = 1;
      w.limit_all_gathers = false;  // the host runs ahead: all blocks at once
      EXPECT_GE(max_in_flight_all_gathers(build_fsdp_schedule(w)), 6);
    }
  }
}

TEST(FsdpSchedule, FullCheckpointingRecomputesOneForwardPerBlock) {
  WorkloadSpec w = tiny_spec();
  const FsdpSchedule base = build_fsdp_schedule(w);
  w.activation_checkpointing = ActivationCheckpointing::kFull;
  const FsdpSchedule s = build_fsdp_schedule(w);
  // The forward up to its last saved tensor: all but down_proj and
  // mlp_residual (transformer_kernels.h, block_recompute()).
  const auto again =
      static_cast<int32_t>(block_recompute(w.model, block_config(w), Recompute::kFull).size());
  EXPECT_EQ(again, kernel_sizes(w).fwd - 2);
  EXPECT_EQ(s.count(TaskKind::kKernel), base.count(TaskKind::kKernel) + 2 * again);
  EXPECT_EQ(count(s, TaskKind::kKernel, Phase::kRecompute), 2 * again);
  EXPECT_EQ(s.size(), base.size() + 2 * again);
  for (const int32_t b : {0, 1}) {
    const int32_t first = first_kernel(s, Phase::kRecompute, b);
    const int32_t ag = find(s, TaskKind::kAllGather, Phase::kBackward, b);
    EXPECT_THAT(deps(s, first), ::testing::Contains(ag));
    for (int32_t i = 0; i < again; ++i) {
      const Kernel& k =
          s.kernels[static_cast<size_t>(s.tasks[static_cast<size_t>(first + i)].kernel)];
      EXPECT_EQ(k.name, s.kernels[static_cast<size_t>(s.block_forward.begin + i)].name);
      EXPECT_EQ(k.flops, s.kernels[static_cast<size_t>(s.block_forward.begin + i)].flops);
    }
    EXPECT_EQ(last_kernel(s, Phase::kRecompute, b) + 1, first_kernel(s, Phase::kBackward, b));
  }
  w.activation_checkpointing = ActivationCheckpointing::kSelective;
  const FsdpSchedule sel = build_fsdp_schedule(w);
  EXPECT_EQ(count(sel, TaskKind::kKernel, Phase::kRecompute),
            2 * static_cast<int64_t>(sel.recompute.size()));
  EXPECT_GT(sel.recompute.size(), 0U);
  // torchtitan's op policy: no attention, and of the GEMMs only wk, wo, w3.
  std::vector<std::string_view> gemms;
  for (const int32_t ki : sel.recompute) {
    const Kernel& k = sel.kernels[static_cast<size_t>(ki)];
    EXPECT_NE(k.cls, KernelClass::kAttention);
    if (k.cls == KernelClass::kGemm) gemms.push_back(k.name);
  }
  EXPECT_THAT(
      gemms, ::testing::ElementsAre("k_proj.recompute", "out_proj.recompute", "up_proj.recompute"));
}

TEST(FsdpSchedule, GradAccumulationRepeatsTheMicroBatch) {
  WorkloadSpec w = tiny_spec();
  const FsdpSchedule one = build_fsdp_schedule(w);
  w.grad_accum = 2;
  const FsdpSchedule two = build_fsdp_schedule(w);
  EXPECT_EQ(two.count(TaskKind::kKernel), 2 * one.count(TaskKind::kKernel));
  EXPECT_EQ(two.count(TaskKind::kAllGather), 10);
  EXPECT_EQ(two.count(TaskKind::kReduceScatter), 6);  // every micro-batch reduces
  EXPECT_EQ(two.count(TaskKind::kOptimizer), 1);
  EXPECT_EQ(two.kernels.size(), one.kernels.size());  // the table is shared
  // The optimizer waits for the last micro-batch's reduce-scatters.
  std::vector<int32_t> want = {find(two, TaskKind::kReduceScatter, Phase::kBackward, 1, 1),
                               find(two, TaskKind::kReduceScatter, Phase::kBackward, 0, 1),
                               find(two, TaskKind::kReduceScatter, Phase::kBackward, kRootUnit, 1),
                               find(two, TaskKind::kFree, Phase::kBackward, kRootUnit, 1)};
  std::sort(want.begin(), want.end());
  want.erase(std::unique(want.begin(), want.end()), want.end());
  EXPECT_EQ(deps(two, two.size() - 1), want);

  // Each micro-batch's forward begins at its first task, the root's
  // all-gather or the embedding (where the loop's host work per micro-batch
  // falls).
  ASSERT_EQ(two.forward_begins.size(), 2u);
  EXPECT_EQ(two.forward_begins[0], 0);
  const Task& second = two.tasks[static_cast<size_t>(two.forward_begins[1])];
  EXPECT_EQ(second.micro_batch, 1);
  EXPECT_EQ(second.phase, Phase::kForward);
  for (int32_t i = 0; i < two.forward_begins[1]; ++i) {
    EXPECT_EQ(two.tasks[static_cast<size_t>(i)].micro_batch == 1 &&
                  two.tasks[static_cast<size_t>(i)].phase == Phase::kForward,
              false);
  }

  const FsdpSchedule nosync = build_fsdp_schedule(w, {false, true});
  EXPECT_EQ(nosync.count(TaskKind::kReduceScatter), 3);
  EXPECT_EQ(find(nosync, TaskKind::kReduceScatter, Phase::kBackward, 0, 0), -1);
  w.strategy = ShardingStrategy::kShardGradOp;
  const FsdpSchedule sgo = build_fsdp_schedule(w, {false, true});
  EXPECT_EQ(sgo.count(TaskKind::kAllGather), 3);  // kept gathered across micro-batches
  EXPECT_EQ(sgo.count(TaskKind::kFree), 3);       // freed after the last backward
}

TEST(FsdpSchedule, ShardGradOpGathersOncePerMicroBatch) {
  WorkloadSpec w = tiny_spec();
  w.strategy = ShardingStrategy::kShardGradOp;
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(count(s, TaskKind::kAllGather, Phase::kForward), 3);
  EXPECT_EQ(count(s, TaskKind::kAllGather, Phase::kBackward), 0);
  EXPECT_EQ(count(s, TaskKind::kFree, Phase::kForward), 0);
  EXPECT_EQ(count(s, TaskKind::kFree, Phase::kBackward), 3);
  EXPECT_EQ(s.count(TaskKind::kReduceScatter), 3);
  w.strategy = ShardingStrategy::kFullShard;
  w.reshard_after_forward = false;  // FSDP2's way of saying SHARD_GRAD_OP
  EXPECT_EQ(build_fsdp_schedule(w).count(TaskKind::kAllGather), 3);
}

TEST(FsdpSchedule, HybridShardAllReducesEachShard) {
  WorkloadSpec w = tiny_spec();
  w.strategy = ShardingStrategy::kHybridShard;
  w.shard_group_size = 4;
  w.replica_group_size = 2;
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.count(TaskKind::kAllGather), 5);
  EXPECT_EQ(s.count(TaskKind::kReduceScatter), 3);
  EXPECT_EQ(s.count(TaskKind::kAllReduce), 3);
  const ParameterBreakdown p = parameter_breakdown(w.model);
  for (const int32_t u : {1, 0, kRootUnit}) {
    const int32_t rs = find(s, TaskKind::kReduceScatter, Phase::kBackward, u);
    const int32_t ar = find(s, TaskKind::kAllReduce, Phase::kBackward, u);
    EXPECT_EQ(ar, rs + 1);
    EXPECT_THAT(deps(s, ar), ElementsAre(rs));
    const int64_t params = u == kRootUnit ? p.embedding + p.final_norm + p.output_head : p.block;
    EXPECT_EQ(s.tasks[static_cast<size_t>(ar)].bytes, (params + 3) / 4 * 2);
  }
}

TEST(FsdpSchedule, NoShardIsDdp) {
  WorkloadSpec w = tiny_spec();
  w.strategy = ShardingStrategy::kNoShard;
  w.shard_group_size = 1;
  w.replica_group_size = 8;
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.count(TaskKind::kAllGather), 0);
  EXPECT_EQ(s.count(TaskKind::kFree), 0);
  EXPECT_EQ(s.count(TaskKind::kReduceScatter), 0);
  EXPECT_EQ(s.count(TaskKind::kAllReduce), 3);
  const int32_t ar1 = find(s, TaskKind::kAllReduce, Phase::kBackward, 1);
  EXPECT_EQ(s.tasks[static_cast<size_t>(ar1)].bytes, s.block_bytes);
  EXPECT_THAT(deps(s, ar1), ElementsAre(last_kernel(s, Phase::kBackward, 1)));
  // The optimizer covers the whole model.
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.optimizer_kernel)].flops,
                   14.0 * static_cast<double>(parameter_count(w.model)));
}

TEST(FsdpSchedule, CollectiveBytesAreUnitParameterBytes) {
  WorkloadSpec w = tiny_spec();
  const ParameterBreakdown p = parameter_breakdown(w.model);
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.block_bytes, 2 * p.block);
  EXPECT_EQ(s.root_bytes, 2 * (p.embedding + p.final_norm + p.output_head));
  for (const Task& t : s.tasks) {
    if (t.kind == TaskKind::kAllGather || t.kind == TaskKind::kReduceScatter) {
      EXPECT_EQ(t.bytes, t.unit == kRootUnit ? s.root_bytes : 2 * p.block);
    } else {
      EXPECT_EQ(t.bytes, 0);
    }
  }
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.optimizer_kernel)].flops,
                   14.0 * static_cast<double>((p.total + 7) / 8));
  w.dtype = Dtype::kFp32;
  EXPECT_EQ(build_fsdp_schedule(w).block_bytes, 4 * p.block);
}

TEST(FsdpSchedule, Fsdp2CopiesEachAllGatherOutOnceBeforeItsFirstKernel) {
  WorkloadSpec w = tiny_spec();
  w.fsdp_version = 2;
  const FsdpSchedule s = build_fsdp_schedule(w);
  ASSERT_NE(s.block_copy_out, kNoKernel);
  const Kernel& out = s.kernels[static_cast<size_t>(s.block_copy_out)];
  EXPECT_EQ(out.name, "fsdp.all_gather_copy_out");
  EXPECT_DOUBLE_EQ(out.bytes, 2.0 * static_cast<double>(s.block_bytes));  // read + write
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.root_copy_out)].bytes,
                   2.0 * static_cast<double>(s.root_bytes));
  int copies = 0;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind != TaskKind::kKernel ||
        (t.kernel != s.block_copy_out && t.kernel != s.root_copy_out)) {
      continue;
    }
    ++copies;
    // It waits for an all-gather of its unit, and the next task on the
    // compute stream is that unit's first kernel.
    const std::vector<int32_t> d = deps(s, i);
    const bool waits_for_gather = std::any_of(d.begin(), d.end(), [&](int32_t x) {
      const Task& dep = s.tasks[static_cast<size_t>(x)];
      return dep.kind == TaskKind::kAllGather && dep.unit == t.unit;
    });
    EXPECT_TRUE(waits_for_gather) << "copy-out " << i;
  }
  EXPECT_EQ(copies, s.count(TaskKind::kAllGather));  // 5: one per all-gather
}

TEST(FsdpSchedule, Fsdp2CopiesGradientsIntoTheReduceScatterInputInTheReduceDtype) {
  WorkloadSpec w = tiny_spec();
  w.fsdp_version = 2;
  w.reduce_dtype = Dtype::kFp32;
  const FsdpSchedule s = build_fsdp_schedule(w);
  const ParameterBreakdown p = parameter_breakdown(w.model);
  const Kernel& in = s.kernels[static_cast<size_t>(s.block_reduce_copy_in)];
  EXPECT_EQ(in.name, "fsdp.reduce_scatter_copy_in");
  EXPECT_DOUBLE_EQ(in.bytes, static_cast<double>((2 + 4) * p.block));  // bf16 read, fp32 written
  for (const int32_t u : {1, 0, kRootUnit}) {
    const int32_t rs = find(s, TaskKind::kReduceScatter, Phase::kBackward, u);
    const Task& t = s.tasks[static_cast<size_t>(rs)];
    const int64_t params = u == kRootUnit ? p.embedding + p.final_norm + p.output_head : p.block;
    EXPECT_EQ(t.bytes, 4 * params);  // fp32 gradients, twice the bf16 bytes
    const std::vector<int32_t> d = deps(s, rs);
    ASSERT_FALSE(d.empty());
    const Task& before = s.tasks[static_cast<size_t>(d.back())];
    EXPECT_EQ(before.kernel, u == kRootUnit ? s.root_reduce_copy_in : s.block_reduce_copy_in);
  }
}

TEST(FsdpSchedule, Fp32ReductionDoublesTheHsdpAllReduce) {
  WorkloadSpec w = tiny_spec();
  w.strategy = ShardingStrategy::kHybridShard;
  w.shard_group_size = 4;
  w.replica_group_size = 2;
  w.reduce_dtype = Dtype::kFp32;
  const FsdpSchedule s = build_fsdp_schedule(w);
  const ParameterBreakdown p = parameter_breakdown(w.model);
  const int32_t ar = find(s, TaskKind::kAllReduce, Phase::kBackward, 1);
  EXPECT_EQ(s.tasks[static_cast<size_t>(ar)].bytes, (p.block + 3) / 4 * 4);
  EXPECT_EQ(s.block_copy_out, kNoKernel);  // FSDP1: no copies
}

TEST(FsdpSchedule, SeparateReduceStream) {
  const FsdpSchedule s = build_fsdp_schedule(tiny_spec(), {true, false});
  const int32_t rs1 = find(s, TaskKind::kReduceScatter, Phase::kBackward, 1);
  EXPECT_EQ(s.tasks[static_cast<size_t>(rs1)].stream, Stream::kReduce);
  EXPECT_THAT(deps(s, rs1), ElementsAre(last_kernel(s, Phase::kBackward, 1)));
  const int32_t rs0 = find(s, TaskKind::kReduceScatter, Phase::kBackward, 0);
  EXPECT_THAT(deps(s, rs0), ElementsAre(rs1, last_kernel(s, Phase::kBackward, 0)));
}

TEST(FsdpSchedule, Llama3_8bHasOneUnitPerBlock) {
  WorkloadSpec w = tiny_spec();
  w.model = model_preset("llama3-8b").value_or(ModelSpec{});
  w.seq_len = 8192;
  w.local_batch = 2;
  w.activation_checkpointing = ActivationCheckpointing::kSelective;
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.blocks, 32);
  EXPECT_EQ(s.count(TaskKind::kAllGather), 1 + 2 * 32);
  EXPECT_EQ(s.count(TaskKind::kReduceScatter), 1 + 32);
  EXPECT_EQ(s.block_bytes, 2 * parameter_breakdown(w.model).block);
  EXPECT_EQ(max_in_flight_all_gathers(s), 3);  // FSDP1 with BACKWARD_PRE
  w.fsdp_version = 2;
  EXPECT_EQ(max_in_flight_all_gathers(build_fsdp_schedule(w)), 2);
}

}  // namespace
}  // namespace clustersim::workloads

namespace clustersim::workloads {
namespace {

// Megatron sequence parallelism: per block, forward all-gathers before the
// attention's and the MLP's first GEMM and reduce-scatters after out_proj
// and down_proj; backward the reverse; selective recompute adds the three
// around k_proj, out_proj and up_proj. Each carries the full activation and
// the next kernel waits for it.
TEST(FsdpSchedule, TensorParallelCollectivesSurroundTheBlockGemms) {
  WorkloadSpec w = tiny_spec();
  w.tp = 2;
  w.dp_size = 4;
  w.shard_group_size = 4;
  const auto tp_tasks = [](const FsdpSchedule& s, TaskKind kind) {
    int64_t n = 0;
    for (const Task& t : s.tasks) n += t.group == GroupRole::kTp && t.kind == kind ? 1 : 0;
    return n;
  };
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(tp_tasks(s, TaskKind::kAllGather), 2 * (2 + 2));  // 2 blocks x (fwd 2 + bwd 2)
  EXPECT_EQ(tp_tasks(s, TaskKind::kReduceScatter), 2 * (2 + 2));
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.group != GroupRole::kTp) continue;
    EXPECT_EQ(t.stream, Stream::kTp);
    EXPECT_EQ(t.bytes, 16 * 64 * 2);  // tokens x hidden x bf16
    const Task& next = s.tasks[static_cast<size_t>(i + 1)];
    ASSERT_EQ(next.kind, TaskKind::kKernel) << i;
    EXPECT_THAT(deps(s, i + 1), ::testing::Contains(i));
  }
  w.activation_checkpointing = ActivationCheckpointing::kSelective;
  const FsdpSchedule sel = build_fsdp_schedule(w);
  EXPECT_EQ(tp_tasks(sel, TaskKind::kAllGather) + tp_tasks(sel, TaskKind::kReduceScatter),
            2 * (8 + 3));
}

// torchtitan's [batch, seq, hidden] activations (tp_sequence_dim 1): PyTorch
// concatenates the chunks of every TP all-gather after it and of every TP
// reduce-scatter before it, one tp.sequence_cat kernel of the full
// activation read and written each; Megatron's layout (0) needs none.
TEST(FsdpSchedule, SequenceDimOneCopiesAroundEveryTensorParallelCollective) {
  WorkloadSpec w = tiny_spec();
  w.tp = 2;
  w.dp_size = 4;
  w.shard_group_size = 4;
  const FsdpSchedule s = build_fsdp_schedule(w);
  ASSERT_NE(s.tp_cat_copy, kNoKernel);
  const Kernel& copy = s.kernels[static_cast<size_t>(s.tp_cat_copy)];
  EXPECT_EQ(copy.name, "tp.sequence_cat");
  EXPECT_DOUBLE_EQ(copy.bytes, 2.0 * 16 * 64 * 2);  // tokens x hidden x bf16, read and written
  int64_t copies = 0;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind == TaskKind::kKernel && t.kernel == s.tp_cat_copy) ++copies;
    if (t.group != GroupRole::kTp) continue;
    if (t.kind == TaskKind::kAllGather) {
      // The copy comes right after the all-gather and waits for it.
      const Task& next = s.tasks[static_cast<size_t>(i + 1)];
      EXPECT_EQ(next.kernel, s.tp_cat_copy) << i;
      EXPECT_THAT(deps(s, i + 1), ::testing::Contains(i));
    } else {
      // The reduce-scatter waits for the copy before it.
      EXPECT_EQ(s.tasks[static_cast<size_t>(i - 1)].kernel, s.tp_cat_copy) << i;
      EXPECT_THAT(deps(s, i), ::testing::Contains(i - 1));
    }
  }
  EXPECT_EQ(copies, 2 * (4 + 4));  // one per TP collective
  w.tp_sequence_dim = 0;
  const FsdpSchedule megatron = build_fsdp_schedule(w);
  EXPECT_EQ(megatron.tp_cat_copy, kNoKernel);
  EXPECT_EQ(megatron.size(), s.size() - copies);
}

// Float8 all-gather: a block's all-gather moves its linear weights in FP8
// (tiny_spec: attention 4 x 64 x 64 + SwiGLU 3 x 64 x 128 = 40,960 at 1
// byte) and its two norms in bf16 (2 x 64 x 2), after one 4-byte amax
// all-reduce per linear weight over the shard group (7); with precomputed
// scales none, and one kernel and one all-reduce after the optimizer.
TEST(FsdpSchedule, Float8AllGatherMovesFp8WeightsAfterTheirAmaxes) {
  WorkloadSpec w = tiny_spec();
  w.fsdp_version = 2;
  w.float8 = Float8Recipe::kTensorwise;
  const FsdpSchedule bf16 = build_fsdp_schedule(w);
  EXPECT_EQ(bf16.block_gather_bytes, bf16.block_bytes);
  w.float8_all_gather = true;
  const FsdpSchedule s = build_fsdp_schedule(w);
  EXPECT_EQ(s.block_bytes, 2 * (40960 + 128));
  EXPECT_EQ(s.block_gather_bytes, 40960 + 2 * 128);
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.block_copy_out)].bytes, 2.0 * (40960 + 256));
  int64_t block_gathers = 0, amaxes = 0;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind == TaskKind::kAllGather && t.unit != kRootUnit) {
      ++block_gathers;
      EXPECT_EQ(t.bytes, 40960 + 256);
      for (int32_t k = 1; k <= 7; ++k) {
        const Task& a = s.tasks[static_cast<size_t>(i - k)];
        EXPECT_EQ(a.kind, TaskKind::kAllReduce) << i;
        EXPECT_EQ(a.bytes, 4);
        EXPECT_EQ(a.group, GroupRole::kShard);
      }
    }
    if (t.kind == TaskKind::kAllReduce) ++amaxes;
  }
  EXPECT_EQ(amaxes, 7 * block_gathers);
  w.float8_precompute_scales = true;
  const FsdpSchedule pre = build_fsdp_schedule(w);
  ASSERT_EQ(pre.count(TaskKind::kAllReduce), 1);
  const Task& last = pre.tasks.back();
  EXPECT_EQ(last.kind, TaskKind::kAllReduce);
  EXPECT_EQ(last.bytes, 4 * 2 * 7);  // blocks x weights
  const Task& amax = pre.tasks[pre.tasks.size() - 2];
  EXPECT_EQ(amax.kernel, pre.float8_amax_kernel);
  // The local fp32 shards of every linear weight: 2 x 40,960 / 8 ranks x 4 bytes.
  EXPECT_DOUBLE_EQ(pre.kernels[static_cast<size_t>(pre.float8_amax_kernel)].bytes,
                   4.0 * 2 * 40960 / 8);
}

// clip_grad_norm_ before the optimizer: the norm of the local fp32 shard
// (tiny_spec: 2 x 41,088 + 2 x 256 x 64 + 64 parameters over 8 ranks), a
// 4-byte all-reduce over the shard group on FSDP's stream and one over the
// TP group on TP's, then the scaling; the optimizer waits for it.
TEST(FsdpSchedule, GradientClippingRunsBeforeTheOptimizer) {
  WorkloadSpec w = tiny_spec();
  w.grad_clip = true;
  const FsdpSchedule s = build_fsdp_schedule(w);
  ASSERT_NE(s.grad_norm_kernel, kNoKernel);
  const auto n = static_cast<double>(s.local_params);
  EXPECT_EQ(s.local_params, (2 * 41088 + 2 * 256 * 64 + 64 + 7) / 8);
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.grad_norm_kernel)].bytes, 4 * n);
  EXPECT_DOUBLE_EQ(s.kernels[static_cast<size_t>(s.grad_clip_kernel)].bytes, 8 * n);
  const int32_t opt = s.size() - 1;
  ASSERT_EQ(s.tasks.back().kind, TaskKind::kOptimizer);
  const Task& clip = s.tasks[static_cast<size_t>(opt - 1)];
  const Task& all = s.tasks[static_cast<size_t>(opt - 2)];
  const Task& norm = s.tasks[static_cast<size_t>(opt - 3)];
  EXPECT_EQ(clip.kernel, s.grad_clip_kernel);
  EXPECT_EQ(all.kind, TaskKind::kAllReduce);
  EXPECT_EQ(all.group, GroupRole::kShard);
  EXPECT_EQ(all.stream, Stream::kComm);
  EXPECT_EQ(all.bytes, 4);
  EXPECT_EQ(norm.kernel, s.grad_norm_kernel);
  EXPECT_THAT(deps(s, opt), ::testing::Contains(opt - 1));
  EXPECT_THAT(deps(s, opt - 1), ::testing::Contains(opt - 2));
  EXPECT_EQ(s.count(TaskKind::kAllReduce), 1);
  // With TP, a second all-reduce over the TP group, on its stream.
  w.tp = 2;
  w.dp_size = 4;
  w.shard_group_size = 4;
  const FsdpSchedule tp = build_fsdp_schedule(w);
  const Task& tp_all = tp.tasks[tp.tasks.size() - 3];
  EXPECT_EQ(tp_all.group, GroupRole::kTp);
  EXPECT_EQ(tp_all.stream, Stream::kTp);
  EXPECT_EQ(tp.tasks[tp.tasks.size() - 4].group, GroupRole::kShard);
  // Off, or with CPU offload (the host clips): none.
  w.grad_clip = false;
  EXPECT_EQ(build_fsdp_schedule(w).grad_norm_kernel, kNoKernel);
  w.grad_clip = true;
  w.cpu_offload = true;
  EXPECT_EQ(build_fsdp_schedule(w).grad_norm_kernel, kNoKernel);
}

}  // namespace
}  // namespace clustersim::workloads
