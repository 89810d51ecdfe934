// `clustersim validate RUNS.csv` and `calibrate RUNS.csv`: the per-run table
// with its labels, the cross-validated column, the summaries, and the fit
// written into a stack, on two fast 8-GPU runs whose measurements are the
// model's own predictions at a known stack efficiency.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "cli/table_text.h"
#include "config/atomic_file.h"
#include "config/file_text.h"
#include "scenario/training_runs.h"
#include "sweep/sweep_rows.h"
#include "tests/support/run_clustersim.h"
#include "tests/support/scratch_dir.h"
#include "tests/support/training_run.h"

namespace clustersim::cli {
namespace {

using test_support::Outcome;
using test_support::run;
using test_support::ScratchDir;
using ::testing::HasSubstr;

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/published/tt_8b_h100.yaml";
const std::string kStack = CLUSTERSIM_SOURCE_DIR "/scenarios/stacks/torchtitan.yaml";

// A run of kScenario built in code (tokens/s 1 until a test sets them).
TrainingRun run_of(const std::string& id, std::vector<std::string> overrides = {}) {
  return test_support::training_run(id, kScenario, std::move(overrides));
}

// Two runs measured exactly as the model predicts them at stack efficiency
// 0.65 (their scenario's stack, torchtitan, ships 0.833).
std::string write_runs(const ScratchDir& dir) {
  TrainingRun eager = run_of("eager");
  TrainingRun compiled = run_of("compiled", {"workload.torch_compile=true"});
  compiled.memory_gib = 80.0;
  const double e = predict_run(eager, 0.65).tokens_per_s_per_gpu;
  const double c = predict_run(compiled, 0.65).tokens_per_s_per_gpu;
  const std::string path = dir.file("runs.csv");
  sim::write_file_atomically(path,
                             "id,scenario,overrides,tokens_per_s_per_gpu,memory_gib,source\n"
                             "eager," +
                                 kScenario + ",," + std::to_string(e) + ",,test\n" + "compiled," +
                                 kScenario + ",workload.torch_compile=true," + std::to_string(c) +
                                 ",80,test\n");
  return path;
}

TEST(ValidateRuns, PrintsEveryRunWithItsLabelAndTheSummaries) {
  const ScratchDir dir;
  const std::string runs = write_runs(dir);
  const Outcome r = run({"validate", runs, "--folds", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  // Neither run is in the shipped stack's fitted list: held out. At the
  // shipped efficiency (0.833 > 0.65) both are predicted faster than "measured".
  EXPECT_THAT(r.out, HasSubstr("eager "));
  EXPECT_THAT(r.out, HasSubstr("held out"));
  EXPECT_THAT(r.out, HasSubstr("FSDP h100_96gb_500w"));
  // Leave-one-out: each run's efficiency fitted to the other, which was
  // measured at 0.65 as well, so the cross-validated one is 0.650 and the
  // error ~0.
  EXPECT_THAT(r.out, HasSubstr("0.650"));
  // The summaries by stack and by job size.
  EXPECT_THAT(r.out, HasSubstr("# stack torchtitan: cases=2"));
  EXPECT_THAT(r.out, HasSubstr("# 8-63 GPUs: cases=2"));
  EXPECT_THAT(r.out, HasSubstr("# cross-validated (2 folds): cases=2"));
  // More folds than runs: each run its own fold.
  EXPECT_THAT(run({"validate", runs, "--folds", "5"}).out,
              HasSubstr("# cross-validated (2 folds: leave-one-out; 5 asked): cases=2"));
  EXPECT_THAT(r.out, HasSubstr("# peak memory: cases=1"));
  EXPECT_THAT(r.out, HasSubstr("mem-error the same of peak memory (negative: the model holds less "
                               "than measured)"));
  EXPECT_THAT(r.out, HasSubstr("cases=2 median_abs_error="));
  // --max-error: the shipped efficiency's optimism exceeds 1%.
  EXPECT_EQ(run({"validate", runs, "--max-error", "1"}).code, 1);
}

TEST(ValidateRuns, TheCsvHasEveryColumnOfTheTable) {
  const ScratchDir dir;
  const std::string runs = write_runs(dir);
  const std::string csv = dir.file("rows.csv");
  ASSERT_EQ(run({"validate", runs, "--folds", "2", "--csv", csv}).code, 0);
  const std::string text = sim::read_file_text(csv);
  EXPECT_THAT(text, ::testing::StartsWith(
                        "id,kind,stack,gpus,label,measured_tokens_per_s_per_gpu,"
                        "predicted_tokens_per_s_per_gpu,error,cv_error,cv_stack_efficiency,"
                        "measured_memory_gib,predicted_memory_gib,capacity_gib,memory_error,"
                        "step_time_s,compute_s,exposed_comm_s,sync_wait_s,pipeline_bubble_s,"
                        "source\n"));
  // The compiled run: its efficiency fitted to the eager run alone is 0.65 (the
  // fit's three decimals), its GPU the 96 GB part's 89.41 GiB, its measured
  // memory 80 GiB, and the source 'test'.
  EXPECT_THAT(
      text,
      ::testing::ContainsRegex(
          "\ncompiled,FSDP h100_96gb_500w,torchtitan,8,held out,[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+,"
          "-?[0-9.e+-]+,0.65,80,[0-9.e+-]+,89.4[0-9]*,[0-9.e+-]+,"
          "([0-9.e+-]+,){5}test\n"));
  // The step's columns: its time is the tokens of a rank (seq 8192, local
  // batch 2) over its tokens/s, and the parts of it add up to at most that.
  const TrainingRun eager = run_of("eager");
  const RunPrediction p = predict_run(eager);
  EXPECT_NEAR(p.step_time_s, 2 * 8192 / p.tokens_per_s_per_gpu, 1e-9 * p.step_time_s);
  EXPECT_GT(p.breakdown.compute_s, 0.9 * p.step_time_s);
  EXPECT_LT(p.breakdown.compute_s + p.breakdown.exposed_comm_s() + p.breakdown.sync_wait_s,
            p.step_time_s * (1 + 1e-9));
}

TEST(ValidateRuns, CalibrateFitsTheStackAndRecordsItsRuns) {
  const ScratchDir dir;
  const std::string runs = write_runs(dir);
  const std::string out = dir.file("fit.yaml");
  const Outcome c = run({"calibrate", runs, "--stack", "torchtitan", "-o", out});
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_THAT(c.out, HasSubstr("# workload.stack_efficiency 0.650 fitted to 2 training runs"));
  EXPECT_THAT(c.out, HasSubstr("# 2 runs name the stack, 0 do not (not used)"));
  // The written stack extends the one fitted, with the value and its runs.
  const std::string yaml = sim::read_file_text(out);
  EXPECT_THAT(yaml,
              HasSubstr("\nextends: " + std::filesystem::relative(kStack, dir.path()).string() +
                        "\nname: torchtitan_calibrated\n"));
  EXPECT_THAT(yaml, HasSubstr("  stack_efficiency: 0.650\n  stack_efficiency_fitted_to: >-\n"
                              "    eager compiled\n"));
  // A stack no run names: which stacks they name instead.
  const Outcome none = run({"calibrate", runs, "--stack", "fsdp1", "-o", dir.file("n.yaml")});
  EXPECT_EQ(none.code, 1);
  EXPECT_THAT(none.err, HasSubstr("found none of 2 (they use " + kStack + ")"));
  // Training runs with --base: they fit a stack, not a part's clock.
  const Outcome base =
      run({"calibrate", runs, "--base", CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml", "-o",
           dir.file("p.yaml")});
  EXPECT_EQ(base.code, 1);
  EXPECT_THAT(base.err, HasSubstr("found training runs: they fit a software stack's efficiency, "
                                  "given as --stack STACK"));
  // The output may not be the stack it extends.
  EXPECT_EQ(run({"calibrate", runs, "--stack", kStack, "-o", kStack}).code, 2);
}

// The workflow docs/stacks.md gives for a user's own runs: calibrate a stack
// from them, then check them against it without editing their scenarios.
TEST(ValidateRuns, ASetAppliesToEveryRunBeforeItsOwnOverrides) {
  const ScratchDir dir;
  const std::string runs = write_runs(dir);
  const std::string fit = dir.file("fit.yaml");
  ASSERT_EQ(run({"calibrate", runs, "--stack", "torchtitan", "-o", fit}).code, 0);
  // Against the fitted stack both runs are fitted, at their own efficiency
  // (0.650), so both errors are ~0 where the shipped stack's is not.
  const Outcome r =
      run({"validate", runs, "--set", "stack=" + fit, "--set", "workload.torch_compile=false"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# every run with --set stack=" + fit +
                               " --set workload.torch_compile=false (before its own overrides)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("held out")));
  EXPECT_THAT(r.out, HasSubstr("cases=2 median_abs_error=0.0"));
  // The compiled run's own torch_compile=true won: measured compiled, predicted
  // compiled (eager would be ~14% slower).
  EXPECT_THAT(r.out, HasSubstr("max_abs_error=0.0"));
  // A bad --set is reported at the flag, naming the first run it failed on.
  const Outcome bad = run({"validate", runs, "--set", "workload.seqlen=4096"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--set workload.seqlen=4096"));
  EXPECT_THAT(bad.err, HasSubstr("(applied to run 'eager', " + runs + ":2:1)"));
}

TEST(ValidateRuns, ARunPredictedNotToFitIsSaidSo) {
  const ScratchDir dir;
  const std::string path = dir.file("runs.csv");
  sim::write_file_atomically(path,
                             "id,scenario,overrides,tokens_per_s_per_gpu\n"
                             "b2," +
                                 kScenario + ",,5000\n" + "b8," + kScenario +
                                 ",workload.local_batch=8,5000\n");
  const Outcome r = run({"validate", path});
  ASSERT_EQ(r.code, 0) << r.err;
  // The 96 GB part's 89.4 GiB: local batch 2 fits (77.8 GiB), 8 does not.
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "# b8: predicted peak memory [0-9.]+ GiB is over the GPU's 89.4 GiB"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("# b2: predicted peak memory")));
}

// Fits record their runs by id, and a run counted twice would weigh twice.
TEST(ValidateRuns, ARunGivenTwiceIsAnError) {
  const ScratchDir dir;
  const std::string runs = write_runs(dir);
  const Outcome twice = run({"validate", runs, dir.path() + "/./runs.csv"});
  EXPECT_EQ(twice.code, 1);
  EXPECT_THAT(twice.err, HasSubstr("/./runs.csv: error: expected each runs file once, found this "
                                   "one again"));
  const std::string other = dir.file("other.csv");
  sim::write_file_atomically(other, "id,scenario,tokens_per_s_per_gpu\nmine," + kScenario +
                                        ",5000\ncompiled," + kScenario + ",6000\n");
  const Outcome id =
      run({"calibrate", runs, other, "--stack", "torchtitan", "-o", dir.file("p.yaml")});
  EXPECT_EQ(id.code, 1);
  EXPECT_THAT(id.err, HasSubstr(other +
                                ":3:1: error: id: expected an id no other runs file has, "
                                "found 'compiled' again (first at " +
                                runs + ":3:1)"));
}

// Runs measured by their step time fit and validate as runs measured in
// tokens/s do: step times of the model at efficiency 0.65 give it back.
TEST(ValidateRuns, RunsGivenByStepTimeFitAndValidate) {
  const ScratchDir dir;
  TrainingRun eager = run_of("eager");
  TrainingRun compiled = run_of("compiled", {"workload.torch_compile=true"});
  const double e = predict_run(eager, 0.65).step_time_s;
  const double c = predict_run(compiled, 0.65).step_time_s;
  const std::string path = dir.file("steps.csv");
  sim::write_file_atomically(path, "id,scenario,overrides,step_time_s\neager," + kScenario + ",," +
                                       number_text(e) + "\ncompiled," + kScenario +
                                       ",workload.torch_compile=true," + number_text(c) + "\n");
  const Outcome fit = run({"calibrate", path, "--stack", "torchtitan", "-o", dir.file("p.yaml")});
  ASSERT_EQ(fit.code, 0) << fit.err;
  EXPECT_THAT(fit.out, HasSubstr("# workload.stack_efficiency 0.650 fitted to 2 training runs"));
  const Outcome v = run({"validate", path, "--folds", "2"});
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_THAT(v.out, HasSubstr("# runs given by step_time_s: measured tokens/s per GPU = the "
                               "step's tokens per GPU / that time"));
  // The measured column: 16,384 tokens per GPU over the step time.
  EXPECT_THAT(v.out, HasSubstr(fixed(16384 / e, 1)));
  EXPECT_THAT(v.out, ::testing::ContainsRegex("eager .* 0\\.650 "));
}

TEST(ValidateRuns, ARunsFileCannotBeMixedWithOtherMeasurements) {
  const ScratchDir dir;
  const std::string runs = write_runs(dir);
  const Outcome r = run({"validate", runs, kScenario});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("every argument after a runs file must be a runs file"));
  // A CSV where the scenario goes: which header it has, not a scenario error.
  const std::string semi = dir.file("semi.csv");
  sim::write_file_atomically(semi, "# mine\nid;scenario;tokens_per_s_per_gpu\na;x.yaml;6100\n");
  const Outcome csv = run({"validate", semi});
  EXPECT_EQ(csv.code, 2);
  EXPECT_THAT(csv.err, HasSubstr("'" + semi + "' is a CSV, not a scenario"));
  EXPECT_THAT(csv.err, HasSubstr("its header is 'id;scenario;tokens_per_s_per_gpu'"));
  const Outcome missing = run({"validate", dir.file("none.csv")});
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot open the scenario: no such file"));
  const Outcome alone = run({"validate", kScenario});
  EXPECT_EQ(alone.code, 2);
  EXPECT_THAT(alone.err, HasSubstr("expected MEASUREMENTS..."));
}

}  // namespace
}  // namespace clustersim::cli
