// A measured training step (a Kineto trace of one rank, see kineto_trace.h)
// against the simulated step of the same scenario (workloads::simulate_step
// with that rank traced), per kernel class.
//
// Both sides are reduced to one StepSummary: per calibration::KernelClass
// the kernels per step and their summed durations, the step time, and the
// compute busy time. Units: microseconds (double) throughout.
//
// Simulated side (simulated_step_summary), from the records of one traced
// rank (StepResult::trace):
//  * tracks "compute", "comm", "reduce", "tp" and "pcie" are GPU work; "host"
//    (kernel launches) and "cpu" (the CPU optimizer of cpu_offload) are not
//    and are skipped.
//  * class of a record, by its category (simulated_kernel_class): kernels
//    gemm -> gemm, attention -> flash_attention, optimizer -> optimizer,
//    FSDP2's copies (kernels named fsdp.*: the all-gather's copy-out, the
//    reduce-scatter's chunk_cat, gradient casts) -> fsdp_copy (in a trace:
//    the copies launched inside FSDP::... ranges), other elementwise, norm,
//    embedding and loss -> elementwise (Kineto's classifier puts RMSNorm,
//    rotary, SwiGLU, softmax... there too);
//    collectives all_gather, reduce_scatter, all_reduce -> nccl_* of that
//    kind, any other collective -> nccl_other; PCIe copies (category "pcie")
//    -> memory (cudaMemcpy shows up as gpu_memcpy in a trace), and so do
//    async TP's copy-engine copies (category "async_tp"); pipeline and
//    context-parallel sends and receives (tracks "pp", "cp") -> nccl_other
//    (NCCL's SendRecv kernels).
//  * a collective counts from this rank's arrival to its end (wait +
//    duration), not from the group's start: a real NCCL kernel starts on
//    its rank's stream when launched and spins until its peers join, so a
//    measured NCCL kernel includes that wait.
//  * step time: StepResult::step_time_s (the step of the whole job: a
//    collective makes every rank wait for the slowest);
//  * compute busy: the length of the union of the rank's compute-track
//    intervals (the same quantity KinetoStep::compute_busy_us measures:
//    non-NCCL, non-memory kernels).
//
// Measured side (measured_step_summary): the mean over the trace's steps
// after skipping `warmup_steps` (default: none when the trace has one step,
// else the first, whose first-iteration costs (allocator growth, cuBLAS and
// Triton autotuning, lazy module loading) the simulator does not model).
// Counts are means too (so they may be fractional).
//  * step time: the ProfilerStep#N CPU marker's duration. torch.profiler
//    opens the marker of step n in prof.step() and closes it at the next
//    prof.step(), so the markers tile the training loop and their duration
//    is the iteration period, the quantity tokens/s is computed from. That
//    is what the simulated step time predicts: the simulation starts with
//    the host issuing the first kernel and ends when the last GPU work of
//    the step (the optimizer) is done, with the host blocked until then.
//    The GPU window (first kernel start to last kernel end of the step's
//    work) leaves out the host time before the first kernel and is
//    reported for reference only (MeasuredSteps::gpu_window_us); when the
//    host does not synchronise at the end of a step the marker can be
//    shorter than the GPU work, and the GPU window says so.
//  * compute busy: KinetoStep::compute_busy_us.
//
// Comparison (compare_kineto_step): one row per kernel class that has
// kernels on either side (in KernelClass order), then "step" and
// "compute_busy". relative_error = (simulated - measured) / measured, absent
// when nothing was measured (a class only the simulator has). A row is
// `counted` (one case of the validation summary) when it is a kernel class
// with measured time > 0 or the step; compute_busy is shown but not counted,
// being a sum of the class rows above it. A class the trace has and the
// simulation lacks (for example "other": kernels the classifier cannot
// place) is a row with simulated 0 and error -100%.
//
// Errors: warm-up steps that leave no step to average are a
// sim::ConfigError at the trace's last step marker. A rank absent from the
// simulated trace is an sim::InvariantError (callers trace the rank they
// compare).
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/kineto_trace.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::calibration {

// Kernels of one class in one step.
struct StepClassTotals {
  double count = 0;        // kernels (a mean over steps on the measured side)
  double duration_us = 0;  // summed durations (overlaps counted twice)
};

struct StepSummary {
  double step_us = 0;
  double compute_busy_us = 0;
  std::array<StepClassTotals, kKernelClassCount> by_class{};

  const StepClassTotals& totals(KernelClass c) const { return by_class[static_cast<size_t>(c)]; }
};

// The class a simulated record counts in; nothing for host and CPU work.
std::optional<KernelClass> simulated_kernel_class(const workloads::TraceRecord& record);

// The summary of rank `rank` of a step simulated with `rank` in trace_ranks.
StepSummary simulated_step_summary(const workloads::StepResult& result, int64_t rank);

struct MeasuredSteps {
  StepSummary mean;                   // over the averaged steps
  double gpu_window_us = 0;           // mean KinetoStep::gpu_wall_us(), for reference
  std::vector<int64_t> step_numbers;  // the N of the averaged ProfilerStep#N
  int skipped_steps = 0;              // warm-up steps left out (the first ones)
};

// `warmup_steps`: how many steps to skip from the start; nothing for the
// default (0 with one step, else 1). ConfigError when none would be left.
MeasuredSteps measured_step_summary(const KinetoTrace& trace,
                                    std::optional<int> warmup_steps = std::nullopt);

struct KinetoComparisonRow {
  std::string name;         // kernel_class_name(), "step" or "compute_busy"
  bool has_counts = false;  // kernel classes only
  double measured_count = 0;
  double simulated_count = 0;
  double measured_us = 0;
  double simulated_us = 0;
  std::optional<double> relative_error;  // (simulated - measured) / measured
  bool counted = false;                  // a case of the validation summary
};

struct KinetoComparison {
  int64_t rank = 0;  // the simulated rank
  MeasuredSteps measured;
  StepSummary simulated;
  std::vector<KinetoComparisonRow> rows;  // classes, then "step", "compute_busy"

  // The relative errors of the counted rows, in row order.
  std::vector<double> counted_errors() const;
};

KinetoComparison compare_kineto_step(const KinetoTrace& trace,
                                     const workloads::StepResult& simulated, int64_t rank,
                                     std::optional<int> warmup_steps = std::nullopt);

}  // namespace clustersim::calibration
