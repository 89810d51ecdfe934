#include "workloads/model/workload_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"

namespace clustersim::workloads {
namespace {

sim::ConfigSchema workload_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return schema;
}

WorkloadSpec spec_from_yaml(std::string_view yaml, int64_t world = 8, int64_t per_node = 8) {
  return read_workload_spec(sim::load_scenario_text(yaml, "s.yaml", workload_schema()), world,
                            per_node);
}

std::string error_of(std::string_view yaml, int64_t world = 8, int64_t per_node = 8) {
  try {
    spec_from_yaml(yaml, world, per_node);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Line 1 name, line 2 workload:, then the keys at column 3.
std::string job(std::string_view extra) {
  return "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n" +
         std::string(extra);
}

std::string parallel(std::string_view keys) { return job("  parallelism:\n" + std::string(keys)); }

TEST(WorkloadConfig, DefaultsArePyTorchsAndFullShardOverTheWorld) {
  const WorkloadSpec w = spec_from_yaml(job(""), 8);
  EXPECT_EQ(w.model.name, "llama3-8b");
  EXPECT_EQ(w.seq_len, 8192);
  EXPECT_EQ(w.local_batch, 2);
  EXPECT_EQ(w.grad_accum, 1);
  EXPECT_EQ(w.dtype, Dtype::kBf16);
  EXPECT_EQ(w.strategy, ShardingStrategy::kFullShard);
  EXPECT_EQ(w.tp, 1);
  EXPECT_EQ(w.backward_prefetch, BackwardPrefetch::kBackwardPre);
  EXPECT_FALSE(w.forward_prefetch);
  EXPECT_TRUE(w.limit_all_gathers);
  EXPECT_TRUE(w.reshard_after_forward);
  EXPECT_EQ(w.activation_checkpointing, ActivationCheckpointing::kNone);
  EXPECT_FALSE(w.cpu_offload);
  EXPECT_FALSE(w.torch_compile);
  EXPECT_FALSE(w.cuda_graphs);
  EXPECT_EQ(w.world_size, 8);
  EXPECT_EQ(w.dp_size, 8);
  EXPECT_EQ(w.shard_group_size, 8);
  EXPECT_EQ(w.replica_group_size, 1);
}

TEST(WorkloadConfig, ReadsEveryKey) {
  const WorkloadSpec w = spec_from_yaml(
      job("  grad_accum: 4\n  dtype: fp32\n  activation_checkpointing: selective\n"
          "  cpu_offload: true\n  torch_compile: true\n  cuda_graphs: true\n"
          "  parallelism:\n    strategy: SHARD_GRAD_OP\n    tp: 2\n"
          "  fsdp:\n    backward_prefetch: BACKWARD_POST\n    forward_prefetch: true\n"
          "    limit_all_gathers: false\n    reshard_after_forward: false\n"),
      16);
  EXPECT_EQ(w.grad_accum, 4);
  EXPECT_EQ(w.dtype, Dtype::kFp32);
  EXPECT_EQ(dtype_bytes(w.dtype), 4);
  EXPECT_EQ(w.activation_checkpointing, ActivationCheckpointing::kSelective);
  EXPECT_TRUE(w.cpu_offload);
  EXPECT_TRUE(w.torch_compile);
  EXPECT_TRUE(w.cuda_graphs);
  EXPECT_EQ(w.strategy, ShardingStrategy::kShardGradOp);
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.backward_prefetch, BackwardPrefetch::kBackwardPost);
  EXPECT_TRUE(w.forward_prefetch);
  EXPECT_FALSE(w.limit_all_gathers);
  EXPECT_FALSE(w.reshard_after_forward);
  EXPECT_EQ(w.dp_size, 8);
  EXPECT_EQ(w.shard_group_size, 8);
  EXPECT_EQ(w.replica_group_size, 1);
}

TEST(WorkloadConfig, NamesRoundTrip) {
  EXPECT_EQ(dtype_name(Dtype::kFp16), "fp16");
  EXPECT_EQ(sharding_strategy_name(ShardingStrategy::kHybridShard), "HYBRID_SHARD");
  EXPECT_EQ(backward_prefetch_name(BackwardPrefetch::kNone), "NONE");
  EXPECT_EQ(activation_checkpointing_name(ActivationCheckpointing::kFull), "full");
  EXPECT_EQ(dtype_bytes(Dtype::kBf16), 2);
  EXPECT_EQ(dtype_bytes(Dtype::kFp16), 2);
}

TEST(WorkloadConfig, NoShardReplicatesOverTheDataParallelRanks) {
  const WorkloadSpec w = spec_from_yaml(parallel("    strategy: NO_SHARD\n    tp: 4\n"), 32);
  EXPECT_EQ(w.dp_size, 8);
  EXPECT_EQ(w.shard_group_size, 1);
  EXPECT_EQ(w.replica_group_size, 8);
}

TEST(WorkloadConfig, HybridShardDerivesTheOtherGroupSize) {
  WorkloadSpec w =
      spec_from_yaml(parallel("    strategy: HYBRID_SHARD\n    shard_group_size: 8\n"), 32);
  EXPECT_EQ(w.shard_group_size, 8);
  EXPECT_EQ(w.replica_group_size, 4);
  w = spec_from_yaml(parallel("    strategy: HYBRID_SHARD\n    replica_group_size: 2\n"), 32);
  EXPECT_EQ(w.shard_group_size, 16);
  EXPECT_EQ(w.replica_group_size, 2);
  w = spec_from_yaml(parallel("    strategy: HYBRID_SHARD\n    shard_group_size: 4\n"
                              "    replica_group_size: 4\n    tp: 2\n"),
                     32);
  EXPECT_EQ(w.dp_size, 16);
  EXPECT_EQ(w.shard_group_size, 4);
  EXPECT_EQ(w.replica_group_size, 4);
  // Llama-3-405B-like: 98,304 GPUs, TP 8 in each node, shards of 512.
  w = spec_from_yaml(
      "name: t\nworkload:\n  model: llama3-405b\n  seq_len: 8192\n  local_batch: 1\n"
      "  parallelism:\n    strategy: HYBRID_SHARD\n    shard_group_size: 512\n    tp: 8\n",
      98304);
  EXPECT_EQ(w.dp_size, 12288);
  EXPECT_EQ(w.shard_group_size, 512);
  EXPECT_EQ(w.replica_group_size, 24);
}

TEST(WorkloadConfig, FullShardAcceptsMatchingGroupSizes) {
  const WorkloadSpec w = spec_from_yaml(
      parallel("    shard_group_size: 16\n    replica_group_size: 1\n    tp: 2\n"), 32);
  EXPECT_EQ(w.shard_group_size, 16);
  EXPECT_EQ(w.replica_group_size, 1);
}

TEST(WorkloadConfig, HybridShardSaysWhichProductFails) {
  EXPECT_EQ(error_of(parallel("    strategy: HYBRID_SHARD\n    shard_group_size: 8\n"
                              "    replica_group_size: 3\n"),
                     32),
            "s.yaml:8:23: error: workload.parallelism.shard_group_size: shard_group_size 8 x "
            "replica_group_size 3 = 24, expected 32 = world_size 32 / tp 1");
}

TEST(WorkloadConfig, HybridShardSizeMustDivideTheDataParallelRanks) {
  EXPECT_EQ(error_of(parallel("    strategy: HYBRID_SHARD\n    shard_group_size: 3\n"), 32),
            "s.yaml:8:23: error: workload.parallelism.shard_group_size: expected a divisor of "
            "32 = world_size 32 / tp 1, found 3");
  EXPECT_EQ(error_of(parallel("    strategy: HYBRID_SHARD\n    replica_group_size: 5\n"
                              "    tp: 2\n"),
                     32),
            "s.yaml:8:25: error: workload.parallelism.replica_group_size: expected a divisor of "
            "16 = world_size 32 / tp 2, found 5");
}

TEST(WorkloadConfig, HybridShardNeedsAGroupSize) {
  EXPECT_EQ(error_of(parallel("    strategy: HYBRID_SHARD\n"), 32),
            "s.yaml:7:15: error: workload.parallelism.strategy: expected "
            "workload.parallelism.shard_group_size or workload.parallelism.replica_group_size "
            "with HYBRID_SHARD (the other is derived from 32 = world_size 32 / tp 1), found "
            "neither");
}

TEST(WorkloadConfig, FixedStrategiesRejectOtherGroupSizes) {
  EXPECT_EQ(error_of(parallel("    shard_group_size: 8\n    replica_group_size: 2\n"), 16),
            "s.yaml:7:23: error: workload.parallelism.shard_group_size: expected 16 = "
            "world_size 16 / tp 1 with FULL_SHARD (HYBRID_SHARD for other group sizes), found 8\n"
            "s.yaml:8:25: error: workload.parallelism.replica_group_size: expected 1 with "
            "FULL_SHARD (HYBRID_SHARD for other group sizes), found 2");
  EXPECT_EQ(error_of(parallel("    strategy: NO_SHARD\n    shard_group_size: 2\n"), 16),
            "s.yaml:8:23: error: workload.parallelism.shard_group_size: expected 1 with "
            "NO_SHARD (HYBRID_SHARD for other group sizes), found 2");
}

TEST(WorkloadConfig, TensorParallelismStaysInsideANode) {
  EXPECT_EQ(error_of(parallel("    tp: 16\n"), 32, 8),
            "s.yaml:7:9: error: workload.parallelism.tp: expected a divisor of the GPUs per "
            "node (8; tensor parallelism stays inside a node's NVLink domain), found 16");
}

TEST(WorkloadConfig, TensorParallelismMustSplitTheModel) {
  // A 24-GPU node allows tp 3, but llama3-8b's 32 heads and 8 KV heads do not split 3 ways.
  EXPECT_EQ(error_of(parallel("    tp: 3\n"), 24, 24),
            "s.yaml:7:9: error: workload.parallelism.tp: expected a tensor-parallel degree "
            "dividing heads (32), kv_heads (8) and ffn_hidden (14336), found 3");
}

TEST(WorkloadConfig, SequenceParallelismMustSplitTheTokens) {
  EXPECT_EQ(error_of("name: t\nworkload:\n  model: llama3-8b\n  seq_len: 7\n  local_batch: 1\n"
                     "  parallelism:\n    tp: 2\n"),
            "s.yaml:7:9: error: workload.parallelism.tp: expected a divisor of the tokens of a "
            "micro-batch (local_batch 1 x seq_len 7 = 7; sequence parallelism splits them), "
            "found 2");
}

TEST(WorkloadConfig, MissingBatchKeysPointAtTheModel) {
  EXPECT_EQ(error_of("name: t\nworkload:\n  model: llama3-8b\n"),
            "s.yaml:3:10: error: workload.seq_len: expected a value (the workload needs it), "
            "found nothing\n"
            "s.yaml:3:10: error: workload.local_batch: expected a value (the workload needs "
            "it), found nothing");
}

TEST(WorkloadConfig, ModelErrorsComeFirstAndTogetherWithTheRest) {
  EXPECT_EQ(error_of("name: t\nworkload:\n  seq_len: 8\n"),
            "s.yaml: error: workload.model: expected a model preset or custom (this command "
            "needs a model), found nothing\n"
            "s.yaml: error: workload.local_batch: expected a value (the workload needs it), "
            "found nothing");
}

// Nothing downstream of the model spec knows expert layers, MLA or MTP
// modules yet: a step of such a model is refused, not simulated as a dense
// one. Every other problem of the file comes with it.
TEST(WorkloadConfig, ModelsWithExpertsMlaOrMtpAreRefusedForTheStep) {
  std::string deepseek = job("");
  deepseek.replace(deepseek.find("llama3-8b"), 9, "deepseek-v3");
  EXPECT_EQ(error_of(deepseek),
            "s.yaml:3:10: error: workload.model: expected a dense model: expert layers (MoE), "
            "multi-head latent attention (MLA) and multi-token prediction (MTP) modules are not "
            "simulated by the step model yet, found 'deepseek-v3' (256 experts, top 8)");
  std::string mixtral = job("");
  mixtral.replace(mixtral.find("llama3-8b"), 9, "mixtral-8x7b");
  mixtral.replace(mixtral.find("  local_batch: 2\n"), 17, "");
  EXPECT_EQ(error_of(mixtral),
            "s.yaml:3:10: error: workload.model: expected a dense model: expert layers (MoE) are "
            "not simulated by the step model yet, found 'mixtral-8x7b' (8 experts, top 2)\n"
            "s.yaml:3:10: error: workload.local_batch: expected a value (the workload needs it), "
            "found nothing");

  const std::string custom =
      "name: t\nworkload:\n  model: custom\n  seq_len: 8192\n  local_batch: 2\n"
      "  custom_model:\n    layers: 2\n    hidden: 64\n    heads: 8\n    kv_heads: 8\n"
      "    ffn_hidden: 128\n    vocab: 100\n    activation: swiglu\n    head_dim: 16\n";
  const WorkloadSpec dense = spec_from_yaml(custom);
  EXPECT_EQ(dense.model.head_dim(), 16);
  EXPECT_EQ(error_of(custom + "    experts: 4\n    top_k: 1\n    expert_ffn_hidden: 32\n"
                              "    mtp_layers: 1\n"),
            "s.yaml:15:14: error: workload.custom_model.experts: expected a dense model: expert "
            "layers (MoE) are not simulated by the step model yet, found 4 experts\n"
            "s.yaml:18:17: error: workload.custom_model.mtp_layers: expected a dense model: "
            "multi-token prediction (MTP) modules are not simulated by the step model yet, found "
            "1");
}

TEST(WorkloadConfig, OptimizerImplementationIsFusedUnlessForeachIsAsked) {
  EXPECT_EQ(spec_from_yaml(job("")).optimizer_implementation, OptimizerImplementation::kFused);
  EXPECT_EQ(
      spec_from_yaml(job("  optimizer:\n    implementation: foreach\n")).optimizer_implementation,
      OptimizerImplementation::kForeach);
  EXPECT_EQ(
      spec_from_yaml(job("  optimizer:\n    implementation: fused\n")).optimizer_implementation,
      OptimizerImplementation::kFused);
  EXPECT_EQ(error_of(job("  optimizer:\n    implementation: x\n")),
            "s.yaml:7:21: error: workload.optimizer.implementation: expected one of fused, "
            "foreach, found 'x'");
}

TEST(WorkloadConfig, SchemaRejectsBadValues) {
  EXPECT_THAT(error_of(job("  dtype: int8\n")),
              ::testing::StartsWith("s.yaml:6:10: error: workload.dtype: expected one of"));
  EXPECT_THAT(error_of(job("  grad_accum: 0\n")),
              ::testing::StartsWith("s.yaml:6:15: error: workload.grad_accum: expected"));
  EXPECT_THAT(error_of(parallel("    strategy: ZERO3\n")),
              ::testing::StartsWith("s.yaml:7:15: error: workload.parallelism.strategy: "));
}

}  // namespace
}  // namespace clustersim::workloads
