// Replays Chakra execution traces (workloads/chakra/chakra_trace.h) on a cluster:
// every rank's graph runs event by event on its own GPU, its collectives on
// the real topology with the tuner's cost and max-min sharing of the links
// (collectives::CollectiveFlows), as the step simulator runs its own
// schedules (workloads/schedules/step_simulator.h). The result is a StepResult, so
// that `clustersim replay` prints, writes JSON and Chrome traces like `run`.
//
// Ranks. Rank r runs on GPU r of the cluster and replays the graph
// job.templates[job.template_of[r]] (replay_traces: rank r = ranks[r]; with
// --scale-to several ranks share one graph, see chakra_scale.h). A node
// becomes ready when every node named in its ctrl_deps and data_deps is done
// (a dependency listed twice counts once).
//
// Resources of a rank and what each node costs:
//  * COMP_NODE (is_cpu_op false): a GPU kernel. One compute resource per
//    clustersim_stream value (nodes without one share one resource), each
//    running one node at a time in a static order: the order in which the
//    graph's nodes start when it is list-scheduled once on an idle rank
//    (each resource starting the node that became ready first, ties to the
//    lower node id; collectives and send/recv taking no time there), which
//    is the order on the real cluster whenever a resource's nodes are
//    chained by their dependencies, as in every export
//    (workloads/chakra/replay_program.h). The run compiles to the engine's programs
//    (exec/program.h) and runs on exec/engine, as `run` does: Duration: clustersim_duration_ns if
//    present, else duration_micros. With recompute_compute, the compute model's roofline
//    (compute_model.h kernel_time) from num_ops FLOPs and tensor_size HBM
//    bytes: a GEMM-class kernel (the GEMM efficiency curve at its FLOPs, no
//    shape known) when num_ops > 0 and clustersim_class names no
//    memory-bound class; an elementwise kernel (FLOPs at peak, bytes at the
//    HBM roofline) when num_ops is 0 or the class is elementwise, norm,
//    embedding, loss or optimizer; nodes with neither attribute keep their
//    traced duration. Kernels of the main compute stream (stream 0 or no
//    stream, else the lowest) that run back to back -- each depending only
//    on the previous one and its launch, with no other launch or host wait
//    between -- are timed as one segment, as `run` times them: while a
//    collective or send/recv of the rank is transferring (between its
//    latency phase and its end), the segment runs 1 / comm_overlap_slowdown
//    as fast, and it ends no earlier than its last launch allows. Kernels of
//    other streams take their duration (not slowed).
//  * COMP_NODE with is_cpu_op: host work of its traced duration (never
//    recomputed, never slowed), on one host resource per clustersim_stream
//    value (without one: the host thread), one at a time like kernels. The
//    host thread's nodes are the program's host: their durations as prefix
//    sums, waiting where a host node depends on a GPU-side node; a GPU-side
//    node starts no earlier than the end of the last host node it depends
//    on (through metadata nodes).
//  * MEM_LOAD_NODE / MEM_STORE_NODE: tensor_size bytes over the rank's PCIe
//    at options.pcie_Bps (default: the topology's per-GPU PCIe rate x the
//    profile's host.pcie_efficiency, as `run`), rounded to the nanosecond;
//    one resource per clustersim_stream value, or without one, one for loads
//    and one for stores (the two copy engines). No contention between ranks.
//  * METADATA_NODE: no time, no resource.
//  * COMM_COLL_NODE: a collective of process group P (pg_name; a node
//    without pg_name runs on the whole world). The i-th collective a rank
//    issues in P -- counting P's collectives of its graph in ascending node
//    id -- matches the i-th of every other member, and a rank runs P's
//    collectives one at a time in that order (one NCCL stream per
//    communicator); different groups run concurrently. The i-th collective
//    starts when every member has reached it (ready, and its previous one in
//    P done); the time between a member's arrival and the start is that
//    member's sync wait. It then takes the tuner's latency for the group's
//    geometry (collectives::tune_collective with options.forced), and
//    transfers comm_size bytes (for an ALL_GATHER of a standard-form job,
//    its total output: ReplayJob::gather_members) at the tuner's rate times
//    its max-min share of every link it loads (group footprint x
//    busbw_factor), re-solved when any transfer starts or ends, exactly as
//    simulate_step does. comm_type:
//    ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER (and REDUCE_SCATTER_BLOCK),
//    BROADCAST run as such; BARRIER is a zero-byte all_reduce (latency
//    only); REDUCE, GATHER, SCATTER and ALL_TO_ALL are not modelled
//    (ConfigError naming file and node). Members that disagree on comm_type
//    or comm_size at the same position, or issue different numbers of
//    collectives in a group, are a ConfigError naming both files and nodes.
//  * COMM_SEND_NODE / COMM_RECV_NODE: the j-th send from rank s to rank d
//    with tag t (comm_dst, comm_tag, default 0; j counting in ascending node
//    id) matches the j-th receive on d from s (comm_src) with tag t. The
//    transfer starts when both are ready (the sends of a rank to one peer
//    with one tag run one at a time in that order, as on one NCCL stream;
//    so do the receives) and runs as a two-member broadcast from the
//    sender: the tuner's latency and rate for the pair's geometry (no
//    forcing), then comm_size bytes as a flow in CollectiveFlows. Both nodes
//    end together. A send to oneself takes no time.
// Every group (and pair) must have the same number of members on each node
// it uses (the shape NCCL-style rings per rail describe): ConfigError
// otherwise.
//
// Outputs (StepResult):
//  * step_time_s: the last node's end over all ranks; slowest_rank: the rank
//    that ended last (lowest id on ties).
//  * breakdown: per rank, then averaged, in the step simulator's accounts:
//    compute (the main compute stream busy), and each gap with no kernel
//    running, charged to what the kernel starting after it waited for last
//    (the dependency that completed last, looking through metadata nodes):
//    a collective -> exposed all_gather / reduce_scatter / all_reduce
//    (broadcast, barrier and send/recv count as all_reduce), the part before
//    the collective started -> sync_wait; a copy, or host work with a
//    clustersim_stream (the CPU optimizer of offload) -> exposed_pcie, as
//    simulate_step counts them; a kernel -> idle. When the last dependency
//    was work of the host thread (a launch), the gap up to the latest other
//    dependency's end is charged to that one and the rest to launch_bound,
//    as simulate_step splits a gap between what a kernel waited for and its
//    launch. After the rank's last kernel,
//    the wait for its last node is charged the same way, then idle until the
//    step's end. exposed_tp is always 0 (process groups carry no role).
//  * tflops_per_gpu and mfu: the traced num_ops of GPU kernels (hardware
//    FLOPs: recomputation included), mean per rank, per second of step, and
//    over the compute spec's peak; tokens_per_s_per_gpu only when
//    options.tokens_per_rank > 0. memory stays empty (fits_in_memory true).
//  * events, collectives (group collectives run, send/recv not counted),
//    tasks_per_rank (nodes of the largest graph), ranks.
//  * trace: for options.trace_ranks, one record per node that takes time or
//    communicates, by rank then start: tracks "compute" (kernels without a
//    stream or on stream 0), "stream N" (other streams), "host" / "cpu"
//    (host work without / with a stream), "pcie" (copies with a stream),
//    "h2d" / "d2h" (loads / stores without one), collectives on the step
//    simulator's stream name when clustersim_stream is one of its streams,
//    else "comm N" (N = the group's index among the rank's groups, by name),
//    and "send" / "recv". Category: clustersim_class or "compute" for
//    kernels, the collective kind, "host", "pcie", "send", "recv". The
//    kernels of a segment share its time in proportion to their durations
//    (as `run` records them). Names point into the traces: they must
//    outlive the result.
//
// Never a hang: nodes that can never run (a collective whose peers never
// reach it, a send without a receive, a cycle) end the replay with a
// ConfigError naming the first stuck nodes (file and id) and what each waits
// for.
//
// Units: nanoseconds (int64) inside, seconds in results, bytes.
// Determinism: the same inputs give the same result bit for bit.
// Thread safety: replay functions are pure; they may run concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collectives/collective_flows.h"
#include "collectives/tuner.h"
#include "hardware/hardware_profile.h"
#include "topology/cluster.h"
#include "workloads/chakra/chakra_trace.h"
#include "workloads/model/compute_model.h"
#include "workloads/schedules/step_simulator.h"

namespace clustersim::workloads::chakra {

struct ReplayOptions {
  // Time GPU kernels with the compute model instead of their traced durations.
  bool recompute_compute = false;
  // The compute model (kernel times with recompute_compute, peak for MFU,
  // comm_overlap_slowdown). Default: compute_spec_from_profile(profile).
  std::optional<GpuComputeSpec> compute;
  // Host<->GPU copy rate per GPU, bytes/s; 0: the topology's PCIe rate x the
  // profile's host.pcie_efficiency.
  double pcie_Bps = 0;
  collectives::ForcedChoice forced;  // NCCL_ALGO / NCCL_PROTO style, for collectives
  collectives::Routing routing = collectives::Routing::kAdaptive;
  std::vector<int64_t> trace_ranks;  // ranks whose nodes are recorded (sorted, unique)
  int64_t tokens_per_rank = 0;       // tokens one rank trains on per step; 0: unknown
  // The cluster's GPU speed spread (workloads/schedules/gpu_speed.h): rank r's kernels
  // on the main compute stream take factor r times their duration; empty:
  // all at the median.
  std::vector<double> rank_time_factors;
  // Kernel-time fluctuation per rank and segment (EngineOptions::segment_jitter_sd).
  double segment_jitter_sd = 0;
  uint64_t jitter_seed = 0;
  EngineProgressFn progress;  // EngineOptions::progress
};

// A concrete process group of a job: its ranks in ring order.
struct ReplayGroup {
  std::string name;  // for messages: the pg_name, "world", or "<pg_name> (copy c)"
  std::vector<int64_t> ranks;
};

// What to replay: which graph each rank runs and which concrete group each
// of its collectives uses. Built by build_replay_job (chakra_scale.h).
struct ReplayJob {
  // The distinct graphs, each compiled once (identical ranks share one).
  std::span<const Trace> templates;    // not owned: must outlive the job and its result
  std::vector<int32_t> template_of;    // by rank: index into templates
  int64_t traced_ranks = 0;            // k: rank r replays traced rank r mod k
  std::vector<int64_t> template_rank;  // by template: its first traced rank
  // By traced rank: the file messages name (not owned); empty: the graph's own.
  std::span<const std::string> files;
  // By rank: a send/recv peer p of the graph is rank peer_base + p.
  std::vector<int64_t> peer_base;
  std::vector<ReplayGroup> groups;
  // The group of rank r's k-th process group (collective_pg_names of its
  // graph, in that order) is groups[slot_groups[slot_begin[r] + k]].
  std::vector<int64_t> slot_begin;  // ranks + 1 entries
  std::vector<int32_t> slot_groups;
  // The traces' conventions (chakra_trace.h TraceForm). For the standard
  // form, by template and slot, the members of the process group as traced:
  // an all_gather's comm_size (each rank's input) times that is the output
  // the tuner takes, and stays so when --scale-to widens the group (the
  // model's tensor does not grow). Empty for the named form, whose comm_size
  // is that output already.
  FormDecision form;
  std::vector<std::vector<int64_t>> gather_members;

  int64_t ranks() const { return static_cast<int64_t>(template_of.size()); }
};

// The file (or "rank R") that messages about rank r of the job name.
std::string rank_location(const ReplayJob& job, int64_t rank);

// The distinct pg_name values of the graph's COMM_COLL_NODEs, sorted; ""
// stands for collectives without pg_name (the world).
std::vector<std::string> collective_pg_names(const Trace& trace);

// Replays `ranks` (rank r = ranks[r]) with their communicator groups (empty:
// every process group is the whole world). Errors: sim::ConfigError (more
// ranks than GPUs, groups that do not hold their ranks, unmodelled or
// mismatched collectives, deadlocks, ... see above), naming files and nodes.
StepResult replay_traces(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile,
                         const std::vector<Trace>& ranks, const CommGroups& groups,
                         const ReplayOptions& options);

StepResult replay_job(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
                      const ReplayJob& job, const ReplayOptions& options);

}  // namespace clustersim::workloads::chakra
