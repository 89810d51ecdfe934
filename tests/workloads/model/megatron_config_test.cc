// Megatron-Core's data-parallel modes as scenario keys: what they derive,
// and each combination they cannot run, reported at its key's
// file:line:col with what was expected and what was found.
#include "workloads/model/megatron_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"

namespace clustersim::workloads {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

WorkloadSpec spec_from_yaml(std::string_view yaml, int64_t world = 8) {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return read_workload_spec(sim::load_scenario_text(yaml, "s.yaml", schema), world, 8);
}

std::string error_of(std::string_view yaml, int64_t world = 8) {
  try {
    spec_from_yaml(yaml, world);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Line 1 name, line 2 workload:, lines 3-5 the model and batch; `extra`
// from line 6 at column 3.
std::string job(std::string_view extra) {
  return "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n" +
         std::string(extra);
}

// The distributed optimizer's parallelism section at lines 6-7, `extra` from line 8.
std::string distributed(std::string_view extra = "") {
  return job("  parallelism:\n    strategy: DISTRIBUTED_OPTIMIZER\n" + std::string(extra));
}

TEST(MegatronConfig, DefaultBucketIsMegatronCoresFortyMillionOrAMillionPerRank) {
  EXPECT_EQ(megatron_default_bucket_params(2), 40'000'000);
  EXPECT_EQ(megatron_default_bucket_params(40), 40'000'000);
  EXPECT_EQ(megatron_default_bucket_params(64), 64'000'000);
}

TEST(MegatronConfig, DistributedOptimizerShardsOverTheDataParallelRanks) {
  const WorkloadSpec w = spec_from_yaml(distributed(), 64);
  EXPECT_EQ(w.strategy, ShardingStrategy::kDistributedOptimizer);
  EXPECT_TRUE(w.megatron);
  EXPECT_EQ(w.shard_group_size, 64);
  EXPECT_EQ(w.replica_group_size, 1);
  EXPECT_TRUE(w.overlap_grad_reduce);
  EXPECT_TRUE(w.overlap_param_gather);
  EXPECT_EQ(w.bucket_params, 64'000'000);  // max(40M, 1M x 64)
  // Megatron-LM accumulates bf16 training's gradients in fp32, and lays
  // activations out [seq, batch, hidden].
  EXPECT_EQ(w.reduce_dtype, Dtype::kFp32);
  EXPECT_EQ(w.tp_sequence_dim, 0);
}

TEST(MegatronConfig, KeysOverrideTheDefaults) {
  const WorkloadSpec w = spec_from_yaml(
      distributed("  fsdp:\n    reduce_dtype: bf16\n  megatron:\n    overlap_grad_reduce: false\n"
                  "    overlap_param_gather: false\n    bucket_size: 1000000\n"));
  EXPECT_EQ(w.reduce_dtype, Dtype::kBf16);
  EXPECT_FALSE(w.overlap_grad_reduce);
  EXPECT_FALSE(w.overlap_param_gather);
  EXPECT_EQ(w.bucket_params, 1'000'000);
}

TEST(MegatronConfig, NoShardWithDdpIsPlainMegatronDdp) {
  const WorkloadSpec w =
      spec_from_yaml(job("  parallelism:\n    strategy: NO_SHARD\n  megatron:\n    ddp: true\n"));
  EXPECT_TRUE(w.megatron);
  EXPECT_EQ(w.shard_group_size, 1);
  EXPECT_EQ(w.replica_group_size, 8);
  // PyTorch's DDP stays as it was.
  EXPECT_FALSE(spec_from_yaml(job("  parallelism:\n    strategy: NO_SHARD\n")).megatron);
}

TEST(MegatronConfig, PipelineGradReductionFollowsTheOverlap) {
  const std::string pipelined =
      "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n"
      "  parallelism:\n    strategy: DISTRIBUTED_OPTIMIZER\n    pp: 2\n";
  EXPECT_TRUE(spec_from_yaml(pipelined).reduce_during_last_backward);
  EXPECT_FALSE(spec_from_yaml(pipelined + "  megatron:\n    overlap_grad_reduce: false\n")
                   .reduce_during_last_backward);
  EXPECT_THAT(error_of(pipelined + "  pipeline:\n    grad_reduction: after_last_backward\n"),
              AllOf(StartsWith("s.yaml:10:21: error: workload.pipeline.grad_reduction: expected "
                               "during_last_backward or no value with DISTRIBUTED_OPTIMIZER"),
                    HasSubstr("found after_last_backward")));
}

TEST(MegatronConfig, CpuOffloadIsRejectedAtItsKey) {
  EXPECT_THAT(error_of(job("  cpu_offload: true\n  parallelism:\n"
                           "    strategy: DISTRIBUTED_OPTIMIZER\n")),
              AllOf(StartsWith("s.yaml:6:16: error: workload.cpu_offload: expected false with "
                               "DISTRIBUTED_OPTIMIZER"),
                    HasSubstr("found true")));
}

TEST(MegatronConfig, GroupSizesAreRejectedAtTheirKeys) {
  EXPECT_THAT(error_of(distributed("    shard_group_size: 4\n")),
              AllOf(StartsWith("s.yaml:8:23: error: workload.parallelism.shard_group_size: "
                               "expected no value with DISTRIBUTED_OPTIMIZER"),
                    HasSubstr("found 4")));
  EXPECT_THAT(error_of(distributed("    replica_group_size: 2\n")),
              StartsWith("s.yaml:8:25: error: workload.parallelism.replica_group_size: "
                         "expected no value with DISTRIBUTED_OPTIMIZER"));
}

TEST(MegatronConfig, CheckpointingModesBelongToTheirLayouts) {
  EXPECT_THAT(error_of(job("  activation_checkpointing: attention_core\n")),
              AllOf(StartsWith("s.yaml:6:29: error: workload.activation_checkpointing: expected "
                               "none, full or selective with strategy FULL_SHARD"),
                    HasSubstr("found attention_core")));
  EXPECT_THAT(error_of(job("  activation_checkpointing: selective\n  parallelism:\n"
                           "    strategy: DISTRIBUTED_OPTIMIZER\n")),
              AllOf(StartsWith("s.yaml:6:29: error: workload.activation_checkpointing: expected "
                               "none, full or attention_core with DISTRIBUTED_OPTIMIZER"),
                    HasSubstr("found selective")));
  EXPECT_EQ(spec_from_yaml(job("  activation_checkpointing: attention_core\n  parallelism:\n"
                               "    strategy: DISTRIBUTED_OPTIMIZER\n"))
                .activation_checkpointing,
            ActivationCheckpointing::kAttentionCore);
}

TEST(MegatronConfig, FsdpOptionsAreRejectedAtTheirKeys) {
  EXPECT_THAT(error_of(distributed("  fsdp:\n    no_sync: true\n")),
              AllOf(StartsWith("s.yaml:9:14: error: workload.fsdp.no_sync: expected no value "
                               "with DISTRIBUTED_OPTIMIZER (an FSDP option"),
                    HasSubstr("found true")));
  EXPECT_THAT(error_of(distributed("    tp_sequence_dim: 1\n")),
              StartsWith("s.yaml:8:22: error: workload.parallelism.tp_sequence_dim: expected 0 "
                         "with DISTRIBUTED_OPTIMIZER"));
}

TEST(MegatronConfig, MegatronKeysNeedAMegatronStrategy) {
  EXPECT_THAT(error_of(job("  megatron:\n    bucket_size: 1000\n")),
              AllOf(StartsWith("s.yaml:7:18: error: workload.megatron.bucket_size: expected no "
                               "value with strategy FULL_SHARD"),
                    HasSubstr("found 1000")));
  EXPECT_THAT(error_of(job("  megatron:\n    ddp: true\n")),
              StartsWith("s.yaml:7:10: error: workload.megatron.ddp: expected false with "
                         "strategy FULL_SHARD"));
  EXPECT_THAT(error_of(distributed("  megatron:\n    ddp: false\n")),
              StartsWith("s.yaml:9:10: error: workload.megatron.ddp: expected true or no value "
                         "with DISTRIBUTED_OPTIMIZER"));
  EXPECT_THAT(error_of(job("  parallelism:\n    strategy: NO_SHARD\n  megatron:\n    ddp: true\n"
                           "    overlap_param_gather: true\n")),
              StartsWith("s.yaml:10:27: error: workload.megatron.overlap_param_gather: expected "
                         "no value with NO_SHARD"));
}

TEST(MegatronConfig, Fp8ParamGatherNeedsTheDistributedOptimizerAndDelayedScaling) {
  EXPECT_TRUE(spec_from_yaml(distributed("  float8:\n    recipe: delayed\n"
                                         "  megatron:\n    fp8_param_gather: true\n"))
                  .fp8_param_gather);
  EXPECT_THAT(error_of(distributed("  megatron:\n    fp8_param_gather: true\n")),
              AllOf(StartsWith("s.yaml:9:23: error: workload.megatron.fp8_param_gather: expected "
                               "false with DISTRIBUTED_OPTIMIZER and float8.recipe none"),
                    HasSubstr("found true")));
  EXPECT_THAT(error_of(job("  float8:\n    recipe: delayed\n  megatron:\n"
                           "    fp8_param_gather: true\n")),
              StartsWith("s.yaml:9:23: error: workload.megatron.fp8_param_gather: expected no "
                         "value with strategy FULL_SHARD"));
}

TEST(MegatronConfig, SixteenBitOptimizerStateIsTheDistributedOptimizers) {
  EXPECT_EQ(
      spec_from_yaml(distributed("  megatron:\n    optimizer_dtype: bf16\n")).optimizer_state_bytes,
      2);
  EXPECT_EQ(spec_from_yaml(distributed()).optimizer_state_bytes, 4);
  EXPECT_THAT(error_of(job("  parallelism:\n    strategy: NO_SHARD\n  megatron:\n    ddp: true\n"
                           "    optimizer_dtype: bf16\n")),
              AllOf(StartsWith("s.yaml:10:22: error: workload.megatron.optimizer_dtype: expected "
                               "fp32 with NO_SHARD"),
                    HasSubstr("found bf16")));
  EXPECT_THAT(error_of(distributed("  megatron:\n    optimizer_dtype: bf16\n"
                                   "    store_param_remainders: true\n")),
              StartsWith("s.yaml:10:29: error: workload.megatron.store_param_remainders: expected "
                         "false with DISTRIBUTED_OPTIMIZER, dtype bf16 and optimizer_dtype bf16"));
}

TEST(MegatronConfig, WeightsCastOncePerStepAreTransformerEnginesAlone) {
  EXPECT_EQ(spec_from_yaml(distributed("  float8:\n    recipe: delayed\n"
                                       "    weight_casts: once_per_step\n"))
                .float8_weight_casts,
            Float8WeightCasts::kOncePerStep);
  EXPECT_EQ(spec_from_yaml(job("")).float8_weight_casts, Float8WeightCasts::kEveryPass);
  EXPECT_THAT(error_of(job("  float8:\n    recipe: tensorwise\n    weight_casts: once_per_step\n")),
              AllOf(StartsWith("s.yaml:8:19: error: workload.float8.weight_casts: expected "
                               "every_micro_batch with recipe tensorwise"),
                    HasSubstr("found once_per_step")));
}

}  // namespace
}  // namespace clustersim::workloads
