// `clustersim run` with pipeline stages: the keys' errors name the key and
// what was expected, and a pipelined step reports its bubble.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/config_errors.h"
#include "tests/support/run_clustersim.h"

namespace clustersim {
namespace {

using test_support::contains;
using test_support::run;

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";

TEST(PipelineRun, StagesThatDoNotDivideTheRanksAreAnError) {
  const auto r = run({"run", kScenario, "--set", "workload.parallelism.pp=3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.parallelism.pp"));
  EXPECT_TRUE(contains(r.err, "expected a divisor of world_size 8 / tp 1 = 8, found 3")) << r.err;
}

TEST(PipelineRun, GradAccumAndMicrobatchesAreOneKeyEach) {
  auto r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
                "workload.grad_accum=2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.grad_accum: expected 1 with pp 2")) << r.err;
  r = run({"run", kScenario, "--set", "workload.pipeline.microbatches=4"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.pipeline.microbatches: expected no value with pp 1"))
      << r.err;
  r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
           "workload.cpu_offload=true"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.cpu_offload: expected false with pp 2")) << r.err;
  r = run({"run", kScenario, "--set", "workload.parallelism.pp=64"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "expected a divisor")) << r.err;
}

TEST(PipelineRun, VirtualStagesGoWithTheInterleavedScheduleOnly) {
  auto r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
                "workload.pipeline.virtual_stages=2"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.pipeline.virtual_stages: expected 1 with schedule 1f1b"))
      << r.err;
  r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
           "workload.pipeline.schedule=interleaved_1f1b", "--set",
           "workload.pipeline.virtual_stages=2", "--set", "workload.pipeline.microbatches=3"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "expected a multiple of pp 2 with interleaved_1f1b")) << r.err;
}

TEST(PipelineRun, ZbvRunsEagerOnTwoChunks) {
  const auto r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
                      "workload.pipeline.schedule=zbv", "--set", "workload.torch_compile=true"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.pipeline.virtual_stages: expected 2 with schedule zbv"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "workload.torch_compile: expected false with schedule zbv")) << r.err;
}

TEST(PipelineRun, ALayerSplitNeedsACountPerChunkSummingToTheLayers) {
  auto r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
                "workload.pipeline.layers_per_stage=16,15"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "workload.pipeline.layers_per_stage: expected counts summing to the "
                              "model's 32 layers, found 31"))
      << r.err;
  r = run({"run", kScenario, "--set", "workload.parallelism.pp=2", "--set",
           "workload.pipeline.layers_per_stage=32"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "expected 2 counts (pp 2 x virtual_stages 1), found 1")) << r.err;
  r = run({"run", kScenario, "--set", "workload.pipeline.layers_per_stage=32"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "expected no value with pp 1")) << r.err;
}

TEST(PipelineRun, APipelinedStepReportsItsStagesAndBubble) {
  const auto r = run({"run", kScenario, "--no-wall-time", "--set", "workload.parallelism.pp=2",
                      "--set", "workload.pipeline.microbatches=4"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "pp 2 (1f1b, 4 micro-batches)")) << r.out;
  EXPECT_TRUE(contains(r.out, "pipeline bubble")) << r.out;
  const auto export_pp = run({"export-chakra", kScenario, "-o", "/nonexistent-dir", "--set",
                              "workload.parallelism.pp=2"});
  EXPECT_EQ(export_pp.code, 1);
  EXPECT_TRUE(contains(export_pp.err, "pipeline stages are not exported yet")) << export_pp.err;
}

}  // namespace
}  // namespace clustersim
