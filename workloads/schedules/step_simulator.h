// One training step of an FSDP/HSDP/DDP job replayed event by event on every
// rank of a cluster (docs/architecture.md, "How a scenario becomes a step").
//
// Ranks and groups. Rank r runs on GPU r of the cluster (the job fills the
// cluster from GPU 0; world_size <= gpu_count). Ranks are laid out as
// torchtitan's device mesh [replica, shard, tp] (tp fastest):
//   r = (replica * shard_group_size + shard) * tp + tp_index
// so a tensor-parallel group is tp consecutive GPUs of one node, a shard
// group is the shard_group_size ranks with the same (replica, tp_index)
// (contiguous in a node first, then across nodes), and a replica group is the
// replica_group_size ranks with the same (shard, tp_index), spread across
// nodes. Every rank runs the same schedule template (build_fsdp_schedule) and
// keeps only a few cursors and clocks of its own.
//
// Streams of a rank, as PyTorch runs them:
//  * a host thread issues the schedule in order; each task costs host time
//    (StepHostCosts: one launch per kernel, one per collective; a CUDA graph
//    replaces a block's launches by one). The host runs ahead of the GPU and
//    blocks only where the schedule says so (limit_all_gathers) and at the
//    end of the step. A kernel cannot start before the host issued it.
//  * a compute stream runs kernels in order. Consecutive kernels with no
//    dependency on another stream form one segment, timed at once: a
//    segment of kernels k = 0..n-1 with durations d_k issued from host time
//    H (launch cost c) that may start on the GPU at G ends at
//      max(G + sum d_k, H + max_k ((k + 1) c + sum_{j >= k} d_j))
//    (the second term is launch-bound time). While a collective of the
//    rank is transferring, compute runs slower by the profile's
//    comm_overlap_slowdown (SMs shared with NCCL), and a straggler rank's
//    compute by its slowdown factor.
//  * communication streams (FsdpSchedule's kComm/kReduce, plus TP and PCIe
//    copies) run collectives in order. A collective starts when every member
//    of its group has reached it (so a slow rank delays its group), takes
//    the tuner's latency, then transfers its bytes at the tuner's rate times
//    its max-min share of every link it loads, re-solved whenever any
//    collective in the cluster starts or ends (collectives::CollectiveFlows).
//
// Time accounting per rank (StepBreakdown, averaged over ranks): the step is
// split into compute (the compute stream busy), and the compute stream's
// idle gaps, each charged to what the next compute task waited for last: a
// collective (exposed communication of that kind; the part of the wait
// before all members arrived is charged to sync_wait), the host
// (launch_bound), or nothing (idle: the end of the step).
//
// Units: seconds (double) in results, SimTime inside. Determinism: the same
// inputs give the same result bit for bit (no threads, no hash order).
// Thread safety: simulate_step is a pure function of its arguments; it may
// run concurrently on different inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/collective_flows.h"
#include "collectives/tuner.h"
#include "exec/engine.h"
#include "exec/step_result.h"
#include "hardware/hardware_profile.h"
#include "sim/sim_time.h"
#include "topology/cluster.h"
#include "workloads/model/compute_model.h"
#include "workloads/model/memory_model.h"
#include "workloads/model/workload_config.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_work.h"

namespace clustersim::workloads {

// Host-side costs of issuing work (from the hardware profile's `host`
// section) and the host<->GPU copy rate for CPU offload.
struct StepHostCosts {
  sim::SimTime kernel_launch = sim::SimTime::us(10);  // per eager kernel or collective launch
  sim::SimTime graph_launch = sim::SimTime::us(10);   // per CUDA graph (one block's kernels)
  double pcie_Bps = 50e9;                             // achieved host<->GPU copy rate per GPU
  double cpu_adam_params_per_s = 1e9;  // CPU AdamW throughput available to one rank (cpu_offload)
};

struct StepConfig {
  WorkloadSpec workload;  // from read_workload_spec()
  GpuComputeSpec compute;
  StepHostCosts host;
  collectives::ForcedChoice forced;  // NCCL_ALGO / NCCL_PROTO style forcing
  // How collectives' traffic spreads over switch-to-switch links (see
  // collectives/collective_flows.h); adaptive by default.
  collectives::Routing routing = collectives::Routing::kAdaptive;
  // When the step runs on a cluster with failed links (topology/
  // fabric_faults.h): the same cluster without them, whose rates the tuner
  // assumes (EngineOptions::healthy_fabric). Not owned; outlives the call.
  const topology::Cluster* healthy_fabric = nullptr;
  FsdpScheduleOptions schedule_options;
  std::vector<Straggler> stragglers;  // ranks < world_size, each at most once
  uint64_t seed = 1;  // the scenario's seed: per-GPU speeds (workloads/schedules/gpu_speed.h)
  int64_t memory_capacity_bytes = 0;              // HBM per GPU; 0: not checked (fits)
  // The part's power, watts (hardware profile gpu.power, host.system_power):
  // the GPU's limit and the system's maximum over its GPUs; 0: not known.
  double gpu_power_w = 0;
  double system_power_per_gpu_w = 0;
  std::vector<int64_t> trace_ranks;               // ranks whose tasks are recorded (sorted, unique)
  EngineProgressFn progress;                      // EngineOptions::progress
  bool explicit_ranks = false;                    // EngineOptions::explicit_ranks (run --explicit)
  // The work limit, tasks x timelines (scenario/work_limits.h); 0: none.
  // simulate_step gives the engine its timelines' share
  // (EngineOptions::max_timelines, WorkOverLimit).
  int64_t max_task_timelines = 0;
};

// The timelines the engine will run for this step (exec/timelines.h,
// expected_timelines): from the settings alone, before anything is built.
int64_t step_timelines(const StepConfig& config);
// The step's work (workloads/schedules/step_work.h) on those timelines.
StepWork estimate_step_work(const StepConfig& config);

// Simulates one step. Preconditions (InvariantError otherwise; callers
// validate user input first): config.workload.world_size <= cluster GPUs,
// tp divides the GPUs of a node, stragglers and trace ranks < world_size.
// Throws WorkOverLimit (exec/engine.h) past config.max_task_timelines.
StepResult simulate_step(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const StepConfig& config);

}  // namespace clustersim::workloads
