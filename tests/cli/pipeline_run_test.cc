// `clustersim run` with pipeline stages: the keys' errors name the key and
// what was expected, and a pipelined step reports its bubble.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/config_errors.h"
#include "tests/support/run_clustersim.h"

namespace clustersim {
namespace {

using test_support::contains;
using test_support::run;

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";

std::string rejected(const std::vector<std::string>& overrides) {
  return test_support::rejected_run(kScenario, overrides);
}

TEST(PipelineRun, StagesThatDoNotDivideTheRanksAreAnError) {
  const std::string err = rejected({"workload.parallelism.pp=3"});
  EXPECT_TRUE(contains(err, "workload.parallelism.pp"));
  EXPECT_TRUE(contains(err, "expected a divisor of world_size 8 / tp 1 = 8, found 3")) << err;
}

TEST(PipelineRun, GradAccumAndMicrobatchesAreOneKeyEach) {
  std::string err = rejected({"workload.parallelism.pp=2", "workload.grad_accum=2"});
  EXPECT_TRUE(contains(err, "workload.grad_accum: expected 1 with pp 2")) << err;
  err = rejected({"workload.pipeline.microbatches=4"});
  EXPECT_TRUE(contains(err, "workload.pipeline.microbatches: expected no value with pp 1")) << err;
  err = rejected({"workload.parallelism.pp=2", "workload.cpu_offload=true"});
  EXPECT_TRUE(contains(err, "workload.cpu_offload: expected false with pp 2")) << err;
  err = rejected({"workload.parallelism.pp=64"});
  EXPECT_TRUE(contains(err, "expected a divisor")) << err;
}

TEST(PipelineRun, VirtualStagesGoWithTheInterleavedScheduleOnly) {
  std::string err = rejected({"workload.parallelism.pp=2", "workload.pipeline.virtual_stages=2"});
  EXPECT_TRUE(contains(err, "workload.pipeline.virtual_stages: expected 1 with schedule 1f1b"))
      << err;
  err = rejected({"workload.parallelism.pp=2", "workload.pipeline.schedule=interleaved_1f1b",
                  "workload.pipeline.virtual_stages=2", "workload.pipeline.microbatches=3"});
  EXPECT_TRUE(contains(err, "expected a multiple of pp 2 with interleaved_1f1b")) << err;
}

TEST(PipelineRun, ZbvRunsEagerOnTwoChunks) {
  const std::string err = rejected({"workload.parallelism.pp=2", "workload.pipeline.schedule=zbv",
                                    "workload.torch_compile=true"});
  // virtual_stages is not set: the error points at the scenario's workload
  // section (line 21) and says the default is what fails.
  EXPECT_TRUE(contains(err,
                       "llama3_8b_fsdp_8xh100.yaml:22:3: error: "
                       "workload.pipeline.virtual_stages (not set: its default): expected 2 "
                       "with schedule zbv, found 1"))
      << err;
  EXPECT_TRUE(contains(err, "workload.torch_compile: expected false with schedule zbv")) << err;
}

TEST(PipelineRun, DualPipeVNeedsTwoMicrobatchesPerStage) {
  const std::string err =
      rejected({"workload.parallelism.pp=4", "workload.pipeline.schedule=dualpipev",
                "workload.pipeline.virtual_stages=2", "workload.pipeline.microbatches=6",
                "workload.torch_compile=true"});
  EXPECT_TRUE(contains(err, "workload.pipeline.microbatches: expected at least 2 x pp = 8 with "
                            "dualpipev"))
      << err;
  EXPECT_TRUE(contains(err, "workload.torch_compile: expected false with schedule dualpipev"))
      << err;
}

TEST(PipelineRun, ALayerSplitNeedsACountPerChunkSummingToTheLayers) {
  std::string err =
      rejected({"workload.parallelism.pp=2", "workload.pipeline.layers_per_stage=16,15"});
  EXPECT_TRUE(contains(err, "workload.pipeline.layers_per_stage: expected counts summing to the "
                            "model's 32 layers, found 31"))
      << err;
  err = rejected({"workload.parallelism.pp=2", "workload.pipeline.layers_per_stage=32"});
  EXPECT_TRUE(contains(err, "expected 2 counts (pp 2 x virtual_stages 1), found 1")) << err;
  err = rejected({"workload.parallelism.pp=2", "workload.pipeline.layers_per_stage=16,x"});
  EXPECT_TRUE(contains(err, "expected comma-separated block counts of at least 1, found '16,x'"))
      << err;
  err = rejected({"workload.pipeline.layers_per_stage=32"});
  EXPECT_TRUE(contains(err, "expected no value with pp 1")) << err;
}

TEST(PipelineRun, GradReductionNeedsAPipeline) {
  const std::string err = rejected({"workload.pipeline.grad_reduction=during_last_backward"});
  EXPECT_TRUE(contains(err, "workload.pipeline.grad_reduction: expected after_last_backward with "
                            "pp 1 (without a pipeline, workload.fsdp.no_sync says when gradients "
                            "are reduced), found during_last_backward"))
      << err;
}

TEST(PipelineRun, APipelinedStepReportsItsStagesAndBubble) {
  const auto r = run({"run", kScenario, "--no-wall-time", "--set", "workload.parallelism.pp=2",
                      "--set", "workload.pipeline.microbatches=4"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "pp 2 (1f1b, 4 micro-batches)")) << r.out;
  EXPECT_TRUE(contains(r.out, "pipeline bubble")) << r.out;
  // The memory is the stage that peaks highest: the last here (the loss over
  // Llama 3's 128K vocabulary outweighs the first stage's extra micro-batch).
  EXPECT_TRUE(contains(r.out, "stage (highest of 2)               1")) << r.out;
}

}  // namespace
}  // namespace clustersim
