// The fit of a software stack's one constant, workload.stack_efficiency, to
// the training runs whose scenario names that stack (docs/stacks.md): the
// value at which the median of log(predicted / measured tokens/s per GPU)
// over those runs is zero, and cross-validation of it (each run predicted by
// an efficiency fitted without it).
//
// Each run's prediction is a smooth, increasing function of the efficiency
// (it scales the tensor-core rate only). A fit simulates every run at a few
// efficiencies, solves on the interpolation between them (linear in log-log),
// simulates the runs at the solution, and repeats until the solution is a
// simulated point to 1e-3: the answer is exact at the simulated point, and
// the folds of a cross-validation reuse the points the others simulated.
//
// Thread safety: pure functions; simulating is single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario/training_runs.h"

namespace clustersim::cli {

struct EfficiencyFit {
  double stack_efficiency = 0;         // to three decimals, in [0.2, 2]
  std::vector<std::string> fitted_to;  // ids of the rows it was fitted to
};

// The most steps one fit of `runs` runs simulates, and the most
// cross_validate_runs simulates for runs on `stack_paths` (totals for
// progress lines: fits that converge early simulate fewer).
int64_t fit_steps_at_most(int64_t runs);
int64_t cross_validation_steps_at_most(const std::vector<std::string>& stack_paths, int folds);
// The same for fit_stack with `runs` runs in its files (those on other
// stacks are not simulated: fewer still).
int64_t stack_fit_steps_at_most(int64_t runs, int folds);

// The stack efficiency that zeroes the median log error of `runs` (all on
// one stack), in [0.2, 2]; clamped at a bound when even it cannot. Requires
// a non-empty `runs` whose throughput is known (set_measured_throughput).
EfficiencyFit fit_stack_efficiency(const std::vector<TrainingRun>& runs,
                                   const StepDone& step_done = {});

struct CrossValidated {
  double error = 0;       // predicted / measured tokens/s - 1
  double efficiency = 0;  // the stack efficiency fitted without the run's fold
};

// K-fold cross-validation (run i in fold i mod folds, folds >= 2): each run
// predicted with the stack efficiency fitted to the runs of the other folds
// on its stack (stack_paths[i], RunPrediction::stack_path); nullopt for a
// run without a stack ("") or whose stack no other fold has a run on.
std::vector<std::optional<CrossValidated>> cross_validate_runs(
    const std::vector<TrainingRun>& runs, const std::vector<std::string>& stack_paths, int folds,
    const StepDone& step_done = {});

// What `calibrate RUNS.csv --stack STACK` fits: the efficiency of the runs
// whose scenario names `stack_path` (the same file), their errors with it,
// and with folds >= 2 their cross-validated errors.
struct StackFit {
  EfficiencyFit fit;
  std::vector<double> in_sample;
  std::vector<double> cross_validated;
  size_t other_runs = 0;  // runs on other stacks or none, not used
};

// Throws sim::ConfigError (at the first runs file) when no run names the stack.
StackFit fit_stack(const std::vector<std::string>& runs_files, const std::string& stack_path,
                   int folds, const StepDone& step_done = {});

}  // namespace clustersim::cli
