// scenario/stack_fit: the fit of a stack's efficiency must recover an
// efficiency hidden in synthetic measurements (runs "measured" as the model
// predicts them at a known efficiency), its cross-validation must give it
// back for each fold, and the progress totals must bound what it simulates.
#include "scenario/stack_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tests/support/training_run.h"

namespace clustersim::cli {
namespace {

const std::string kScenario = CLUSTERSIM_SOURCE_DIR "/scenarios/published/tt_8b_h100.yaml";
const std::string kStack = CLUSTERSIM_SOURCE_DIR "/scenarios/stacks/torchtitan.yaml";

// Two runs of torchtitan's Llama-3-8B on 8 H100, eager and compiled,
// measured exactly as predicted at `efficiency`.
std::vector<TrainingRun> measured_at(double efficiency) {
  TrainingRun eager = test_support::training_run("eager", kScenario);
  TrainingRun compiled =
      test_support::training_run("compiled", kScenario, {"workload.torch_compile=true"});
  eager.tokens_per_s_per_gpu = predict_run(eager, efficiency).tokens_per_s_per_gpu;
  compiled.tokens_per_s_per_gpu = predict_run(compiled, efficiency).tokens_per_s_per_gpu;
  return {eager, compiled};
}

TEST(StackFit, RecoversTheEfficiencyAtAStartPoint) {
  int64_t steps = 0;
  const EfficiencyFit fit = fit_stack_efficiency(measured_at(0.6), [&steps] { ++steps; });
  EXPECT_NEAR(fit.stack_efficiency, 0.6, 0.0011);
  EXPECT_EQ(fit.fitted_to, (std::vector<std::string>{"eager", "compiled"}));
  // The three start points of both runs, then at most one round at 0.600,
  // which is one of them: nothing more.
  EXPECT_EQ(steps, 3 * 2);
}

// 0.77 is none of the start points (0.6, 1.0, 1.4): the fit must simulate
// at its interpolated solution until that solution is a simulated point.
TEST(StackFit, RecoversTheEfficiencyBetweenStartPointsBySimulatingAtTheSolution) {
  int64_t steps = 0;
  const EfficiencyFit fit = fit_stack_efficiency(measured_at(0.77), [&steps] { ++steps; });
  EXPECT_NEAR(fit.stack_efficiency, 0.77, 0.0011);
  EXPECT_GT(steps, 3 * 2);
  EXPECT_LE(steps, fit_steps_at_most(2));
  // Faster measurements need a higher efficiency.
  std::vector<TrainingRun> faster = measured_at(0.77);
  for (TrainingRun& run : faster) run.tokens_per_s_per_gpu *= 1.05;
  EXPECT_GT(fit_stack_efficiency(faster).stack_efficiency, 0.78);
}

// Outside [0.2, 2] the fit stops at the bound.
TEST(StackFit, ClampsAtItsBounds) {
  std::vector<TrainingRun> runs = measured_at(1.0);
  for (TrainingRun& run : runs) run.tokens_per_s_per_gpu *= 100;
  EXPECT_EQ(fit_stack_efficiency(runs).stack_efficiency, 2.0);
  for (TrainingRun& run : runs) run.tokens_per_s_per_gpu /= 1e4;
  EXPECT_EQ(fit_stack_efficiency(runs).stack_efficiency, 0.2);
}

// Each fold's efficiency is fitted to the other run, measured at the same
// 0.77: it comes back (to the interpolation's accuracy within 0.02 of a
// simulated point), and the run it predicts is then within a fraction of a
// percent.
TEST(StackFit, CrossValidationGivesEachFoldTheOtherRunsEfficiency) {
  const std::vector<TrainingRun> runs = measured_at(0.77);
  const std::vector<std::string> stacks(2, kStack);
  int64_t steps = 0;
  const std::vector<std::optional<CrossValidated>> cv =
      cross_validate_runs(runs, stacks, 2, [&steps] { ++steps; });
  ASSERT_EQ(cv.size(), 2u);
  for (const auto& fold : cv) {
    ASSERT_TRUE(fold.has_value());
    EXPECT_NEAR(fold->efficiency, 0.77, 0.003);
    EXPECT_NEAR(fold->error, 0, 0.003);
  }
  EXPECT_LE(steps, cross_validation_steps_at_most(stacks, 2));
  // A run without a stack is not cross-validated, nor fitted to.
  const std::vector<std::optional<CrossValidated>> none =
      cross_validate_runs(runs, {kStack, ""}, 2);
  EXPECT_FALSE(none[0].has_value());
  EXPECT_FALSE(none[1].has_value());
}

// The totals of calibrate's and validate's progress lines, by hand: a fit of
// n runs simulates at most n x (3 start points + 6 rounds); per fold, a fit
// of each stack to the other folds' runs on it, then a prediction of each of
// its runs; folds beyond the runs are empty.
TEST(StackFit, TheMostStepsCrossValidationAndTheFitSimulate) {
  EXPECT_EQ(fit_steps_at_most(2), 2 * 9);
  const std::vector<std::string> one = {"a", "a", "a", "a", "a"};
  EXPECT_EQ(cross_validation_steps_at_most(one, 1), 0);
  EXPECT_EQ(cross_validation_steps_at_most(one, 2), (9 * 2 + 3) + (9 * 3 + 2));
  EXPECT_EQ(cross_validation_steps_at_most({"a", "a", "a"}, 10), 3 * (9 * 2 + 1));
  // Runs 0 and 2 on "a" are in fold 0, run 1 on "b" in fold 1: fold 0's
  // runs have no other "a" to fit to, fold 1's no other "b".
  EXPECT_EQ(cross_validation_steps_at_most({"a", "b", "a"}, 2), 0);
  // With a third fold, fold 2's "a" fits to run 0.
  EXPECT_EQ(cross_validation_steps_at_most({"a", "b", "a"}, 3), (9 + 1) + (9 + 1));
  // Runs without a stack are left out.
  EXPECT_EQ(cross_validation_steps_at_most({"", "", ""}, 3), 0);
  EXPECT_EQ(stack_fit_steps_at_most(4, 2), 4 + 9 * 4 + 4 + 9 * 4 * 1 + 4);
}

}  // namespace
}  // namespace clustersim::cli
