// `clustersim validate` for Kineto (torch.profiler) traces: one measured
// rank's training steps against the scenario's simulated step, per kernel
// class (calibration/kineto_comparison.h has the semantics).
//
// For each trace it prints a heading line naming the trace, the rank and the
// steps averaged, then the table
//   #              class  measured-us  simulated-us    error  measured-count  simulated-count
// one row per kernel class present on either side, then "step" and
// "compute_busy" (times per step in microseconds, error = (simulated -
// measured) / measured, "-" where nothing was measured), and a closing
// comment line with the measured GPU window. It returns the relative errors
// (fractions, not percent) of the counted rows: kernel classes with measured
// time and the step; the caller adds them to validate's summary
// (cases=N median_abs_error=...).
//
// Simulating is the expensive part: simulate_traced_step once per scenario
// and pass its result for every trace of that scenario.
//
// Errors: sim::ConfigError for an unreadable or malformed trace (file:line:col,
// from read_kineto_trace), for warm-up steps that leave no step, and for a
// rank outside the scenario's world (named as the "--rank R" option).
// Thread safety: functions of their arguments; `out` is written only.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "scenario/network_scenario.h"
#include "schedules/step_simulator.h"

namespace clustersim::cli {

struct KinetoValidationOptions {
  // The simulated rank the trace is compared with (a Kineto trace is one
  // rank's). Default: 0.
  int64_t rank = 0;
  // Steps skipped from the start of the trace; nothing for the default
  // (none when the trace has one step, else the first).
  std::optional<int> warmup_steps;
};

// The scenario's step simulated with `rank` traced; ConfigError when `rank`
// is not below the world size.
workloads::StepResult simulate_traced_step(const NetworkScenario& net, int64_t rank = 0);

// Compares the trace at `trace_path` with `simulated` (a result of
// simulate_traced_step for options.rank), prints the table to `out` and
// returns the counted relative errors.
std::vector<double> validate_kineto_trace(const workloads::StepResult& simulated,
                                          const std::string& trace_path, std::ostream& out,
                                          const KinetoValidationOptions& options = {});

// The same, simulating the scenario's step first.
std::vector<double> validate_kineto_trace(const NetworkScenario& net, const std::string& trace_path,
                                          std::ostream& out,
                                          const KinetoValidationOptions& options = {});

}  // namespace clustersim::cli
