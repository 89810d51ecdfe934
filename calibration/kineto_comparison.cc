#include "calibration/kineto_comparison.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "calibration/interval_union.h"
#include "config/config_error.h"
#include "sim/check.h"

namespace clustersim::calibration {

namespace {

double us_of(sim::SimTime t) { return static_cast<double>(t.count_ns()) / 1e3; }

std::optional<KernelClass> collective_class(std::string_view kind) {
  if (kind == "all_gather") return KernelClass::kNcclAllGather;
  if (kind == "reduce_scatter") return KernelClass::kNcclReduceScatter;
  if (kind == "all_reduce") return KernelClass::kNcclAllReduce;
  return KernelClass::kNcclOther;
}

std::optional<double> relative_error(double measured, double simulated) {
  if (measured <= 0) return std::nullopt;
  return (simulated - measured) / measured;
}

}  // namespace

std::optional<KernelClass> simulated_kernel_class(const workloads::TraceRecord& record) {
  const std::string_view track = record.track;
  const std::string_view category = record.category;
  // Async TP's copies: copy-engine memcpys (Memcpy PtoP) in a real trace.
  if (category == "async_tp") return KernelClass::kMemory;
  if (track == "compute") {
    // FSDP2's copies around its collectives (workloads/schedules/fsdp_schedule.h).
    if (record.name.starts_with(workloads::kFsdpCopyPrefix)) return KernelClass::kFsdpCopy;
    if (category == "gemm") return KernelClass::kGemm;
    if (category == "attention") return KernelClass::kFlashAttention;
    if (category == "optimizer") return KernelClass::kOptimizer;
    return KernelClass::kElementwise;  // elementwise, norm, embedding, loss
  }
  if (track == "comm" || track == "reduce" || track == "tp") return collective_class(category);
  if (track == "pcie") return KernelClass::kMemory;
  // Pipeline and context-parallel sends and receives: ncclDevKernel_SendRecv.
  if (track == "pp" || track == "cp") return KernelClass::kNcclOther;
  return std::nullopt;  // "host" launches, "cpu" optimizer
}

StepSummary simulated_step_summary(const workloads::StepResult& result, int64_t rank) {
  StepSummary summary;
  summary.step_us = result.step_time_s * 1e6;
  std::vector<std::pair<int64_t, int64_t>> compute;
  bool traced = false;
  for (const workloads::TraceRecord& r : result.trace) {
    if (r.rank != rank) continue;
    traced = true;
    const std::optional<KernelClass> c = simulated_kernel_class(r);
    if (!c) continue;
    // A collective's kernel runs from this rank's arrival (see the header).
    const sim::SimTime duration = is_nccl(*c) ? r.wait + r.duration : r.duration;
    StepClassTotals& totals = summary.by_class[static_cast<size_t>(*c)];
    totals.count += 1;
    totals.duration_us += us_of(duration);
    if (r.track == "compute") {
      compute.emplace_back(r.start.count_ns(), (r.start + r.duration).count_ns());
    }
  }
  CLUSTERSIM_CHECK(traced, "the simulated step traced rank " + std::to_string(rank) +
                               " (StepConfig::trace_ranks holds the compared rank)");
  summary.compute_busy_us = static_cast<double>(union_length(compute)) / 1e3;
  return summary;
}

MeasuredSteps measured_step_summary(const KinetoTrace& trace, std::optional<int> warmup_steps) {
  const size_t steps = trace.steps.size();
  CLUSTERSIM_CHECK(steps > 0, "a Kineto trace has at least one step (read_kineto_trace)");
  const int skip = warmup_steps.value_or(steps == 1 ? 0 : 1);
  CLUSTERSIM_CHECK(skip >= 0, "warm-up steps are not negative");
  if (static_cast<size_t>(skip) >= steps) {
    std::vector<sim::Diagnostic> diagnostics;
    diagnostics.push_back(sim::Diagnostic{
        trace.steps.back().where, "traceEvents",
        "expected more than the " + std::to_string(skip) + " warm-up step(s) to skip, found " +
            std::to_string(steps) + " ProfilerStep#N step(s): none left to compare"});
    throw sim::ConfigError(std::move(diagnostics));
  }
  MeasuredSteps out;
  out.skipped_steps = skip;
  for (size_t s = static_cast<size_t>(skip); s < steps; ++s) {
    const KinetoStep& step = trace.steps[s];
    out.step_numbers.push_back(step.number);
    out.mean.step_us += step.cpu_duration_us;
    out.mean.compute_busy_us += step.compute_busy_us;
    out.gpu_window_us += step.gpu_wall_us();
    for (size_t c = 0; c < kKernelClassCount; ++c) {
      out.mean.by_class[c].count += step.by_class[c].count;
      out.mean.by_class[c].duration_us += step.by_class[c].duration_us;
    }
  }
  const auto n = static_cast<double>(out.step_numbers.size());
  out.mean.step_us /= n;
  out.mean.compute_busy_us /= n;
  out.gpu_window_us /= n;
  for (StepClassTotals& totals : out.mean.by_class) {
    totals.count /= n;
    totals.duration_us /= n;
  }
  return out;
}

std::vector<double> KinetoComparison::counted_errors() const {
  std::vector<double> errors;
  for (const KinetoComparisonRow& row : rows) {
    if (row.counted && row.relative_error) errors.push_back(*row.relative_error);
  }
  return errors;
}

KinetoComparison compare_kineto_step(const KinetoTrace& trace,
                                     const workloads::StepResult& simulated, int64_t rank,
                                     std::optional<int> warmup_steps) {
  KinetoComparison out;
  out.rank = rank;
  out.measured = measured_step_summary(trace, warmup_steps);
  out.simulated = simulated_step_summary(simulated, rank);
  const StepSummary& m = out.measured.mean;
  const StepSummary& s = out.simulated;
  for (size_t i = 0; i < kKernelClassCount; ++i) {
    const auto c = static_cast<KernelClass>(i);
    if (m.totals(c).count == 0 && s.totals(c).count == 0) continue;
    KinetoComparisonRow row;
    row.name = std::string(kernel_class_name(c));
    row.has_counts = true;
    row.measured_count = m.totals(c).count;
    row.simulated_count = s.totals(c).count;
    row.measured_us = m.totals(c).duration_us;
    row.simulated_us = s.totals(c).duration_us;
    row.relative_error = relative_error(row.measured_us, row.simulated_us);
    row.counted = row.relative_error.has_value();
    out.rows.push_back(row);
  }
  KinetoComparisonRow step;
  step.name = "step";
  step.measured_us = m.step_us;
  step.simulated_us = s.step_us;
  step.relative_error = relative_error(step.measured_us, step.simulated_us);
  step.counted = step.relative_error.has_value();
  out.rows.push_back(step);
  KinetoComparisonRow busy;
  busy.name = "compute_busy";
  busy.measured_us = m.compute_busy_us;
  busy.simulated_us = s.compute_busy_us;
  busy.relative_error = relative_error(busy.measured_us, busy.simulated_us);
  out.rows.push_back(busy);
  return out;
}

}  // namespace clustersim::calibration
