// What an execution of one training step produces, whichever front end
// (FSDP/HSDP/TP schedules, Chakra ET graphs) described it: the step time,
// its breakdown into time accounts, and trace records of the traced ranks.
//
// Units: seconds (double) in results; SimTime in trace records. Ownership:
// TraceRecord's string_views point into the program that was run (schedule
// kernels, Chakra traces): they must not outlive it. Thread safety: plain
// values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/sim_time.h"
#include "workloads/model/memory_model.h"

namespace clustersim::workloads {

// The part of a step a task belongs to.
enum class Phase : uint8_t { kForward, kRecompute, kBackward, kOptimizer };
std::string_view phase_name(Phase phase);

// Units of parameters a task belongs to (FSDP units are transformer blocks
// 0..L-1 and these two).
inline constexpr int32_t kRootUnit = -1;    // embedding + final norm + head
inline constexpr int32_t kWholeModel = -2;  // the optimizer step's unit

// FSDP's copy kernels (workloads/schedules/schedule_tables.cc: the all-gather's
// copy-out, the reduce-scatter's copy-in, gradient casts) are named with
// this prefix; the Kineto writer and the trace comparison tell them by it.
inline constexpr std::string_view kFsdpCopyPrefix = "fsdp.";

// One task of a traced rank, for Chrome/Perfetto traces.
struct TraceRecord {
  int64_t rank = 0;
  std::string_view track;  // "host", "compute", "comm", "reduce", "tp", "pcie"
  std::string_view name;   // kernel or collective name
  // Kernels: their class ("gemm", "attention", ...); collectives their kind
  // ("all_gather", ...); "host", "pcie" or "cpu" otherwise.
  std::string_view category;
  sim::SimTime start;
  sim::SimTime duration;
  int32_t unit = kRootUnit;  // FSDP unit (block index; -1 root, -2 optimizer)
  int32_t micro_batch = 0;
  Phase phase = Phase::kForward;
  // Collectives only:
  int64_t bytes = 0;
  int64_t group_size = 0;
  sim::SimTime wait;  // from this rank's arrival to the last member's arrival
  std::string_view algorithm;
  std::string_view protocol;
};

// Seconds per rank, averaged over ranks; compute + exposed + pipeline_bubble
// + sync_wait + launch_bound + idle = step time for each rank.
struct StepBreakdown {
  double compute_s = 0;
  double exposed_all_gather_s = 0;
  double exposed_reduce_scatter_s = 0;
  double exposed_all_reduce_s = 0;
  double exposed_tp_s = 0;
  double exposed_pcie_s = 0;  // offload copies and the CPU optimizer
  double exposed_cp_s = 0;    // context parallelism's K/V and K/V-gradient exchanges
  // Pipeline parallelism: waiting for another stage's activations or
  // gradients, and a stage's end before the step's (the bubble).
  double pipeline_bubble_s = 0;
  double sync_wait_s = 0;  // waiting for slower members of a group
  double launch_bound_s = 0;
  double idle_s = 0;
  double exposed_comm_s() const {
    return exposed_all_gather_s + exposed_reduce_scatter_s + exposed_all_reduce_s + exposed_tp_s +
           exposed_pcie_s + exposed_cp_s;
  }
};

// What the engine did to simulate a step (`run --engine-stats`): its
// events by kind, which add up to StepResult::events, and the max-min
// solves of its transfers. For finding where a large step's time goes
// (docs/architecture.md, "What bounds the engine's speed").
struct EngineStats {
  uint64_t segment_ends = 0;     // looks that ended a compute segment
  uint64_t relooks = 0;          // looks that found work left (a transfer slowed the segment)
  uint64_t stale_looks = 0;      // looks moved earlier and dropped when reached (not events)
  uint64_t chained_ends = 0;     // segments ended inside a chain, by its last look (not events)
  uint64_t chained_tp_ends = 0;  // TP collectives ended inside a chain (not events)
  uint64_t group_starts = 0;     // collectives and send/recv pairs started after a late host
  uint64_t transfer_begins = 0;  // collectives and send/recv pairs starting to move bytes
  uint64_t transfer_ends = 0;
  uint64_t latency_ends = 0;  // collectives that move nothing ending
  uint64_t flow_solves = 0;   // instants whose starts and ends were solved together
  uint64_t local_ends = 0;    // copies and CPU work of fixed duration
  // Max-min re-solves of a component of coupled flows, the flows they
  // solved in all, and the largest component.
  uint64_t components_solved = 0;
  uint64_t flows_solved = 0;
  uint64_t largest_component = 0;
  // How a timeline collective's member flows were solved (exec/flow_transfers.h):
  // "each flow", "one per bundle" or "by link class", and the link classes
  // met by the last.
  std::string bundle_solve;
  uint64_t link_classes = 0;
};

struct StepResult {
  double step_time_s = 0;
  double tokens_per_s_per_gpu = 0;
  double tflops_per_gpu = 0;  // model FLOPs (model_flops_per_token) per second per GPU
  double mfu = 0;             // tflops_per_gpu / peak
  // Tokens per joule with every GPU drawing its power limit through the
  // step, and with the whole system at its maximum (an upper bound on the
  // energy, so a lower bound on tokens per joule); 0 where the profile gives
  // no power.
  double tokens_per_joule_gpu = 0;
  double tokens_per_joule_system = 0;
  StepBreakdown breakdown;
  MemoryBreakdown memory;
  int64_t memory_capacity_bytes = 0;
  bool fits_in_memory = true;
  int64_t ranks = 0;
  int64_t slowest_rank = 0;        // the rank that finished last (lowest id on ties)
  uint64_t events = 0;             // engine events processed
  int64_t collectives = 0;         // group collectives run
  int64_t tasks_per_rank = 0;      // schedule tasks of one rank
  EngineStats engine;              // what the engine did (--engine-stats)
  // How the engine ran the ranks: EngineResult's fields of the same names.
  int64_t ranks_per_timeline = 1;
  std::vector<std::string> timeline_dims;
  std::string explicit_why;
  std::vector<TraceRecord> trace;  // by rank, then start time
};

}  // namespace clustersim::workloads
