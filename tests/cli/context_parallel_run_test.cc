// `clustersim run` with context parallelism: each mesh the ring cannot split
// is an error at its key, and a step with cp reports its ring.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/config_errors.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim {
namespace {

using test_support::contains;
using test_support::run;

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/llama3_8b_fsdp_8xh100.yaml";

std::string rejected(const std::vector<std::string>& overrides) {
  return test_support::rejected_run(kScenario, overrides);
}

TEST(ContextParallelRun, EachMeshTheRingCannotSplitIsAnErrorAtItsKey) {
  std::string err = rejected({"workload.parallelism.cp=3"});
  EXPECT_TRUE(contains(err, "workload.parallelism.cp: expected a divisor of world_size 8 / (tp 1 "
                            "x pp 1) = 8, found 3"))
      << err;
  err = rejected({"workload.parallelism.cp=4", "workload.seq_len=100"});
  EXPECT_TRUE(contains(err, "workload.parallelism.cp: expected 2 x cp to divide seq_len 100"))
      << err;
  err = rejected({"workload.parallelism.cp=2", "workload.parallelism.strategy=NO_SHARD"});
  EXPECT_TRUE(contains(err, "expected 1 with strategy NO_SHARD")) << err;
  err = rejected({"workload.parallelism.cp=2", "workload.attention=math"});
  EXPECT_TRUE(contains(err, "workload.attention: expected flash with cp 2")) << err;
  err = rejected({"workload.parallelism.cp=4", "workload.parallelism.strategy=HYBRID_SHARD",
                  "workload.parallelism.shard_group_size=2"});
  EXPECT_TRUE(contains(err, "workload.parallelism.shard_group_size: expected a shard group of "
                            "whole context-parallel groups"))
      << err;
  err = rejected({"workload.parallelism.cp=2", "workload.parallelism.tp=8",
                  "workload.seq_len=8", "workload.local_batch=1"});
  EXPECT_TRUE(contains(err, "expected a divisor of the tokens of a micro-batch on a rank "
                            "(local_batch 1 x seq_len 8 / cp 2 = 4"))
      << err;
  err = rejected({"workload.context_parallel.rotate_method=ring"});
  EXPECT_TRUE(contains(err, "workload.context_parallel.rotate_method")) << err;
}

TEST(ContextParallelRun, AStepWithCpReportsItsRing) {
  const test_support::ScratchDir dir;
  const std::string json = dir.path() + "/run.json";
  const auto r = run({"run", kScenario, "--no-wall-time", "--json", json, "--set",
                      "workload.parallelism.cp=2", "--set", "workload.seq_len=16384", "--set",
                      "workload.local_batch=1"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string written = test_support::read_all(json);
  EXPECT_TRUE(contains(written, "\"cp\":2") || contains(written, "\"cp\": 2")) << written;
  EXPECT_TRUE(contains(written, "\"exposed_cp_s\"")) << written;
  const auto text = run({"run", kScenario, "--no-wall-time", "--set", "workload.parallelism.cp=2",
                         "--set", "workload.context_parallel.rotate_method=alltoall"});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "tp 1, cp 2 (alltoall) (8 ranks)")) << text.out;
  EXPECT_TRUE(contains(text.out, "exposed CP")) << text.out;
}

}  // namespace
}  // namespace clustersim
