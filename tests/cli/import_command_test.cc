// `clustersim import` end to end (in-process): the scenario it writes passes
// `check` and `run`, its usage errors exit 2 and its input errors exit 1 with
// the config's file:line:col.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::read_all;
using test_support::run;
using test_support::ScratchDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kConfigs = CLUSTERSIM_SOURCE_DIR "/scenarios/published/configs/";

TEST(ImportCommand, WritesAScenarioThatChecksAndRuns) {
  const ScratchDir dir;
  const std::string out = dir.file("tt8b.yaml");
  const Outcome r = run({"import", "torchtitan", kConfigs + "tt_8b_h100.toml", "--gpus", "8",
                         "--hardware", "h100_96gb_500w", "-o", out});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, StartsWith("clustersim import: wrote " + out + ": "));
  EXPECT_THAT(r.err, HasSubstr(" of its keys without a counterpart (listed in its comments)"));
  const std::string yaml = read_all(out);
  EXPECT_THAT(yaml, StartsWith("# Written by `clustersim import torchtitan` from " + kConfigs +
                               "tt_8b_h100.toml"));
  EXPECT_THAT(yaml, HasSubstr("  local_batch: 2  # [training] batch_size\n"));
  EXPECT_THAT(yaml, HasSubstr("#   [optimizer] lr = 3e-04\n"));
  EXPECT_THAT(yaml, HasSubstr("hardware: "));
  const Outcome check = run({"check", out});
  EXPECT_EQ(check.code, 0) << check.err;
  EXPECT_THAT(check.out, StartsWith("ok: tt_8b_h100\n"));
  const Outcome simulated = run({"run", out, "--no-wall-time"});
  EXPECT_EQ(simulated.code, 0) << simulated.err;
  EXPECT_THAT(simulated.out, HasSubstr("local_batch 2, grad_accum 1, global_batch 16, bf16"));
}

TEST(ImportCommand, WritesToStdoutWithoutAnOutputFile) {
  const Outcome r = run({"import", "nemo", kConfigs + "megatron_gpt_h100.yaml", "--hardware",
                         "h100", "--set", "workload.custom_model.vocab=131072"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("# Written by `clustersim import nemo`"));
  EXPECT_THAT(r.out, HasSubstr("  global_batch: 192  # model.global_batch_size\n"));
  EXPECT_THAT(r.out, HasSubstr("    vocab: 131072  # --set\n"));
  // What is only approximated is said on stderr too.
  EXPECT_THAT(r.err, HasSubstr("clustersim import: note: model.position_embedding_type "
                               "'learned_absolute'"));
}

TEST(ImportCommand, UsageErrorsExitTwo) {
  Outcome r = run({"import", "torchtitn", kConfigs + "tt_8b_h100.toml", "--hardware", "h100"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("clustersim import: error: unknown framework 'torchtitn'; "
                               "expected torchtitan or nemo (did you mean 'torchtitan'?)"));
  r = run({"import", "torchtitan", kConfigs + "tt_8b_h100.toml", "--gpus", "8"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("expected --hardware NAME"));
  r = run({"import", "torchtitan", kConfigs + "tt_8b_h100.toml", "--gpus", "eight", "--hardware",
           "h100"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("option '--gpus' expects a number of GPUs"));
}

TEST(ImportCommand, InputErrorsExitOneAtTheConfigsLines) {
  const ScratchDir dir;
  const std::string config = dir.write("bad.toml",
                                       "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\n"
                                       "local_batch_size = 3\nglobal_batch_size = 20\n");
  Outcome r = run({"import", "torchtitan", config, "--gpus", "8", "--hardware", "h100", "-o",
                   dir.file("out.yaml")});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, config +
                       ":6:21: error: training.global_batch_size: expected a multiple of "
                       "local_batch 3 x 8 data-parallel replicas (world_size 8 / (tp 1 x pp "
                       "1 x cp 1)) = 24 sequences, found 20 (nearest: 24) (written as "
                       "workload.global_batch)\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.yaml")));
  r = run({"import", "nemo", dir.file("missing.yaml"), "--hardware", "h100"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("missing.yaml: error: cannot read the file: no such file"));
}

}  // namespace
}  // namespace clustersim::cli
