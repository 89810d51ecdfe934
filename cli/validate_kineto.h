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
// from read_kineto_trace), for warm-up steps that leave no step, for a
// rank outside the scenario's world (named as the "--rank R" option) and
// for a trace of another world size.
// Thread safety: functions of their arguments; `out` is written only.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "calibration/kineto_trace.h"
#include "scenario/network_scenario.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::cli {

struct KinetoValidationOptions {
  // The simulated rank the trace is compared with (a Kineto trace is one
  // rank's). Default: the rank the trace says it is (torch.profiler's
  // distributedInfo), else 0.
  std::optional<int64_t> rank;
  // Steps skipped from the start of the trace; nothing for the default
  // (none when the trace has one step, else the first).
  std::optional<int> warmup_steps;
};

// The scenario's step simulated with `ranks` traced; ConfigError when one
// is not below the world size. `progress`: EngineOptions::progress.
workloads::StepResult simulate_traced_step(const NetworkScenario& net,
                                           const std::vector<int64_t>& ranks = {0},
                                           const workloads::EngineProgressFn& progress = {});

// ConfigError at the trace's distributedInfo.world_size when it gives
// another world size than `world`: its collectives and shards are another
// job's (checked before simulating, and again by validate_kineto_trace).
void check_trace_world_size(const calibration::KinetoTrace& trace, int64_t world);

// The simulated rank `trace` is compared with under `options`.
int64_t compared_rank(const calibration::KinetoTrace& trace,
                      const KinetoValidationOptions& options);

// Compares `trace` with `simulated` (a result of simulate_traced_step with
// compared_rank among its ranks), prints the table to `out` and returns the
// counted relative errors (check_trace_world_size first).
std::vector<double> validate_kineto_trace(const workloads::StepResult& simulated,
                                          const calibration::KinetoTrace& trace, std::ostream& out,
                                          const KinetoValidationOptions& options = {});

// The same, simulating the scenario's step first.
std::vector<double> validate_kineto_trace(const NetworkScenario& net, const std::string& trace_path,
                                          std::ostream& out,
                                          const KinetoValidationOptions& options = {});

}  // namespace clustersim::cli
