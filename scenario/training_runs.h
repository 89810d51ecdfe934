// End-to-end training runs as measurements: a file of published (or the
// user's own) runs, each a scenario plus overrides with the tokens/s per GPU
// it measured and, where known, its peak memory; the step model's prediction
// of each; and the fit of the one constant the runs decide, the software
// stack's workload.stack_efficiency (docs/accuracy.md, docs/stacks.md). A
// part's clock is measured, never fitted to training runs.
//
// File format (CSV, '#' comments; columns by header name, any order):
//   id                    a unique name of the run
//   scenario              scenario file, relative to the runs file's directory
//   overrides             blank-separated KEY=VALUE scenario overrides (as --set), may be empty
//   tokens_per_s_per_gpu  measured throughput, > 0; or, instead (a column of its own, one of
//   step_time_s           the two per row), the measured time of one step in seconds, > 0: the
//                         run's tokens/s per GPU are then its simulated step's tokens per GPU
//                         over that time (set_measured_throughput)
//   memory_gib            measured peak memory per GPU in GiB (torch's reserved peak), or blank
//   source                where the figure was published (free text)
// Errors: sim::ConfigError at FILE:LINE:COL naming the column, what was
// expected and what was found (every problem of the file at once).
//
// A fit: the rows whose scenario names one stack file (`stack`) decide its
// efficiency, the value at which the median of log(predicted / measured)
// over those rows is zero (bisection; the prediction rises monotonically
// with it). The stack records the ids it was fitted to in
// workload.stack_efficiency_fitted_to, which validate uses to label each
// row fitted or held out.
//
// Units: tokens/s per GPU, GiB (2^30 bytes). Thread safety: pure functions;
// simulating is single-threaded.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "exec/step_result.h"
#include "hardware/hardware_profile.h"

namespace clustersim::cli {

struct TrainingRun {
  std::string id;
  std::string scenario;  // resolved against the runs file's directory
  std::vector<std::string> overrides;
  double tokens_per_s_per_gpu = 0;
  std::optional<double> memory_gib;
  std::string source;
  sim::SourceLocation where;  // the row
  // Where each of `overrides` is in the runs file (a problem with one is
  // reported there, not as a --set flag); may be empty for a run built in code.
  std::vector<sim::SourceLocation> override_where;
  // Overrides given for every run on the command line (validate's --set),
  // applied before the run's own, which win where both set a key. A problem
  // with one is reported at its flag, naming the run it failed on.
  std::vector<std::string> command_line_overrides;
  // Measured by its step time instead (tokens_per_s_per_gpu is 0 until
  // set_measured_throughput gives it).
  std::optional<double> step_time_s;
};

// True when `path` is a CSV whose header names the scenario column and
// tokens_per_s_per_gpu or step_time_s (files are recognised by content).
bool is_training_runs_file(const std::string& path);

std::vector<TrainingRun> read_training_runs(const std::string& path);
// Every run of several files, in order; an id given in two files is an error
// at the second (a fit's record of its runs, workload.stack_efficiency_fitted_to,
// names them by id).
std::vector<TrainingRun> read_training_runs(const std::vector<std::string>& paths);
// The same for text already in memory; `path` is what messages show and what
// relative scenario paths are resolved against.
std::vector<TrainingRun> parse_training_runs(std::string_view text, const std::string& path);

struct RunPrediction {
  double tokens_per_s_per_gpu = 0;
  double memory_gib = 0;
  double capacity_gib = 0;  // the profile's gpu.memory; memory_gib above it: does not fit
  double step_time_s = 0;
  double tokens_per_step_per_gpu = 0;  // the workload's, whatever the efficiency
  workloads::StepBreakdown breakdown;  // where the step's time goes, mean per rank
  std::string kind;  // "FSDP", "HSDP", "FSDP+TP", ... with the GPU part: "FSDP H100-SXM"
  std::string stack;       // the scenario's `stack` value (after overrides); "" for none
  std::string stack_path;  // its file, resolved; "" for none
  double stack_efficiency = 1;  // the one the prediction used
  int64_t gpus = 0;             // the job's
  std::string fitted_to;   // the run's workload.stack_efficiency_fitted_to
  collectives::HardwareProfile profile;
};

// Called after every step these functions simulate (for progress lines);
// empty: not called.
using StepDone = std::function<void()>;

// The most steps cross_validate_runs simulates for runs on `stack_paths`
// (a total for progress lines; a fit clamped at a bound simulates fewer).
int64_t cross_validation_steps_at_most(const std::vector<std::string>& stack_paths, int folds);
// The same for fit_stack with `runs` runs in its files (those on other
// stacks are not simulated: fewer still).
int64_t stack_fit_steps_at_most(int64_t runs, int folds);

// Simulates the run's step; with `efficiency`, the stack's
// workload.stack_efficiency is replaced by it. Scenario errors propagate as
// sim::ConfigError, among them a step over the default work limits
// (scenario/work_limits.h).
RunPrediction predict_run(const TrainingRun& run, std::optional<double> efficiency = std::nullopt,
                          const StepDone& step_done = {});

// A run measured by its step time gets its tokens/s per GPU from
// `prediction` (any prediction of it): tokens per GPU per step over the
// measured time. Nothing for a run measured in tokens/s.
void set_measured_throughput(TrainingRun& run, const RunPrediction& prediction);

struct EfficiencyFit {
  double stack_efficiency = 0;
  std::vector<std::string> fitted_to;  // ids of the rows it was fitted to
};

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
