// clustersim's simulated training step written as Chakra ET traces
// (workloads/chakra/chakra_trace.h): one graph per rank that a Chakra consumer
// (ASTRA-sim, `clustersim replay`) can run, describing exactly what
// simulate_step (workloads/schedules/step_simulator.h) runs for that rank.
//
// Node mapping. Every task of the rank's FsdpSchedule (its pipeline stage's:
// a graph per stage) becomes one node, in host issue order, plus the host's
// launch nodes. A node's clustersim_stream is its stream in the step
// program (a send/recv channel or CP's collectives get one of their own):
//   kKernel, kOptimizer  COMP_NODE; duration = kernel_time(kernel,
//                        config.compute) (clustersim_duration_ns exact,
//                        duration_micros rounded to the nearest us),
//                        num_ops = FLOPs, tensor_size = HBM bytes,
//                        clustersim_class = the kernel class, clustersim_stream.
//   kFree                COMP_NODE of zero duration on the compute stream
//                        (clustersim_class "free"): the point a host wait of
//                        limit_all_gathers waits for.
//   kAllGather, kReduceScatter, kAllReduce
//                        COMM_COLL_NODE; comm_type; comm_size = what each
//                        rank passes in, as Chakra's consumers read it (the
//                        standard form, chakra_trace.h TraceForm): an
//                        all-gather's input shard, Task::bytes / group size
//                        rounded up (Task::bytes is the nccl-tests size, the
//                        total output; when the group does not divide it,
//                        clustersim_comm_total = Task::bytes), a
//                        reduce-scatter's whole input and an all-reduce's
//                        buffer = Task::bytes; pg_name = the numeric id of
//                        the rank's group of the task's role (pg_name()
//                        below), clustersim_pg_desc its name (pg_desc());
//                        clustersim_class = the role; duration_micros = the
//                        tuner's uncontended time on idle links (a hint: a
//                        replay times collectives itself), no duration_ns.
//   kSend, kRecv         COMM_SEND_NODE, COMM_RECV_NODE (pipeline stages'
//                        activations and gradients, CP's ring, async TP's
//                        copies); comm_src / comm_dst = the global ranks
//                        (the peer: Layout::ring_neighbor of the op's
//                        peer_role and shift), comm_tag = the program's
//                        tag, comm_size = bytes, clustersim_class = the
//                        peer's role ("pp", "cp", "tp");
//                        clustersim_copy_engine = 1 on a copy a copy engine
//                        moves (async TP's: no SMs taken from compute).
//   kCopyToDevice        MEM_LOAD_NODE, kCopyToHost MEM_STORE_NODE;
//                        tensor_size = bytes over PCIe, duration = bytes /
//                        StepHostCosts::pcie_Bps.
//   kCpuOptimizer        COMP_NODE with is_cpu_op; duration = parameters /
//                        StepHostCosts::cpu_adam_params_per_s.
//   launches             COMP_NODEs with is_cpu_op (clustersim_class
//                        "launch", or "graph_launch" with CUDA graphs, no
//                        clustersim_stream): the host thread. Each costs what
//                        the step simulator charges the host (StepHostCosts):
//                        one kernel_launch per eager kernel, collective and
//                        copy; with cuda_graphs one graph_launch per segment
//                        of consecutive kernels (step_program.h's segments);
//                        nothing for frees and the CPU optimizer. Launches
//                        form one chain (each a ctrl dep of the next) and each
//                        GPU node depends on its launch, so a node cannot start
//                        before the host issued it, as in the simulator. A
//                        limit_all_gathers host wait is a ctrl dep of the
//                        waiting launch on the free node the host waits for.
//                        The CPU optimizer depends on the last launch (the
//                        host reaches it after issuing everything before).
// Node ids are the positions in the file (0, 1, ...), a launch just before
// the node it launches; every dependency names a lower id.
//
// Without host nodes (ExportOptions::host_nodes false, `export-chakra
// --no-host-nodes`): no launch nodes and no CPU optimizer, only GPU,
// communication and memory nodes, for consumers that take nothing else.
// GPU-side order needs no rewiring: every task already depends on the
// previous task of its stream and on the free its host wait waits for
// (workloads/schedules/fsdp_schedule.h). A task that depended on the CPU optimizer
// depends on the optimizer's own dependencies instead. What is lost is the
// host: launch costs and launch-bound gaps, and the CPU optimizer's time
// (host_work_left_out_ns()), so a replay's step is at most the full one's.
//
// Dependencies: a task's schedule dependency on the previous task of its
// own stream (CUDA stream order) is a ctrl dep, one on another stream's task
// (the all-gather a kernel needs, the gradients a reduce-scatter sends, a
// TP collective's activations, the buffer a free releases) a data dep; host
// order (launch chain, host waits, launch -> GPU node) is ctrl.
//
// Process groups (pg_name, CommGroups): ranks are laid out as the step
// simulator's device mesh (exec/mesh_layout.h). A collective of
// role R on rank r runs on r's group of that role, g in step::Layout
// numbering; a role's collectives on the separate reduce stream
// (FsdpScheduleOptions::separate_reduce_stream) on a group of the same
// members but a communicator of its own (the simulator runs them
// concurrently with that group's all-gathers). Members are global ranks in
// group order.
//  * pg_name, the id (a decimal string, as PyTorch names process groups and
//    ASTRA-sim parses them): "0" is the group of every rank (world > 1) on
//    the main stream -- ASTRA-sim takes "0" for the whole world whatever the
//    comm-group file says. The others are numbered from 1 by channel --
//    (role, stream) in enum order: shard, replica, tp, pp, cp; comm,
//    reduce, tp, cp --
//    then by g: a channel's groups take ids base .. base + group_count - 1.
//    Ids do not depend on which ranks are exported.
//  * clustersim_pg_desc, the name: "<R>_<g>" (shard_0, replica_3, tp_5), or
//    "world" when the group holds every rank (world > 1), with a ".reduce"
//    suffix on the reduce stream ("shard_0.reduce").
//
// GlobalMetadata: version "0.0.4" (Chakra's) and string attributes
// clustersim_generator ("clustersim"), clustersim_scenario and
// clustersim_trace_form ("standard"), int64 clustersim_rank and
// clustersim_world_size.
//
// Round trip. Replaying every rank's graph with replay_traces
// (chakra_replay.h) on the same cluster and profile, with the config's
// compute spec, PCIe rate, forcing and routing, gives simulate_step's step
// time, and the differences have exactly these causes (measured in
// tests/workloads/chakra/chakra_export_test.cc and tests/cli/
// export_chakra_command_test.cc):
//  * comm_overlap_slowdown = 1 (no SM sharing), no stragglers: equal to the
//    nanosecond -- every kernel, launch, host wait, collective (tuned from
//    the same nccl-tests bytes -- an all-gather's comm_size x group size, or
//    clustersim_comm_total -- on the same groups in the same ring order,
//    same contention),
//    copy and CPU optimizer starts and ends when the simulator's does
//    (FSDP, HSDP, TP, CUDA graphs, offload, accumulation, prefetch, the
//    separate reduce stream, no_sync, checkpointing, SHARD_GRAD_OP,
//    NO_SHARD; Llama-3-8B on 8 H100, HSDP 8 x 2 on 16, 70B TP 4 x FSDP 16
//    on 64).
//  * comm_overlap_slowdown > 1: the replay compiles the launch chain and
//    the runs of back-to-back kernels into the simulator's own segments
//    (workloads/chakra/replay_program.h), slowed as a whole, so it ends where the
//    simulator does, launch-bound segments included (the 8B step on 8 GPUs:
//    2.842514443 s both). A run the simulator splits at a free (a kernel of
//    no time the replay keeps inside the segment unless something waits for
//    it) is rounded once instead of twice: at most a nanosecond per such
//    free.
//  * Stragglers (StepConfig::stragglers) are not in the graphs: every rank
//    has the nominal kernel_time durations, so the graphs of all ranks are
//    the same but for pg_name, clustersim_pg_desc and the metadata.
//
// Units: nanoseconds, bytes, FLOPs (microseconds only in duration_micros).
// Thread safety: StepExporter is immutable after construction; trace() may
// be called concurrently.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "workloads/chakra/chakra_trace.h"
#include "hardware/hardware_profile.h"
#include "workloads/schedules/fsdp_schedule.h"
#include "workloads/schedules/step_simulator.h"
#include "topology/cluster.h"

namespace clustersim::workloads::chakra {

inline constexpr const char* kExportVersion = "0.0.4";

struct ExportOptions {
  std::string scenario;    // GlobalMetadata's clustersim_scenario
  bool host_nodes = true;  // false: no launches, no CPU optimizer (see above)
};

// Process group id (pg_name) -> its name (clustersim_pg_desc).
using GroupDescs = std::map<std::string, std::string>;

struct ExportedStep {
  std::vector<int64_t> ranks;  // as requested
  std::vector<Trace> traces;   // traces[i] is the graph of ranks[i]
  CommGroups groups;           // every group a collective of those ranks names
  GroupDescs descs;            // the names of those groups
  int64_t tasks_per_rank = 0;  // schedule tasks (nodes without the launches)
  int64_t launches_per_rank = 0;
};

inline constexpr uint64_t kNoNode = ~uint64_t{0};  // a task without a node

// Builds the schedule and the rank-independent part of the graph once;
// trace(r) then costs one copy of it. Preconditions as simulate_step's
// (InvariantError otherwise): world_size <= cluster GPUs, tp divides the
// GPUs of a node, shard x replica x tp x pp = world size.
class StepExporter {
 public:
  StepExporter(const topology::Cluster& cluster, const collectives::HardwareProfile& profile,
               const StepConfig& config, ExportOptions options = {});

  int64_t world_size() const { return config_.workload.world_size; }
  // Pipeline stages: each has a graph of its own, shared by its ranks.
  int64_t stage_count() const { return static_cast<int64_t>(stages_.size()); }
  const FsdpSchedule& schedule(int64_t stage = 0) const { return at(stage).schedule; }
  int64_t launches_per_rank(int64_t stage = 0) const { return at(stage).launches; }
  int64_t nodes_per_rank(int64_t stage = 0) const {
    return static_cast<int64_t>(at(stage).graph.nodes.size());
  }
  // The id of the node of schedule task `task` (kNoNode: left out).
  uint64_t task_node(int32_t task, int64_t stage = 0) const {
    return at(stage).task_node[static_cast<size_t>(task)];
  }
  // Host time per rank the graph leaves out (without host nodes: the CPU
  // optimizer), nanoseconds; the largest of the stages'.
  int64_t host_work_left_out_ns() const;

  // The graph of `rank` (0 <= rank < world size; InvariantError otherwise).
  Trace trace(int64_t rank) const;
  // Adds the groups `rank`'s collectives name (id -> members) to `groups`,
  // and their names to `descs` when given.
  void add_groups(int64_t rank, CommGroups& groups, GroupDescs* descs = nullptr) const;
  // The process group id (pg_name) and name (clustersim_pg_desc) `rank` uses
  // for collectives of `role` on `stream` (a pair the schedule has;
  // InvariantError otherwise).
  std::string pg_name(GroupRole role, Stream stream, int64_t rank) const;
  std::string pg_desc(GroupRole role, Stream stream, int64_t rank) const;

 private:
  struct Channel {
    GroupRole role;
    Stream stream;
  };
  // A send or receive node: its peer is the member `shift` places on around
  // the rank's group of `role` (exec/mesh_layout.h ring_neighbor).
  struct P2pNode {
    size_t node;  // position in the stage's graph
    GroupRole role;
    int64_t shift;
    bool send;
  };
  // What the ranks of one pipeline stage share.
  struct StageGraph {
    FsdpSchedule schedule;
    Trace graph;                               // pg_name and send/recv peers left empty
    std::vector<uint64_t> task_node;           // by schedule task
    std::vector<size_t> collective_nodes;      // positions in graph.nodes
    std::vector<int32_t> collective_channel;   // index into channels_, parallel to the above
    std::vector<int32_t> channels;             // the channels it uses, ascending
    std::vector<P2pNode> p2p;
    int64_t launches = 0;
    int64_t host_work_left_out_ns = 0;
  };

  const StageGraph& at(int64_t stage) const { return stages_.at(static_cast<size_t>(stage)); }
  void build(StageGraph& stage, const topology::Cluster& cluster,
             const collectives::HardwareProfile& profile);
  int32_t channel_index(GroupRole role, Stream stream);
  void number_groups();
  bool spans_world(GroupRole role) const;
  size_t channel_of(GroupRole role, Stream stream) const;

  StepConfig config_;
  ExportOptions options_;
  std::vector<StageGraph> stages_;
  std::vector<Channel> channels_;      // of every stage
  std::vector<int64_t> channel_base_;  // by channel: the id of its group 0
};

// The traces of `ranks` (each < world size) and their groups.
ExportedStep export_step(const topology::Cluster& cluster,
                         const collectives::HardwareProfile& profile, const StepConfig& config,
                         std::span<const int64_t> ranks, const ExportOptions& options = {});

// A string or int64 attribute encoded as Chakra's AttributeProto (for
// Trace::metadata and Node::other_attributes).
RawAttribute string_attribute(const std::string& name, const std::string& value);
RawAttribute int64_attribute(const std::string& name, int64_t value);

}  // namespace clustersim::workloads::chakra
