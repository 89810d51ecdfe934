// workload.global_batch: the micro-batches it derives, and its errors at the
// keys' lines (workloads/model/global_batch.h).
#include "workloads/model/global_batch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"
#include "workloads/model/workload_config.h"

namespace clustersim::workloads {
namespace {

using ::testing::HasSubstr;

sim::ConfigSchema workload_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_workload_keys(schema);
  return schema;
}

WorkloadSpec spec_from_yaml(std::string_view yaml, int64_t world) {
  return read_workload_spec(sim::load_scenario_text(yaml, "s.yaml", workload_schema()), world, 8);
}

std::string error_of(std::string_view yaml, int64_t world) {
  try {
    spec_from_yaml(yaml, world);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

// Line 1 name, line 2 workload:, line 3 model, line 4 seq_len, line 5
// local_batch, then the extra keys from line 6.
std::string job(std::string_view extra) {
  return "name: t\nworkload:\n  model: llama3-8b\n  seq_len: 8192\n  local_batch: 2\n" +
         std::string(extra);
}

TEST(GlobalBatch, DerivesGradientAccumulationOverTheDataParallelRanks) {
  // 64 GPUs of FSDP: 64 replicas of 2 sequences = 128 per micro-batch; 512 is 4 of them.
  const WorkloadSpec w = spec_from_yaml(job("  global_batch: 512\n"), 64);
  EXPECT_EQ(w.grad_accum, 4);
  EXPECT_EQ(w.global_batch(), 512);
}

TEST(GlobalBatch, IsDerivedWhenNotGiven) {
  const WorkloadSpec w = spec_from_yaml(job("  grad_accum: 3\n"), 16);
  EXPECT_EQ(w.global_batch(), 2 * 3 * 16);
}

TEST(GlobalBatch, CountsHybridShardReplicasAndShardsButNeitherTensorNorContextRanks) {
  // 128 GPUs, tp 2, cp 2: 32 replicas (HSDP 8 shards of 2 cp ranks x 8 replica groups).
  const WorkloadSpec w =
      spec_from_yaml(job("  global_batch: 256\n  parallelism:\n    strategy: HYBRID_SHARD\n"
                         "    shard_group_size: 8\n    tp: 2\n    cp: 2\n"),
                     128);
  EXPECT_EQ(w.batch_replicas(), 32);
  EXPECT_EQ(w.grad_accum, 4);  // 256 / (2 x 32)
  EXPECT_EQ(w.global_batch(), 256);
}

TEST(GlobalBatch, SetsThePipelinesMicroBatchesUnderPipelineParallelism) {
  // tt_405b_3d_h100's run: 512 GPUs, tp 8, pp 8: 8 replicas; local batch 4, global 256.
  const WorkloadSpec w = spec_from_yaml(
      "name: t\nworkload:\n  model: llama3-405b\n  seq_len: 8192\n  local_batch: 4\n"
      "  global_batch: 256\n  parallelism:\n    tp: 8\n    pp: 8\n",
      512);
  EXPECT_EQ(w.grad_accum, 8);  // the pipeline's micro-batches
  EXPECT_EQ(w.global_batch(), 256);
}

TEST(GlobalBatch, NotAMultipleNamesTheProductAndTheNearestValidBatches) {
  EXPECT_EQ(error_of(job("  global_batch: 100\n"), 8),
            "s.yaml:6:17: error: workload.global_batch: expected a multiple of local_batch 2 x 8 "
            "data-parallel replicas (world_size 8 / (tp 1 x pp 1 x cp 1)) = 16 sequences, found "
            "100 (nearest: 96 or 112)");
  EXPECT_THAT(error_of(job("  global_batch: 10\n"), 8), HasSubstr("found 10 (nearest: 16)"));
}

TEST(GlobalBatch, DisagreeingGradAccumIsAnErrorAtGradAccum) {
  EXPECT_EQ(error_of(job("  global_batch: 64\n  grad_accum: 2\n"), 8),
            "s.yaml:7:15: error: workload.grad_accum: expected 4 (global_batch 64 / (local_batch "
            "2 x 8 data-parallel replicas (world_size 8 / (tp 1 x pp 1 x cp 1)))) or no value, "
            "found 2");
  // Agreeing is fine.
  EXPECT_EQ(spec_from_yaml(job("  global_batch: 64\n  grad_accum: 4\n"), 8).grad_accum, 4);
}

TEST(GlobalBatch, DisagreeingPipelineMicroBatchesIsAnErrorThere) {
  EXPECT_THAT(error_of(job("  global_batch: 64\n  parallelism:\n    pp: 2\n"
                           "  pipeline:\n    microbatches: 4\n"),
                       8),
              HasSubstr("s.yaml:10:19: error: workload.pipeline.microbatches: expected 8 "
                        "(global_batch 64 / (local_batch 2 x 4 data-parallel replicas"));
}

TEST(GlobalBatch, AnInterleavedCountThatIsNoMultipleOfPpPointsAtTheGlobalBatch) {
  // pp 4 over 16 GPUs: 4 replicas of 2 sequences; 24 sequences are 3 micro-batches, not a
  // multiple of pp 4 as interleaved 1F1B needs.
  EXPECT_THAT(error_of(job("  global_batch: 24\n  parallelism:\n    pp: 4\n"
                           "  pipeline:\n    schedule: interleaved_1f1b\n    virtual_stages: 2\n"),
                       16),
              HasSubstr("s.yaml:6:17: error: workload.pipeline.microbatches: expected a "
                        "multiple of pp 4 with interleaved_1f1b"));
}

TEST(GlobalBatch, ReportedWithEveryOtherProblemAtOnce) {
  const std::string error = error_of(job("  global_batch: 100\n  parallelism:\n    tp: 3\n"), 8);
  EXPECT_THAT(error, HasSubstr("workload.parallelism.tp: expected a divisor"));
  // tp 3 does not divide the world: the replicas are the mesh's error, not the batch's.
  EXPECT_THAT(error, ::testing::Not(HasSubstr("workload.global_batch")));
}

}  // namespace
}  // namespace clustersim::workloads
