// `check` makes every check `run` makes short of simulating, in one pass: a
// file passes check exactly when run accepts it, with the same messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"

namespace clustersim {
namespace {

using test_support::Outcome;
using test_support::run;
using test_support::ScratchDir;

const std::string kProfile = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml";

std::string step_scenario(const std::string& name, const std::string& hardware,
                          const std::string& workload_extra = "") {
  return "name: " + name + "\nhardware: " + hardware +
         "\ncluster:\n  nodes: 2\n  node: hgx_h100\nworkload:\n  model: llama3-8b\n"
         "  seq_len: 1024\n  local_batch: 1\n" +
         workload_extra;
}

// run's stderr with its command's name as check prints it.
std::string as_check(std::string text) {
  for (size_t at = text.find("clustersim run:"); at != std::string::npos;
       at = text.find("clustersim run:", at)) {
    text.replace(at, 15, "clustersim check:");
  }
  return text;
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// What check and run say of the same file and flags: check must refuse
// what run refuses, with run's messages.
void expect_check_says_what_run_says(const std::string& path,
                                     const std::vector<std::string>& flags) {
  const Outcome ran = run(with({"run", path}, flags));
  const Outcome checked = run(with({"check", path}, flags));
  EXPECT_EQ(ran.code, cli::kExitError) << ran.out;
  EXPECT_EQ(checked.code, cli::kExitError) << checked.out;
  EXPECT_EQ(checked.out, "");
  EXPECT_EQ(checked.err, as_check(ran.err));
}

TEST(CheckCommand, APipelineScheduleWithoutItsVirtualStagesIsRefusedAsRunRefusesIt) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", step_scenario("inter", kProfile,
                                        "  parallelism:\n    pp: 2\n  pipeline:\n"
                                        "    schedule: interleaved_1f1b\n    microbatches: 8\n"));
  expect_check_says_what_run_says(path, {});
  EXPECT_NE(
      run({"check", path})
          .err.find("s.yaml:13:5: error: workload.pipeline.virtual_stages (not set: its default): "
                    "expected at least 2 with schedule interleaved_1f1b, found 1"),
      std::string::npos);
}

TEST(CheckCommand, AClusterOverTheGpuLimitIsRefusedAsRunRefusesIt) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", step_scenario("big", kProfile));
  expect_check_says_what_run_says(path, {"--set", "cluster.nodes=10000000"});
  EXPECT_EQ(run({"check", path, "--set", "cluster.nodes=10000000"}).err,
            "--set cluster.nodes=10000000: error: cluster.nodes: expected at most 1048576 GPUs "
            "in all, found 10000000 nodes of 8 GPUs\n");
}

TEST(CheckCommand, AStepOverTheWorkLimitIsRefusedAtItsKeyAsRunRefusesIt) {
  const ScratchDir dir;
  const std::string path = dir.write("s.yaml", step_scenario("work", kProfile));
  expect_check_says_what_run_says(path, {"--max-events", "1000"});
  EXPECT_NE(
      run({"check", path, "--max-events", "1000"}).err.find("s.yaml:4:10: error: cluster.nodes: "),
      std::string::npos)
      << run({"check", path, "--max-events", "1000"}).err;
}

TEST(CheckCommand, AStepThatDoesNotFitPrintsRunsMemoryTableAndError) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml",
                "name: oom\nhardware: h100\ncluster:\n  nodes: 1\n  node: hgx_h100\n"
                "workload:\n  model: llama3-70b\n  seq_len: 8192\n  local_batch: 4\n");
  expect_check_says_what_run_says(path, {});
  const Outcome checked = run({"check", path});
  EXPECT_NE(checked.err.find("clustersim check: error: out of memory: needs "), std::string::npos)
      << checked.err;
  EXPECT_NE(checked.err.find("peak memory per GPU"), std::string::npos);
  // --allow-oom accepts it, as it makes run simulate it.
  const Outcome allowed = run({"check", path, "--allow-oom"});
  EXPECT_EQ(allowed.code, cli::kExitOk) << allowed.err;
  EXPECT_NE(allowed.err.find("clustersim check: warning: out of memory"), std::string::npos);
  EXPECT_NE(allowed.out.find("(does not fit; --allow-oom)"), std::string::npos) << allowed.out;
}

// One file with an unknown key, a hardware name no profile has and a tp
// that does not divide a node: all three in one run of either command.
TEST(CheckCommand, ProblemsOfTheKeysTheProfileAndTheMeshComeInOnePass) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml",
                "name: three\nhardware: h100x\ncluster:\n  nodes: 1\n  node: hgx_h100\n"
                "workload:\n  model: llama3-8b\n  seq_len: 4096\n  local_batch: 1\n"
                "  globl_batch: 8\n  parallelism:\n    tp: 3\n");
  expect_check_says_what_run_says(path, {});
  const Outcome checked = run({"check", path});
  const std::vector<std::string> expected = {
      "s.yaml:10:3: error: workload.globl_batch: unknown key",
      "s.yaml:2:11: error: hardware: expected one of the shipped profiles by its bare name (a100, ",
      "found 'h100x', which this build does not ship",
      "s.yaml:12:9: error: workload.parallelism.tp: expected a divisor of the GPUs per node (8; "
      "tensor parallelism stays inside a node's NVLink domain), found 3"};
  for (const std::string& piece : expected) {
    EXPECT_NE(checked.err.find(piece), std::string::npos) << piece << "\n" << checked.err;
  }
  EXPECT_EQ(std::count(checked.err.begin(), checked.err.end(), '\n'), 3) << checked.err;
}

// A key given a value of the wrong type takes its default for the later
// checks, which must not blame it a second time.
TEST(CheckCommand, AKeyReportedInvalidIsNotBlamedAgainByALaterCheck) {
  const ScratchDir dir;
  const std::string path =
      dir.write("s.yaml", step_scenario("twice", kProfile, "  parallelism:\n    tp: many\n"));
  const Outcome checked = run({"check", path});
  EXPECT_EQ(checked.code, cli::kExitError);
  EXPECT_EQ(checked.err,
            path +
                ":11:9: error: workload.parallelism.tp: expected a positive integer, found "
                "'many'\n");
}

TEST(CheckCommand, ASoundStepSaysWhatWasCheckedAndWhatOnlySimulatingTells) {
  const ScratchDir dir;
  const Outcome checked = run({"check", dir.write("s.yaml", step_scenario("sound", "h100"))});
  ASSERT_EQ(checked.code, cli::kExitOk) << checked.err;
  EXPECT_EQ(checked.err, "");
  EXPECT_TRUE(checked.out.starts_with("ok: sound\n")) << checked.out;
  EXPECT_NE(checked.out.find("  cluster       16 GPUs (2 nodes x 8, hgx_h100), hardware profile "
                             "h100\n"),
            std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("  workload      llama3-8b on 16 ranks: tp 1, pp 1, cp 1, shard "
                             "group 16 x replica group 1\n"),
            std::string::npos)
      << checked.out;
  EXPECT_NE(checked.out.find("  not checked   the step's time"), std::string::npos);
}

TEST(CheckCommand, ForTopoChecksTheClusterAloneAndForKeysTheKeysAlone) {
  const ScratchDir dir;
  const std::string cluster_only =
      dir.write("c.yaml", "name: c\ncluster:\n  nodes: 4\n  node: hgx_h100\n");
  EXPECT_EQ(run({"check", cluster_only}).code, cli::kExitError);
  const Outcome topo = run({"check", cluster_only, "--for", "topo"});
  EXPECT_EQ(topo.code, cli::kExitOk) << topo.err;
  EXPECT_NE(topo.out.find("  cluster       32 GPUs (4 nodes x 8, hgx_h100)\n"), std::string::npos)
      << topo.out;
  const Outcome collective = run({"check", cluster_only, "--for", "collective"});
  EXPECT_EQ(collective.code, cli::kExitError);
  EXPECT_NE(collective.err.find("c.yaml:1:1: error: hardware: missing; expected one of the shipped "
                                "profiles by its bare name"),
            std::string::npos)
      << collective.err;
  const std::string keys_only = dir.write("k.yaml", "name: k\nseed: 3\n");
  EXPECT_EQ(run({"check", keys_only, "--for", "keys"}).code, cli::kExitOk);
  EXPECT_EQ(run({"check", keys_only, "--for", "topo"}).code, cli::kExitError);
  EXPECT_EQ(run({"check", keys_only, "--for", "runs"}).code, cli::kExitUsage);
}

}  // namespace
}  // namespace clustersim
