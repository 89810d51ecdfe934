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
// The fit of a stack's efficiency to such runs is scenario/stack_fit.h.
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
#include "scenario/network_scenario.h"

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
  std::string kind;             // "FSDP", "HSDP", "FSDP+TP", ... with the GPU part: "FSDP H100-SXM"
  std::string stack;            // the scenario's `stack` value (after overrides); "" for none
  std::string stack_path;       // its file, resolved; "" for none
  double stack_efficiency = 1;  // the one the prediction used
  int64_t gpus = 0;             // the job's
  std::string fitted_to;        // the run's workload.stack_efficiency_fitted_to
  collectives::HardwareProfile profile;
};

// Called after every step these functions simulate (for progress lines);
// empty: not called.
using StepDone = std::function<void()>;

// Simulates the run's step; with `efficiency`, the stack's
// workload.stack_efficiency is replaced by it. Scenario errors propagate as
// sim::ConfigError, among them a step over the default work limits
// (scenario/work_limits.h).
RunPrediction predict_run(const TrainingRun& run, std::optional<double> efficiency = std::nullopt,
                          const StepDone& step_done = {});

// The run's scenario with its overrides (a problem with one reported at its
// place in the runs file, naming the run).
NetworkScenario load_run_scenario(const TrainingRun& run);
// predict_run for a scenario already loaded.
RunPrediction predict_scenario(const NetworkScenario& net, std::optional<double> efficiency,
                               const StepDone& step_done = {});

// A run measured by its step time gets its tokens/s per GPU from
// `prediction` (any prediction of it): tokens per GPU per step over the
// measured time. Nothing for a run measured in tokens/s.
void set_measured_throughput(TrainingRun& run, const RunPrediction& prediction);

}  // namespace clustersim::cli
