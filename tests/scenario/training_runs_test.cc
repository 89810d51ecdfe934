// cli/training_runs: the runs file reader (errors at FILE:LINE:COL) and the
// prediction of a run with its stack (the fit of a stack is stack_fit_test).
#include "scenario/training_runs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "config/atomic_file.h"
#include "tests/support/config_errors.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/training_run.h"

namespace clustersim::cli {
namespace {

using test_support::ScratchDir;

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/published/tt_8b_h100.yaml";

// A run of kScenario built in code (tokens/s 1 until a test sets them).
TrainingRun run_of(const std::string& id, std::vector<std::string> overrides = {}) {
  return test_support::training_run(id, kScenario, std::move(overrides));
}

std::string write(const ScratchDir& dir, const std::string& text) {
  const std::string path = dir.file("runs.csv");
  sim::write_file_atomically(path, text);
  return path;
}

TEST(TrainingRuns, ReadsRowsResolvingScenariosAgainstTheFile) {
  const ScratchDir dir;
  const std::string path = write(dir,
                                 "# comment\n"
                                 "id,scenario,overrides,tokens_per_s_per_gpu,memory_gib,source\n"
                                 "a,x.yaml,,100,,paper A\n"
                                 "b,/abs/y.yaml,cluster.nodes=2 workload.torch_compile=true,"
                                 "200.5,61.5,paper B\n");
  EXPECT_TRUE(is_training_runs_file(path));
  const std::vector<TrainingRun> runs = read_training_runs(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, "a");
  EXPECT_EQ(runs[0].scenario, dir.file("x.yaml"));
  EXPECT_TRUE(runs[0].overrides.empty());
  EXPECT_EQ(runs[0].tokens_per_s_per_gpu, 100);
  EXPECT_FALSE(runs[0].memory_gib.has_value());
  EXPECT_EQ(runs[1].scenario, "/abs/y.yaml");
  EXPECT_EQ(runs[1].overrides,
            (std::vector<std::string>{"cluster.nodes=2", "workload.torch_compile=true"}));
  EXPECT_EQ(runs[1].memory_gib, 61.5);
  EXPECT_EQ(runs[1].source, "paper B");
  EXPECT_EQ(runs[1].where.line, 4);
}

// A misspelt key in a row's overrides is reported at that override in the
// runs file (row 3, at the override's column), not as a --set flag, and names the run;
// a problem of the scenario file itself names the run and its row.
TEST(TrainingRuns, AnOverridesProblemIsReportedAtItsPlaceInTheFile) {
  const ScratchDir dir;
  dir.write("bad.yaml", "name: bad\nseed: -3\n");
  const std::string path = write(dir,
                                 "id,scenario,overrides,tokens_per_s_per_gpu\n"
                                 "a," +
                                     kScenario +
                                     ",,100\n"
                                     "b," +
                                     kScenario +
                                     ",cluster.nodes=2 workload.seqlen=4096,100\n"
                                     "c,bad.yaml,,100\n");
  const std::vector<TrainingRun> runs = read_training_runs(path);
  ASSERT_EQ(runs.size(), 3u);
  ASSERT_EQ(runs[1].override_where.size(), 2u);
  const int column = static_cast<int>(("b," + kScenario + ",cluster.nodes=2 ").size()) + 1;
  EXPECT_EQ(runs[1].override_where[1].to_string(), path + ":3:" + std::to_string(column));
  std::string e = test_support::config_error([&] { predict_run(runs[1]); });
  EXPECT_TRUE(test_support::contains(
      e, path + ":3:" + std::to_string(column) + ": error: workload.seqlen: unknown key"))
      << e;
  EXPECT_TRUE(test_support::contains(e, "(in the overrides of run 'b')")) << e;
  EXPECT_FALSE(test_support::contains(e, "--set")) << e;
  e = test_support::config_error([&] { predict_run(runs[2]); });
  EXPECT_TRUE(test_support::contains(e, dir.file("bad.yaml") + ":2:7: error: seed:")) << e;
  EXPECT_TRUE(test_support::contains(e, "(the scenario of run 'c', " + path + ":4:1)")) << e;
}

TEST(TrainingRuns, ReportsEveryBadCellWithItsPlace) {
  const ScratchDir dir;
  const std::string path = write(dir,
                                 "id,scenario,overrides,tokens_per_s_per_gpu,memory_gib\n"
                                 "a,x.yaml,nodes,0,\n"
                                 "a,,,12,-1\n");
  const std::string e = test_support::config_error([&] { read_training_runs(path); });
  EXPECT_TRUE(test_support::contains(
      e, path + ":2:10: error: overrides: expected KEY=VALUE, found 'nodes'"))
      << e;
  EXPECT_TRUE(test_support::contains(
      e, path + ":2:16: error: tokens_per_s_per_gpu: expected a number > 0, found '0'"))
      << e;
  EXPECT_TRUE(
      test_support::contains(e, path + ":3:1: error: id: expected a unique id, found 'a' again"))
      << e;
  EXPECT_TRUE(test_support::contains(e, path + ":3:3: error: scenario: expected a scenario file"))
      << e;
  EXPECT_TRUE(test_support::contains(e, "memory_gib: expected a number > 0 or nothing, found '-1'"))
      << e;
}

// A run's throughput may be given as its measured step time instead.
TEST(TrainingRuns, AStepTimeStandsForTheThroughput) {
  const ScratchDir dir;
  const std::string path = write(dir,
                                 "id,scenario,tokens_per_s_per_gpu,step_time_s\n"
                                 "a," +
                                     kScenario +
                                     ",,3.2\n"
                                     "b," +
                                     kScenario + ",6000,\n");
  EXPECT_TRUE(is_training_runs_file(path));
  std::vector<TrainingRun> runs = read_training_runs(path);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].step_time_s, 3.2);
  EXPECT_EQ(runs[0].tokens_per_s_per_gpu, 0);
  EXPECT_FALSE(runs[1].step_time_s.has_value());
  // The throughput: a GPU's tokens in one step (seq 8192 x local batch 2)
  // over the measured time; a run measured in tokens/s keeps them.
  const RunPrediction p = predict_run(runs[0]);
  EXPECT_NEAR(p.tokens_per_step_per_gpu, 16384, 1e-6);
  set_measured_throughput(runs[0], p);
  EXPECT_NEAR(runs[0].tokens_per_s_per_gpu, 16384 / 3.2, 1e-6);
  set_measured_throughput(runs[1], p);
  EXPECT_EQ(runs[1].tokens_per_s_per_gpu, 6000);
  // One measurement a row, a step time above zero, and a column for it.
  const std::string bad = write(dir,
                                "id,scenario,tokens_per_s_per_gpu,step_time_s\n"
                                "a,x.yaml,5000,2.5\n"
                                "b,x.yaml,,0\n"
                                "c,x.yaml,,\n");
  const std::string e = test_support::config_error([&] { read_training_runs(bad); });
  EXPECT_TRUE(test_support::contains(e, bad + ":2:15: error: step_time_s: expected nothing where "
                                              "tokens_per_s_per_gpu is given (one measurement a "
                                              "run), found '2.5'"))
      << e;
  EXPECT_TRUE(test_support::contains(
      e, bad + ":3:11: error: step_time_s: expected a number of seconds > 0, found '0'"))
      << e;
  EXPECT_TRUE(test_support::contains(e, bad + ":4:10: error: tokens_per_s_per_gpu: expected a "
                                              "number > 0 (or a step_time_s), found ''"))
      << e;
  const std::string neither = write(dir, "id,scenario,memory_gib\na,x.yaml,60\n");
  EXPECT_FALSE(is_training_runs_file(neither));
  EXPECT_TRUE(test_support::contains(
      test_support::config_error([&] { read_training_runs(neither); }),
      neither + ":1:1: error: tokens_per_s_per_gpu: expected a column named tokens_per_s_per_gpu "
                "or step_time_s (what was measured), found neither"));
}

TEST(TrainingRuns, AFileWithoutTheColumnsIsNotARunsFile) {
  const ScratchDir dir;
  const std::string path = write(dir, "m,n,k,tflops\n1,2,3,4\n");
  EXPECT_FALSE(is_training_runs_file(path));
  EXPECT_FALSE(is_training_runs_file(dir.file("missing.csv")));
}

TEST(TrainingRuns, PredictionNamesTheKindTheStackAndItsEfficiency) {
  const TrainingRun run = run_of("r");
  const RunPrediction p = predict_run(run);
  EXPECT_EQ(p.kind, "FSDP h100_96gb_500w");
  EXPECT_EQ(p.stack, "torchtitan");
  EXPECT_TRUE(test_support::contains(p.stack_path, "scenarios/stacks/torchtitan.yaml"))
      << p.stack_path;
  EXPECT_EQ(p.gpus, 8);
  EXPECT_EQ(p.stack_efficiency, 0.833);  // torchtitan.yaml's
  EXPECT_TRUE(test_support::contains(p.fitted_to, "tt_8b_8xh100"));
  EXPECT_GT(p.tokens_per_s_per_gpu, 0);
  EXPECT_GT(p.memory_gib, 50);
  // Another efficiency scales the tensor-core rate, and only that: a lower
  // one is slower, though by less than its ratio (memory-bound kernels and
  // exposed communication keep their time).
  const RunPrediction slower = predict_run(run, 0.5);
  EXPECT_EQ(slower.stack_efficiency, 0.5);
  const double ratio = slower.tokens_per_s_per_gpu / p.tokens_per_s_per_gpu;
  EXPECT_LT(ratio, 0.9);
  EXPECT_GT(ratio, 0.5 / 0.833);
}

}  // namespace
}  // namespace clustersim::cli
