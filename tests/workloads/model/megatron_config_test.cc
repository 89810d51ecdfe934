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
                               "with DISTRIBUTED_OPTIMIZER (a PyTorch FSDP option"),
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

// FULL_SHARD at lines 6-7, Megatron-FSDP at lines 8-9, `extra` from line 10.
std::string megatron_fsdp(std::string_view extra = "") {
  return job("  parallelism:\n    strategy: FULL_SHARD\n  megatron:\n    fsdp: true\n" +
             std::string(extra));
}

TEST(MegatronConfig, MegatronFsdpIsFullShardWithItsOwnPrefetchStreamsAndMainGrads) {
  const WorkloadSpec w = spec_from_yaml(megatron_fsdp(), 8);
  EXPECT_TRUE(w.megatron_fsdp);
  EXPECT_FALSE(w.megatron);  // no Megatron DDP buckets
  EXPECT_TRUE(w.megatron_core());
  EXPECT_EQ(w.strategy, ShardingStrategy::kFullShard);
  EXPECT_EQ(w.shard_group_size, 8);
  // What megatron_fsdp.py does: the next unit prefetched in both passes,
  // resharded after forward, reduce-scatters on their own stream every
  // micro-batch, fp32 main gradients for bf16, [seq, batch, hidden].
  EXPECT_TRUE(w.forward_prefetch);
  EXPECT_EQ(w.backward_prefetch, BackwardPrefetch::kBackwardPre);
  EXPECT_TRUE(w.reshard_after_forward);
  EXPECT_TRUE(w.separate_reduce_stream);
  EXPECT_FALSE(w.no_sync);
  EXPECT_FALSE(w.limit_all_gathers);
  EXPECT_EQ(w.reduce_dtype, Dtype::kFp32);
  EXPECT_EQ(w.tp_sequence_dim, 0);
  const WorkloadSpec d =
      spec_from_yaml(megatron_fsdp("    fsdp_double_buffer: true\n  fsdp:\n    reduce_dtype: bf16\n"
                                   "  activation_checkpointing: attention_core\n"));
  EXPECT_TRUE(d.limit_all_gathers);
  EXPECT_EQ(d.reduce_dtype, Dtype::kBf16);  // --grad-reduce-in-bf16
  EXPECT_EQ(d.activation_checkpointing, ActivationCheckpointing::kAttentionCore);
}

TEST(MegatronConfig, MegatronFsdpCombinationsAreRejectedAtTheirKeys) {
  EXPECT_THAT(error_of(distributed("  megatron:\n    fsdp: true\n")),
              AllOf(StartsWith("s.yaml:9:11: error: workload.megatron.fsdp: expected false with "
                               "strategy DISTRIBUTED_OPTIMIZER (Megatron-FSDP is modelled with "
                               "its optim_grads_params sharding"),
                    HasSubstr("found true")));
  EXPECT_THAT(error_of(megatron_fsdp("  fsdp:\n    no_sync: true\n")),
              AllOf(StartsWith("s.yaml:11:14: error: workload.fsdp.no_sync: expected no value "
                               "with workload.megatron.fsdp (a PyTorch FSDP option; "
                               "Megatron-FSDP prefetches"),
                    HasSubstr("found true")));
  EXPECT_THAT(error_of(megatron_fsdp("    overlap_grad_reduce: false\n")),
              StartsWith("s.yaml:10:26: error: workload.megatron.overlap_grad_reduce: expected "
                         "true or no value with workload.megatron.fsdp"));
  EXPECT_THAT(error_of(megatron_fsdp("    bucket_size: 1000\n")),
              AllOf(StartsWith("s.yaml:10:18: error: workload.megatron.bucket_size: expected no "
                               "value with workload.megatron.fsdp"),
                    HasSubstr("found 1000")));
  EXPECT_THAT(error_of(megatron_fsdp("  cpu_offload: true\n")),
              StartsWith("s.yaml:10:16: error: workload.cpu_offload: expected false with "
                         "workload.megatron.fsdp"));
  EXPECT_THAT(error_of(distributed("  megatron:\n    fsdp_double_buffer: true\n")),
              AllOf(StartsWith("s.yaml:9:25: error: workload.megatron.fsdp_double_buffer: "
                               "expected no value without workload.megatron.fsdp"),
                    HasSubstr("found true")));
  EXPECT_THAT(error_of(job("  parallelism:\n    strategy: FULL_SHARD\n    pp: 2\n"
                           "  megatron:\n    fsdp: true\n")),
              AllOf(StartsWith("s.yaml:10:11: error: workload.megatron.fsdp: expected false with "
                               "pp 2 (Megatron-FSDP with pipeline stages is not modelled)"),
                    HasSubstr("found true")));
  // Every problem of the file at once.
  const std::string both =
      error_of(megatron_fsdp("    bucket_size: 1000\n  fsdp:\n"
                             "    forward_prefetch: false\n"));
  EXPECT_THAT(both, AllOf(HasSubstr("s.yaml:10:18: error: workload.megatron.bucket_size"),
                          HasSubstr("s.yaml:12:23: error: workload.fsdp.forward_prefetch")));
}

TEST(MegatronConfig, Fp8ParamGatherNeedsTheDistributedOptimizerAndATransformerEngineRecipe) {
  for (const std::string_view recipe : {"delayed", "current", "blockwise"}) {
    EXPECT_TRUE(spec_from_yaml(distributed("  float8:\n    recipe: " + std::string(recipe) +
                                           "\n  megatron:\n    fp8_param_gather: true\n"))
                    .fp8_param_gather)
        << recipe;
  }
  EXPECT_THAT(error_of(distributed("  float8:\n    recipe: tensorwise\n"
                                   "  megatron:\n    fp8_param_gather: true\n")),
              AllOf(StartsWith("s.yaml:11:23: error: workload.megatron.fp8_param_gather: "
                               "expected false with DISTRIBUTED_OPTIMIZER and float8.recipe "
                               "tensorwise"),
                    HasSubstr("recipe delayed, current or blockwise")));
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
  for (const std::string_view recipe : {"current", "blockwise"}) {
    const WorkloadSpec w = spec_from_yaml(distributed(
        "  float8:\n    recipe: " + std::string(recipe) + "\n    weight_casts: once_per_step\n"));
    EXPECT_EQ(w.float8_weight_casts, Float8WeightCasts::kOncePerStep) << recipe;
  }
  EXPECT_EQ(spec_from_yaml(job("  float8:\n    recipe: current\n")).float8, Float8Recipe::kCurrent);
  EXPECT_EQ(spec_from_yaml(job("  float8:\n    recipe: blockwise\n")).float8,
            Float8Recipe::kBlockwise);
  EXPECT_THAT(error_of(job("  float8:\n    recipe: tensorwise\n    weight_casts: once_per_step\n")),
              AllOf(StartsWith("s.yaml:8:19: error: workload.float8.weight_casts: expected "
                               "every_micro_batch with recipe tensorwise"),
                    HasSubstr("found once_per_step")));
}

}  // namespace
}  // namespace clustersim::workloads
