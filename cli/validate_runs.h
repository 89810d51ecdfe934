// `clustersim validate RUNS.csv...`: the step model against end-to-end
// training runs (cli/training_runs.h). Prints one row per run (measured and
// predicted tokens/s per GPU, the error, and whether the run is one its
// profile's sustained clock was fitted to or held out; memory where the run
// published it), a summary per kind (strategy and hardware profile) and an
// overall line. With folds > 1, each run is also predicted by a clock fitted
// without its fold (runs i with i mod folds == fold, in file order), so that
// every row has a cross-validated error.
//
// Errors are of the throughput: predicted / measured - 1, so a positive
// error is an optimistic prediction. Thread safety: single-threaded.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/progress.h"

namespace clustersim::cli {

struct RunsValidationOptions {
  int folds = 0;                    // 0 or 1: no cross-validation
  std::optional<double> max_error;  // percent; exit 1 when the median |error| exceeds it
  // Non-empty: also write the rows there as CSV (atomically), columns id,
  // kind, label, measured_tokens_per_s_per_gpu, predicted_tokens_per_s_per_gpu,
  // error, cv_error, cv_clock, measured_memory_gib, predicted_memory_gib,
  // capacity_gib (the GPU's), memory_error, then the predicted step's
  // step_time_s, compute_s, exposed_comm_s, sync_wait_s, pipeline_bubble_s
  // (seconds, mean per rank: where its time goes), source (errors as
  // fractions; empty where there is none).
  std::string csv_path;
  // KEY=VALUE overrides (--set) applied to every run's scenario before the
  // run's own overrides, e.g. hardware=PROFILE to check a calibrated profile.
  std::vector<std::string> overrides;
  // Progress (runs predicted, then the cross-validation's steps) and the CSV
  // written, on `err` (cli/progress.h).
  StatusMode status = StatusMode::kLines;
};

// Returns the exit code (1 when max_error is exceeded). Throws
// sim::ConfigError for a bad runs file or scenario.
int run_validate_runs(const std::vector<std::string>& files, const RunsValidationOptions& options,
                      std::ostream& out, std::ostream& err);

}  // namespace clustersim::cli
