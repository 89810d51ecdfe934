#include "cli/validate_kineto.h"

#include <algorithm>
#include <cmath>

#include "calibration/kineto_comparison.h"
#include "calibration/kineto_trace.h"
#include "cli/table_text.h"
#include "config/config_error.h"
#include "config/rank_list.h"
#include "scenario/step_config.h"

namespace clustersim::cli {

namespace {

std::string count_text(double count) {
  // Means over steps: whole numbers print without decimals.
  return count == std::round(count) ? fixed(count, 0) : fixed(count, 2);
}

std::string table_row(const calibration::KinetoComparisonRow& row) {
  std::string text = pad(row.name, 20);
  text += pad(fixed(row.measured_us, 2), 13);
  text += pad(fixed(row.simulated_us, 2), 14);
  text += pad(row.relative_error ? fixed(*row.relative_error * 100.0, 1) + "%" : "-", 9);
  text += pad(row.has_counts ? count_text(row.measured_count) : "-", 16);
  text += pad(row.has_counts ? count_text(row.simulated_count) : "-", 17);
  return text + "\n";
}

std::string heading(const calibration::KinetoTrace& trace, const calibration::KinetoComparison& c) {
  const std::string& trace_path = trace.file;
  const int unattributed_events = trace.unattributed_events;
  std::vector<int64_t> steps = c.measured.step_numbers;
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  std::string text = "# kineto trace " + trace_path + " against simulated rank " +
                     std::to_string(c.rank) + ": mean of ProfilerStep#" +
                     sim::format_rank_list(steps) + " (" +
                     std::to_string(c.measured.step_numbers.size()) + " step(s), " +
                     std::to_string(c.measured.skipped_steps) + " warm-up skipped)";
  if (unattributed_events > 0) {
    text += ", " + std::to_string(unattributed_events) + " GPU event(s) outside steps ignored";
  }
  if (trace.rank && *trace.rank != c.rank) {
    text += "; the trace is rank " + std::to_string(*trace.rank) + "'s";
  }
  return text + "\n";
}

}  // namespace

void check_trace_world_size(const calibration::KinetoTrace& trace, int64_t world) {
  if (!trace.world_size || *trace.world_size == world) return;
  sim::DiagnosticSink sink;
  sink.add(trace.world_size_where, "distributedInfo.world_size",
           "expected the scenario's world size " + std::to_string(world) +
               " (a trace of one rank of the job the scenario describes), found " +
               std::to_string(*trace.world_size));
  sink.throw_if_any();
}

int64_t compared_rank(const calibration::KinetoTrace& trace,
                      const KinetoValidationOptions& options) {
  return options.rank ? *options.rank : trace.rank.value_or(0);
}

std::vector<double> validate_kineto_trace(const workloads::StepResult& simulated,
                                          const calibration::KinetoTrace& trace, std::ostream& out,
                                          const KinetoValidationOptions& options) {
  check_trace_world_size(trace, simulated.ranks);
  const calibration::KinetoComparison comparison = calibration::compare_kineto_step(
      trace, simulated, compared_rank(trace, options), options.warmup_steps);
  out << heading(trace, comparison);
  if (!simulated.fits_in_memory) {
    out << "# note: the memory model says the simulated step does not fit in GPU memory\n";
  }
  out << "#              class  measured-us  simulated-us    error  measured-count  "
         "simulated-count\n";
  for (const calibration::KinetoComparisonRow& row : comparison.rows) out << table_row(row);
  out << "# step = ProfilerStep marker (iteration period); measured GPU window "
      << fixed(comparison.measured.gpu_window_us, 2)
      << " us; cases: classes with measured time, and the step\n";
  return comparison.counted_errors();
}

workloads::StepResult simulate_traced_step(const NetworkScenario& net,
                                           const std::vector<int64_t>& ranks,
                                           const workloads::EngineProgressFn& progress) {
  workloads::StepConfig config = step_config_from_scenario(net);
  const int64_t world = config.workload.world_size;
  for (int64_t rank : ranks) {
    if (rank < 0 || rank >= world) {
      sim::DiagnosticSink sink;
      sink.add(sim::SourceLocation{"--rank " + std::to_string(rank), 0, 0}, "",
               "expected a rank below the scenario's world size " + std::to_string(world) +
                   ", found " + std::to_string(rank));
      sink.throw_if_any();
    }
  }
  config.trace_ranks = ranks;
  config.progress = progress;
  return workloads::simulate_step(net.cluster, net.profile, config);
}

std::vector<double> validate_kineto_trace(const NetworkScenario& net, const std::string& trace_path,
                                          std::ostream& out,
                                          const KinetoValidationOptions& options) {
  // The trace first: a bad file fails before the (longer) simulation.
  const calibration::KinetoTrace trace = calibration::read_kineto_trace(trace_path);
  return validate_kineto_trace(simulate_traced_step(net, {compared_rank(trace, options)}), trace,
                               out, options);
}

}  // namespace clustersim::cli
