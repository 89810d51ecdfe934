// Megatron-Core's DDP in a rank's schedule (workloads/schedules/megatron_buckets.h):
// the buckets, their reduce-scatters (or all-reduces) in the last
// micro-batch's backward and the distributed optimizer's all-gathers, by
// count and bytes per step; and such steps simulated end to end.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/scenario_loader.h"
#include "tests/support/step_fixtures.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/megatron_buckets.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::workloads {
namespace {

// 4 blocks of 16,779,264 parameters (hidden 1024, FFN 4096, SwiGLU) and a
// root of 65,537,024 (embedding and head 32,768,000 each, the final norm
// 1,024) on 4 GPUs, 2 micro-batches; `extra` adds keys under workload.
WorkloadSpec spec(std::string_view strategy, std::string_view extra = "") {
  const std::string yaml =
      "name: d\nworkload:\n  model: custom\n  custom_model:\n    layers: 4\n    hidden: 1024\n"
      "    heads: 8\n    kv_heads: 8\n    ffn_hidden: 4096\n    vocab: 32000\n"
      "    activation: swiglu\n  seq_len: 1024\n  local_batch: 1\n  grad_accum: 2\n"
      "  grad_clip: false\n  parallelism:\n    strategy: " +
      std::string(strategy) + "\n" + std::string(extra);
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return read_workload_spec(sim::load_scenario_text(yaml, "d.yaml", schema), 4, 8);
}

constexpr int64_t kBlock = 16'779'264;
constexpr int64_t kRoot = 65'537'024;

std::vector<Task> of_kind(const FsdpSchedule& s, TaskKind kind) {
  std::vector<Task> out;
  for (const Task& t : s.tasks) {
    if (t.kind == kind) out.push_back(t);
  }
  return out;
}

int32_t first_index(const FsdpSchedule& s, TaskKind kind) {
  for (int32_t i = 0; i < s.size(); ++i) {
    if (s.tasks[static_cast<size_t>(i)].kind == kind) return i;
  }
  return -1;
}

TEST(MegatronSchedule, BucketsCloseAtTheUnitThatFillsThem) {
  // 20M a bucket: blocks 3 and 2 (33.6M), blocks 1 and 0, then the root.
  const WorkloadSpec w = spec("DISTRIBUTED_OPTIMIZER", "  megatron:\n    bucket_size: 20000000\n");
  FsdpSchedule s = build_fsdp_schedule(w);
  const MegatronBuckets b(w, s, [](Task, std::vector<int32_t>) { return 0; });
  ASSERT_EQ(b.buckets().size(), 3u);
  EXPECT_EQ(b.buckets()[0].units, (std::vector<int32_t>{3, 2}));
  EXPECT_EQ(b.buckets()[1].units, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(b.buckets()[2].units, (std::vector<int32_t>{kRootUnit}));
  EXPECT_EQ(b.buckets()[0].params, 2 * kBlock);
  EXPECT_EQ(b.buckets()[2].params, kRoot);
}

TEST(MegatronSchedule, DistributedOptimizerReduceScattersAndGathersEachBucketOnce) {
  const WorkloadSpec w = spec("DISTRIBUTED_OPTIMIZER", "  megatron:\n    bucket_size: 20000000\n");
  const FsdpSchedule s = build_fsdp_schedule(w);
  // Reduce-scatters of the fp32 main gradients, in the last micro-batch,
  // over the 4 data-parallel ranks: 3 buckets, 4 bytes per parameter.
  const std::vector<Task> rs = of_kind(s, TaskKind::kReduceScatter);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[0].bytes, 4 * 2 * kBlock);  // 134,234,112
  EXPECT_EQ(rs[1].bytes, 4 * 2 * kBlock);
  EXPECT_EQ(rs[2].bytes, 4 * kRoot);  // 262,148,096
  for (const Task& t : rs) {
    EXPECT_EQ(t.micro_batch, 1);
    EXPECT_EQ(t.group, GroupRole::kShard);
  }
  // All-gathers of the bf16 parameters at the step's start, in forward
  // order: the root's bucket, then blocks 0-1, then 2-3; 2 bytes a parameter.
  const std::vector<Task> ag = of_kind(s, TaskKind::kAllGather);
  ASSERT_EQ(ag.size(), 3u);
  EXPECT_EQ(ag[0].bytes, 2 * kRoot);  // 131,074,048
  EXPECT_EQ(ag[1].bytes, 2 * 2 * kBlock);
  EXPECT_EQ(ag[2].bytes, 2 * 2 * kBlock);
  int64_t gathered = 0;
  for (const Task& t : ag) {
    EXPECT_EQ(t.micro_batch, 0);
    EXPECT_EQ(t.phase, Phase::kForward);
    gathered += t.bytes;
  }
  EXPECT_EQ(gathered, 2 * (4 * kBlock + kRoot));  // every parameter once
  // Parameters stay whole: nothing freed, nothing copied.
  EXPECT_EQ(s.count(TaskKind::kFree), 0);
  EXPECT_EQ(s.block_copy_out, kNoKernel);
  // The first forward kernel waits for the first bucket's all-gather.
  const int32_t first_kernel = first_index(s, TaskKind::kKernel);
  const int32_t first_gather = first_index(s, TaskKind::kAllGather);
  ASSERT_LT(first_gather, first_kernel);
  bool waits = false;
  for (const int32_t d : s.deps_of(first_kernel)) waits |= d == first_gather;
  EXPECT_TRUE(waits);
}

// Megatron-FSDP: each block all-gathered before its forward and again before
// its backward, the root once a micro-batch; every micro-batch
// reduce-scatters every unit's fp32 gradients on the reduce stream; no copy
// kernel around either collective.
TEST(MegatronSchedule, MegatronFsdpGathersEachPassAndReduceScattersEveryMicroBatch) {
  const WorkloadSpec w = spec("FULL_SHARD", "  megatron:\n    fsdp: true\n");
  FsdpScheduleOptions options;  // as scenario/step_config.cc derives them
  options.separate_reduce_stream = w.separate_reduce_stream;
  options.no_sync = w.no_sync;
  const FsdpSchedule s = build_fsdp_schedule(w, options);
  const std::vector<Task> ag = of_kind(s, TaskKind::kAllGather);
  ASSERT_EQ(ag.size(), 2u * (1 + 4 + 4));  // 2 micro-batches: root, 4 forward, 4 backward
  int64_t gathered = 0;
  for (const Task& t : ag) gathered += t.bytes;
  EXPECT_EQ(gathered, 2 * (2 * kRoot + 2 * 4 * 2 * kBlock));  // bf16
  const std::vector<Task> rs = of_kind(s, TaskKind::kReduceScatter);
  ASSERT_EQ(rs.size(), 2u * 5);
  int64_t reduced = 0;
  for (const Task& t : rs) {
    EXPECT_EQ(t.stream, Stream::kReduce);
    EXPECT_EQ(t.group, GroupRole::kShard);
    reduced += t.bytes;
  }
  EXPECT_EQ(reduced, 2 * 4 * (4 * kBlock + kRoot));  // fp32 main gradients
  EXPECT_EQ(rs.front().micro_batch, 0);
  EXPECT_EQ(s.block_copy_out, kNoKernel);
  EXPECT_EQ(s.root_copy_out, kNoKernel);
  EXPECT_EQ(s.block_reduce_copy_in, kNoKernel);
  EXPECT_EQ(s.block_grad_cast, kNoKernel);
  // PyTorch's FSDP2 on the same job copies around both.
  const FsdpSchedule p = build_fsdp_schedule(spec("FULL_SHARD"));
  EXPECT_NE(p.block_copy_out, kNoKernel);
  EXPECT_NE(p.block_reduce_copy_in, kNoKernel);
  // Forward prefetch: block 1's forward all-gather is issued before block 0's
  // first forward kernel.
  int32_t block1_gather = -1, block0_kernel = -1;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.phase != Phase::kForward || t.micro_batch != 0) continue;
    if (t.kind == TaskKind::kAllGather && t.unit == 1 && block1_gather < 0) block1_gather = i;
    if (t.kind == TaskKind::kKernel && t.unit == 0 && block0_kernel < 0) block0_kernel = i;
  }
  ASSERT_GE(block1_gather, 0);
  ASSERT_GE(block0_kernel, 0);
  EXPECT_LT(block1_gather, block0_kernel);
}

// --fp8-param-gather: each block's linear weights (16,777,216 of its
// parameters) gathered at 1 byte, its norms (2,048) and the root at 2; the
// FP8 weights are transposed once, in the first micro-batch, and no
// micro-batch casts a weight.
TEST(MegatronSchedule, Fp8ParamGatherMovesFp8WeightsAndTransposesThemOnce) {
  const WorkloadSpec w =
      spec("DISTRIBUTED_OPTIMIZER",
           "  float8:\n    recipe: delayed\n    weight_casts: once_per_step\n"
           "  megatron:\n    bucket_size: 20000000\n    fp8_param_gather: true\n");
  const FsdpSchedule s = build_fsdp_schedule(w);
  const std::vector<Task> ag = of_kind(s, TaskKind::kAllGather);
  ASSERT_EQ(ag.size(), 3u);
  EXPECT_EQ(ag[0].bytes, 2 * kRoot);
  EXPECT_EQ(ag[1].bytes, 2 * (16'777'216 + 2 * 2'048));  // 33,562,624
  EXPECT_EQ(ag[2].bytes, 2 * (16'777'216 + 2 * 2'048));
  int transposes[2] = {0, 0};
  int casts = 0;
  for (const Task& t : s.tasks) {
    if (t.kind != TaskKind::kKernel) continue;
    const std::string_view name = s.kernels[static_cast<size_t>(t.kernel)].name;
    if (name == "float8.transpose_weight_fp8") ++transposes[t.micro_batch];
    casts += name == "float8.cast_weight" || name == "float8.cast_weight_t" ||
             name == "float8.cast_transpose_weight";
  }
  // 4 blocks of 4 GEMMs (qkv, out, gate-up, down), once a step.
  EXPECT_EQ(transposes[0], 16);
  EXPECT_EQ(transposes[1], 0);
  EXPECT_EQ(casts, 0);
}

TEST(MegatronSchedule, OverlappedReductionStartsBeforeTheBackwardEnds) {
  const WorkloadSpec w = spec("DISTRIBUTED_OPTIMIZER", "  megatron:\n    bucket_size: 20000000\n");
  const FsdpSchedule s = build_fsdp_schedule(w);
  // Blocks 3 and 2's bucket is issued before block 1's last backward kernel.
  const int32_t first_rs = first_index(s, TaskKind::kReduceScatter);
  int32_t last_block1 = -1;
  for (int32_t i = 0; i < s.size(); ++i) {
    const Task& t = s.tasks[static_cast<size_t>(i)];
    if (t.kind == TaskKind::kKernel && t.unit == 1 && t.phase == Phase::kBackward &&
        t.micro_batch == 1) {
      last_block1 = i;
    }
  }
  EXPECT_LT(first_rs, last_block1);
}

TEST(MegatronSchedule, DefaultBucketSizeAndNoOverlap) {
  // max(40M, 4 x 1M): blocks 3, 2, 1 (50.3M), then block 0 and the root.
  const FsdpSchedule s = build_fsdp_schedule(spec("DISTRIBUTED_OPTIMIZER"));
  const std::vector<Task> rs = of_kind(s, TaskKind::kReduceScatter);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].bytes, 4 * 3 * kBlock);
  EXPECT_EQ(rs[1].bytes, 4 * (kBlock + kRoot));
  // Without the overlaps: one bucket, reduced after the last backward
  // kernel, and gathered after the optimizer step.
  const FsdpSchedule o = build_fsdp_schedule(
      spec("DISTRIBUTED_OPTIMIZER",
           "  megatron:\n    overlap_grad_reduce: false\n    overlap_param_gather: false\n"));
  ASSERT_EQ(o.count(TaskKind::kReduceScatter), 1);
  ASSERT_EQ(o.count(TaskKind::kAllGather), 1);
  const int32_t rs_index = first_index(o, TaskKind::kReduceScatter);
  for (int32_t i = rs_index; i < o.size(); ++i) {
    const Task& t = o.tasks[static_cast<size_t>(i)];
    EXPECT_FALSE(t.kind == TaskKind::kKernel && t.phase == Phase::kBackward) << i;
  }
  EXPECT_EQ(o.tasks[static_cast<size_t>(rs_index)].bytes, 4 * (4 * kBlock + kRoot));
  const int32_t ag_index = first_index(o, TaskKind::kAllGather);
  EXPECT_GT(ag_index, first_index(o, TaskKind::kOptimizer));
  EXPECT_EQ(o.tasks[static_cast<size_t>(ag_index)].phase, Phase::kOptimizer);
}

TEST(MegatronSchedule, PlainDdpAllReducesItsBuckets) {
  const FsdpSchedule s = build_fsdp_schedule(spec("NO_SHARD", "  megatron:\n    ddp: true\n"));
  EXPECT_EQ(s.count(TaskKind::kAllGather), 0);
  EXPECT_EQ(s.count(TaskKind::kReduceScatter), 0);
  const std::vector<Task> ar = of_kind(s, TaskKind::kAllReduce);
  ASSERT_EQ(ar.size(), 2u);
  EXPECT_EQ(ar[0].bytes, 4 * 3 * kBlock);
  EXPECT_EQ(ar[1].bytes, 4 * (kBlock + kRoot));
  for (const Task& t : ar) EXPECT_EQ(t.group, GroupRole::kReplica);
}

TEST(MegatronSchedule, StepsRunEndToEnd) {
  for (const std::string_view strategy : {"DISTRIBUTED_OPTIMIZER", "NO_SHARD", "FULL_SHARD"}) {
    StepConfig c;
    c.workload = spec(strategy, strategy == "NO_SHARD"     ? "  megatron:\n    ddp: true\n"
                                : strategy == "FULL_SHARD" ? "  megatron:\n    fsdp: true\n"
                                                           : "");
    c.compute = compute_spec_from_profile(test_support::h100());
    const StepResult r = simulate_step(test_support::hgx_h100(1), test_support::h100(), c);
    EXPECT_GT(r.step_time_s, 0) << strategy;
    // The first bucket's (or unit's) all-gather is exposed.
    if (strategy != "NO_SHARD") {
      EXPECT_GT(r.breakdown.exposed_comm_s(), 0);
    }
  }
}

}  // namespace
}  // namespace clustersim::workloads
