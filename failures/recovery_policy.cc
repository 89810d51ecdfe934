#include "failures/recovery_policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "config/config_error.h"
#include "config/named_choices.h"
#include "sim/check.h"

namespace clustersim::failures {

namespace {

using sim::name_of;
using sim::Named;
using sim::names;
using sim::value_of;

using sim::SimTime;
using sim::ValueType;

constexpr std::array<Named<RecoveryPolicyKind>, 2> kPolicies = {
    {{RecoveryPolicyKind::kCheckpointRestart, "checkpoint_restart"},
     {RecoveryPolicyKind::kFtHsdp, "ft_hsdp"}}};
constexpr std::array<Named<CommInitPreset>, 2> kCommInitPresets = {
    {{CommInitPreset::kStock, "stock"}, {CommInitPreset::kMegascale, "megascale"}}};

const char* const kPolicy = "recovery.policy";
const char* const kRestartOverhead = "recovery.restart_overhead";
const char* const kDetection = "recovery.detection";
const char* const kTeardown = "recovery.teardown";
const char* const kReallocation = "recovery.reallocation";
const char* const kSpareNodes = "recovery.spare_nodes";
const char* const kRepairTime = "recovery.repair_time";
const char* const kFabricRepairTime = "recovery.fabric_repair_time";
const char* const kProcessStart = "recovery.process_start";
const char* const kOrchestrationGrowth = "recovery.orchestration_growth";
const char* const kOrchestrationReferenceGpus = "recovery.orchestration_reference_gpus";
const char* const kCommInit = "recovery.comm_init";
const char* const kCommInitPreset = "recovery.comm_init_preset";
const char* const kCheckpointBytes = "recovery.checkpoint_bytes_per_gpu";
const char* const kStorageBandwidth = "recovery.storage_bandwidth";
const char* const kStorageBandwidthPerGpu = "recovery.storage_bandwidth_per_gpu";
const char* const kCheckpointLoad = "recovery.checkpoint_load";
const char* const kWarmup = "recovery.warmup";
const char* const kCheckpointInterval = "recovery.checkpoint_interval";
const char* const kCheckpointSaveBlocking = "recovery.checkpoint_save_blocking";
const char* const kAsyncCheckpoint = "recovery.async_checkpoint";
const char* const kAsyncBlockingFraction = "recovery.async_blocking_fraction";
const char* const kFtDetection = "recovery.ft_detection";
const char* const kFtReconfiguration = "recovery.ft_reconfiguration";
const char* const kFtRedo = "recovery.ft_redo";
const char* const kFtStall = "recovery.ft_stall";
const char* const kFtQuorum = "recovery.ft_quorum";
const char* const kFtRejoinStall = "recovery.ft_rejoin_stall";
const char* const kFtQuorumOverlapped = "recovery.ft_quorum_overlapped";
const char* const kStateCopyBandwidth = "recovery.state_copy_bandwidth";
const char* const kReplicaRecovery = "recovery.replica_recovery";
const char* const kFtMinReplicas = "recovery.ft_min_replicas";
const char* const kFtMaxFailedReplicas = "recovery.ft_max_failed_replicas";

// PyTorch DCP async save, 7B model: blocking time 148.8 s -> 6.3 s
// ("Reducing Model Checkpointing Times by Over 10x with PyTorch Distributed
// Asynchronous Checkpointing", PyTorch blog, 2024; data/README.md).
constexpr double kDcpAsyncBlockingFraction = 6.3 / 148.8;

std::string str(int64_t x) { return std::to_string(x); }

std::string in_half_open_unit_interval(const sim::ConfigValue& value) {
  const double x = std::get<double>(value);
  return x > 0 && x <= 1 ? "" : "a number in (0, 1]";
}

std::optional<SimTime> optional_duration(const sim::ConfigValues& values, const char* key) {
  if (!values.has(key)) return std::nullopt;
  return values.get_duration(key);
}

// Seconds to move `bytes_per_gpu` on each of `gpus` GPUs at once: limited by
// the aggregate bandwidth and, when given, by each GPU's own.
double transfer_seconds(double bytes_per_gpu, int64_t gpus, double aggregate_bytes_per_s,
                        std::optional<double> per_gpu_bytes_per_s) {
  double t = bytes_per_gpu * static_cast<double>(gpus) / aggregate_bytes_per_s;
  if (per_gpu_bytes_per_s) t = std::max(t, bytes_per_gpu / *per_gpu_bytes_per_s);
  return t;
}

}  // namespace

std::string_view recovery_policy_name(RecoveryPolicyKind kind) { return name_of(kPolicies, kind); }

std::string_view comm_init_preset_name(CommInitPreset preset) {
  return name_of(kCommInitPresets, preset);
}

SimTime comm_init_time(CommInitPreset preset, int64_t gpus) {
  CLUSTERSIM_CHECK(gpus > 0, "comm_init_time needs gpus > 0, found " + str(gpus));
  double n_ref = 0;
  double t_ref = 0;
  double exponent = 0;
  switch (preset) {
    case CommInitPreset::kStock:
      // arXiv:2602.00277: 17 s at 16k GPUs, 200 s at 98k.
      n_ref = 16384;
      t_ref = 17;
      exponent = std::log(200.0 / 17.0) / std::log(98304.0 / 16384.0);
      break;
    case CommInitPreset::kMegascale:
      // arXiv:2402.15627: under 5 s on 2,048 GPUs, under 30 s on 12,288.
      n_ref = 12288;
      t_ref = 30;
      exponent = std::log(30.0 / 5.0) / std::log(12288.0 / 2048.0);
      break;
  }
  return SimTime::from_seconds_rounded(t_ref *
                                       std::pow(static_cast<double>(gpus) / n_ref, exponent));
}

SimTime orchestration_time(const RecoveryPolicy& policy, SimTime at_reference, int64_t gpus) {
  CLUSTERSIM_CHECK(gpus > 0 && policy.orchestration_reference_gpus > 0,
                   "orchestration_time needs positive GPU counts");
  if (policy.orchestration_growth == 0) return at_reference;
  const double n = static_cast<double>(gpus) / static_cast<double>(policy.orchestration_reference_gpus);
  return SimTime::from_seconds_rounded(at_reference.to_seconds() *
                                       std::pow(n, policy.orchestration_growth));
}

void add_recovery_keys(sim::ConfigSchema& schema) {
  schema.add_section(
      "recovery",
      "What a failure costs: checkpoint-restart or fault-tolerant HSDP, piece by piece, and "
      "checkpoint saves. Defaults are published figures (source in each key) or, where none "
      "is published, fitted so that the checkpoint-restart total follows arXiv:2602.00277's "
      "cold recovery: ~200 s at 16k GPUs to ~900 s at 98k (Kokolis et al., arXiv:2410.21680, "
      "report 5-20 min on their clusters).");

  auto duration = [&](const char* key, std::string doc) -> sim::KeySpec& {
    return schema.add_key(key, ValueType::kDuration, std::move(doc)).non_negative().in_unit("s");
  };

  schema
      .add_key(kPolicy, ValueType::kEnum,
               "checkpoint_restart: a failure stops the job, which restarts from its last "
               "checkpoint; ft_hsdp: the failed replica group leaves, the others stall briefly "
               "and continue, the group rejoins after recovery (torchft-style fault-tolerant "
               "HSDP, arXiv:2602.00277).")
      .one_of(names(kPolicies))
      .default_to(std::string("checkpoint_restart"));

  // Full restart.
  duration(kRestartOverhead,
           "Whole cost of a full restart, lost work excluded; when given it replaces the sum "
           "of detection, teardown, reallocation, process_start, comm_init, checkpoint_load "
           "and warmup. Published: 5-20 min (Meta research clusters, arXiv:2410.21680).");
  duration(kDetection,
           "From the failure until the job knows: watchdog / collective timeout. 60 s: the "
           "all-reduce timeout of arXiv:2602.00277 and torchft's 60 s operation timeout "
           "(PyTorch's default NCCL timeout, 10 min, applies to untuned jobs).")
      .default_to(SimTime::s(60));
  // Teardown, reallocation and process start: the orchestration pieces, given
  // at orchestration_reference_gpus and grown with the GPUs restarted (see
  // orchestration_time() in the header). Their defaults sum to 78 s at 16,384
  // GPUs: fitted, with growth 1, to arXiv:2602.00277's four cold-recovery
  // times (the split between them is assumed).
  duration(kTeardown,
           "Killing the job's processes and releasing the allocation, at "
           "orchestration_reference_gpus GPUs; grows with the GPUs restarted as "
           "orchestration_growth says. 15 s: assumed share of the orchestration pieces' 78 s at "
           "16,384 GPUs, which is fitted to arXiv:2602.00277's cold-recovery times (Fig. 2).")
      .default_to(SimTime::s(15));
  duration(kReallocation,
           "Swapping the failed node for a spare from the pool (scheduler, health checks), at "
           "orchestration_reference_gpus GPUs; grows as orchestration_growth says. 20 s: "
           "assumed share of the fitted 78 s (see teardown).")
      .default_to(SimTime::s(20));
  schema
      .add_key(kSpareNodes, ValueType::kInt,
               "Spare nodes kept for replacements; when all are in repair a restart waits for "
               "one to return. Absent: unlimited spares.")
      .non_negative();
  duration(kRepairTime,
           "From a node's failure until it is back in the spare pool (diagnosis, part swap, "
           "burn-in). 1 d: assumed (no published figure); matters only with spare_nodes.")
      .default_to(SimTime::days(1));
  duration(kFabricRepairTime,
           "From a spine, core switch or switch-to-switch cable failure (blast radius "
           "degrade_bandwidth) until it is repaired; meanwhile the step runs on the fabric "
           "without it (simulated when the campaign simulates the step). 4 h: assumed (no "
           "published figure; a spare switch or cable swapped within a shift).")
      .default_to(SimTime::hours(4));
  duration(kProcessStart,
           "Launching the training processes (container and Python start-up, imports, CUDA "
           "init, model construction, rendezvous), at orchestration_reference_gpus GPUs; grows "
           "as orchestration_growth says. 43 s: assumed share of the fitted 78 s (see "
           "teardown).")
      .default_to(SimTime::s(43));
  schema
      .add_key(kOrchestrationGrowth, ValueType::kFloat,
               "Exponent k of the orchestration pieces' growth with the GPUs N a restart "
               "relaunches (the whole job; one replica group under ft_hsdp): teardown, "
               "reallocation and process_start are t(N) = t * (N / "
               "orchestration_reference_gpus)^k. 1: linear, a fixed cost per GPU at services "
               "every process goes through (scheduler, image registry, shared filesystem, "
               "rendezvous store); with the defaults, the stock comm_init law and the "
               "checkpoint load (1 GB per GPU), the restart is 223 / 265 / 579 / 837 s at 16k / 22k / "
               "64k / 98k GPUs against arXiv:2602.00277's ~200 / 300 / 600 / 900 s (fitted there). "
               "0: the same time at every size.")
      .non_negative()
      .default_to(1.0);
  schema
      .add_key(kOrchestrationReferenceGpus, ValueType::kInt,
               "The GPU count at which teardown, reallocation and process_start are given. "
               "16,384: the smallest job of arXiv:2602.00277's cold-recovery figure.")
      .positive()
      .default_to(int64_t{16384});
  duration(kCommInit,
           "NCCL communicator initialisation of the whole job; when given it replaces the "
           "comm_init_preset law.");
  schema
      .add_key(kCommInitPreset, ValueType::kEnum,
               "Growth of communicator initialisation with the job's GPU count N, a power law "
               "through two published points. stock: 17 s at 16,384 GPUs to 200 s at 98,304 "
               "(arXiv:2602.00277), t = 17 s * (N/16384)^1.376; megascale: under 5 s at 2,048 "
               "and under 30 s at 12,288 GPUs after MegaScale's optimisations "
               "(arXiv:2402.15627), t = 30 s * N/12288.")
      .one_of(names(kCommInitPresets))
      .default_to(std::string("stock"));
  schema
      .add_key(kCheckpointBytes, ValueType::kBytes,
               "Checkpointed state (model and optimizer shard) per GPU: each GPU loads it on a "
               "restart and a recovering replica copies it from a peer; saves are deduplicated "
               "across replica groups (PyTorch DCP). Absent: the workload's state per GPU when "
               "the campaign knows the workload, else this default, 1 GB (Llama 3: 1 MB - 4 GB "
               "per GPU, arXiv:2407.21783).")
      .positive()
      .in_unit("B")
      .default_to(int64_t{1'000'000'000});
  schema
      .add_key(kStorageBandwidth, ValueType::kBandwidth,
               "Aggregate checkpoint storage bandwidth, read and write. 2 TB/s: Llama 3's "
               "sustained figure (7 TB/s peak; arXiv:2407.21783).")
      .positive()
      .in_unit("B/s")
      .default_to(2e12);
  schema
      .add_key(kStorageBandwidthPerGpu, ValueType::kBandwidth,
               "Storage bandwidth one GPU can reach (its host's share of the front-end network); "
               "a load or save takes at least its bytes over this. Absent: no per-GPU limit.")
      .positive()
      .in_unit("B/s");
  duration(kCheckpointLoad,
           "Reading the checkpoint on a restart; when given it replaces checkpoint_bytes_per_gpu "
           "x GPUs / storage_bandwidth (or bytes / storage_bandwidth_per_gpu, if longer).");
  duration(kWarmup,
           "From the first step after a restart to full speed: torch.compile recompilation, "
           "autotuning, allocator warm-up. 60 s: assumed (no published figure; see the "
           "section's calibration).")
      .default_to(SimTime::s(60));

  // Checkpoints.
  schema
      .add_key(kCheckpointInterval, ValueType::kDuration,
               "Training time between checkpoint saves, the saves excluded (tau in Young's and "
               "Daly's formulas). 30 min: assumed; compare with Young/Daly for the job's MTBF.")
      .positive()
      .in_unit("s")
      .default_to(SimTime::minutes(30));
  duration(kCheckpointSaveBlocking,
           "Training time each save blocks; when given it replaces the derived figure: "
           "checkpoint_bytes_per_gpu x GPUs / replica groups / storage_bandwidth (or the "
           "per-GPU limit), times async_blocking_fraction with async_checkpoint.");
  schema
      .add_key(kAsyncCheckpoint, ValueType::kBool,
               "Asynchronous saves (PyTorch DCP async_save): training blocks only while the "
               "state is staged to host memory; the upload continues in the background.")
      .default_to(false);
  schema
      .add_key(kAsyncBlockingFraction, ValueType::kFloat,
               "Blocking part of an async save as a fraction of the synchronous save of the same "
               "state. 0.0423 = 6.3 s / 148.8 s for a 7B model (PyTorch DCP async "
               "checkpointing blog).")
      .validated_by(in_half_open_unit_interval, "in (0, 1]")
      .default_to(kDcpAsyncBlockingFraction);

  // ft_hsdp.
  duration(kFtDetection,
           "ft_hsdp: from the failure until the healthy groups notice: the cross-replica "
           "all-reduce times out. 60 s: arXiv:2602.00277; torchft's quorum and operation "
           "timeouts are 60 s.")
      .default_to(SimTime::s(60));
  duration(kFtReconfiguration,
           "ft_hsdp: new quorum without the failed group and its communicators. 90 s: the rest "
           "of arXiv:2602.00277's ~3 min stall after 60 s of detection and a ~30 s step.")
      .default_to(SimTime::s(90));
  duration(kFtRedo,
           "ft_hsdp: redoing the step that was in flight. Absent: one step at the full "
           "replica count (the campaign's step time).");
  duration(kFtStall,
           "ft_hsdp: whole stall of the healthy groups per failure; when given it replaces "
           "ft_detection + ft_reconfiguration + ft_redo. Published: ~3 min at ~100k GPUs "
           "(arXiv:2602.00277).");
  duration(kFtRejoinStall,
           "ft_hsdp: training paused while a recovered replica group rejoins (catches up and "
           "the groups reconfigure). ~100 s: arXiv:2602.00277. The campaign's ft_rejoin line.")
      .default_to(SimTime::s(100));
  duration(kFtQuorum, "ft_hsdp: the per-step quorum (torchft Manager). 0.7 s: arXiv:2602.00277.")
      .default_to(SimTime::ms(700));
  schema
      .add_key(kFtQuorumOverlapped, ValueType::kBool,
               "ft_hsdp: the quorum runs alongside the step's compute (torchft's async quorum), "
               "so a step pays only the part of ft_quorum beyond the step time; false: every "
               "step pays all of it.")
      .default_to(true);
  schema
      .add_key(kStateCopyBandwidth, ValueType::kBandwidth,
               "ft_hsdp: per-GPU bandwidth at which a recovering replica group copies its state "
               "from a healthy peer. 46 GB/s: NCCL over a 400 Gb/s NDR NIC (nccl-tests #290).")
      .positive()
      .in_unit("B/s")
      .default_to(46e9);
  duration(kReplicaRecovery,
           "ft_hsdp: from detection until the failed group can rejoin (at the next step "
           "boundary); when given it replaces teardown + reallocation + process_start + the "
           "group's comm_init + state copy (checkpoint_bytes_per_gpu / state_copy_bandwidth) "
           "+ warmup.");
  schema
      .add_key(kFtMinReplicas, ValueType::kInt,
               "ft_hsdp: quorum, the fewest live replica groups that may train (torchft "
               "Lighthouse min_replicas). Absent: more than half of the replica groups (torchft's "
               "split-brain rule); with 2 groups that tolerates no failure, so set 1.")
      .positive();
  schema
      .add_key(kFtMaxFailedReplicas, ValueType::kInt,
               "ft_hsdp: most replica groups down at once before the policy falls back to a full "
               "restart. Absent: as many as the quorum allows (groups - ft_min_replicas); the "
               "stricter of the two applies.")
      .non_negative();
}

RecoveryPolicy read_recovery_policy(const sim::ConfigValues& values, int64_t job_gpus,
                                    int64_t replica_groups, const WorkloadFacts& workload) {
  CLUSTERSIM_CHECK(job_gpus > 0, "read_recovery_policy needs a job with GPUs");
  CLUSTERSIM_CHECK(
      replica_groups >= 1 && job_gpus % replica_groups == 0,
      "replica_groups " + str(replica_groups) + " must divide job_gpus " + str(job_gpus));
  sim::DiagnosticSink sink;
  RecoveryPolicy p;
  p.kind = value_of(kPolicies, values.get_string(kPolicy));
  p.job_gpus = job_gpus;
  p.replica_groups = replica_groups;
  p.gpus_per_replica_group = job_gpus / replica_groups;

  p.detection = values.get_duration(kDetection);
  p.orchestration_growth = values.get_float(kOrchestrationGrowth);
  p.orchestration_reference_gpus = values.get_int(kOrchestrationReferenceGpus);
  const SimTime teardown = values.get_duration(kTeardown);
  const SimTime reallocation = values.get_duration(kReallocation);
  const SimTime process_start = values.get_duration(kProcessStart);
  p.teardown = orchestration_time(p, teardown, job_gpus);
  p.reallocation = orchestration_time(p, reallocation, job_gpus);
  p.process_start = orchestration_time(p, process_start, job_gpus);
  p.replica_teardown = orchestration_time(p, teardown, p.gpus_per_replica_group);
  p.replica_reallocation = orchestration_time(p, reallocation, p.gpus_per_replica_group);
  p.replica_process_start = orchestration_time(p, process_start, p.gpus_per_replica_group);
  p.warmup = values.get_duration(kWarmup);
  p.restart_overhead = optional_duration(values, kRestartOverhead);
  if (values.has(kSpareNodes)) p.spare_nodes = values.get_int(kSpareNodes);
  p.repair_time = values.get_duration(kRepairTime);
  p.fabric_repair_time = values.get_duration(kFabricRepairTime);

  const CommInitPreset preset = value_of(kCommInitPresets, values.get_string(kCommInitPreset));
  p.comm_init =
      values.has(kCommInit) ? values.get_duration(kCommInit) : comm_init_time(preset, job_gpus);
  // recovery.comm_init is the whole job's; one group's follows the preset's law.
  p.replica_comm_init = comm_init_time(preset, p.gpus_per_replica_group);

  // Checkpoint size and storage.
  p.checkpoint_bytes_per_gpu = values.get_bytes(kCheckpointBytes);
  if (values.entry(kCheckpointBytes).is_default && workload.state_bytes_per_gpu > 0) {
    p.checkpoint_bytes_per_gpu = workload.state_bytes_per_gpu;
  }
  const double bytes = static_cast<double>(p.checkpoint_bytes_per_gpu);
  const double storage_bytes_per_s = values.get_bandwidth_Bps(kStorageBandwidth);
  std::optional<double> per_gpu_bytes_per_s;
  if (values.has(kStorageBandwidthPerGpu)) {
    per_gpu_bytes_per_s = values.get_bandwidth_Bps(kStorageBandwidthPerGpu);
  }
  p.checkpoint_load = values.has(kCheckpointLoad)
                          ? values.get_duration(kCheckpointLoad)
                          : SimTime::from_seconds_rounded(transfer_seconds(
                                bytes, job_gpus, storage_bytes_per_s, per_gpu_bytes_per_s));
  // Each replica group's copy of a shard is written once (DCP deduplicates).
  const SimTime sync_save = SimTime::from_seconds_rounded(
      transfer_seconds(bytes / static_cast<double>(replica_groups), job_gpus, storage_bytes_per_s,
                       per_gpu_bytes_per_s));

  p.checkpoint_interval = values.get_duration(kCheckpointInterval);
  p.async_checkpoint = values.get_bool(kAsyncCheckpoint);
  if (values.has(kCheckpointSaveBlocking)) {
    p.checkpoint_save_blocking = values.get_duration(kCheckpointSaveBlocking);
  } else if (p.async_checkpoint) {
    p.checkpoint_save_blocking = SimTime::from_seconds_rounded(
        sync_save.to_seconds() * values.get_float(kAsyncBlockingFraction));
  } else {
    p.checkpoint_save_blocking = sync_save;
  }
  p.checkpoint_write = p.async_checkpoint ? std::max(p.checkpoint_save_blocking, sync_save)
                                          : p.checkpoint_save_blocking;

  // ft_hsdp.
  p.ft_detection = values.get_duration(kFtDetection);
  p.ft_reconfiguration = values.get_duration(kFtReconfiguration);
  p.ft_redo = values.has(kFtRedo) ? values.get_duration(kFtRedo) : workload.step_time;
  p.ft_rejoin_stall = values.get_duration(kFtRejoinStall);
  p.ft_stall_override = optional_duration(values, kFtStall);
  const SimTime quorum = values.get_duration(kFtQuorum);
  p.ft_step_overhead = values.get_bool(kFtQuorumOverlapped)
                           ? std::max(SimTime::zero(), quorum - workload.step_time)
                           : quorum;
  p.state_copy =
      SimTime::from_seconds_rounded(bytes / values.get_bandwidth_Bps(kStateCopyBandwidth));
  p.replica_recovery_override = optional_duration(values, kReplicaRecovery);

  p.ft_min_replicas =
      values.has(kFtMinReplicas) ? values.get_int(kFtMinReplicas) : replica_groups / 2 + 1;
  p.ft_max_failed_replicas = std::max<int64_t>(0, replica_groups - p.ft_min_replicas);
  if (values.has(kFtMaxFailedReplicas)) {
    p.ft_max_failed_replicas =
        std::min(p.ft_max_failed_replicas, values.get_int(kFtMaxFailedReplicas));
  }

  if (p.kind == RecoveryPolicyKind::kFtHsdp) {
    if (replica_groups < 2) {
      sink.add(values.where(kPolicy), kPolicy,
               "ft_hsdp needs at least 2 replica groups, found " + str(replica_groups) +
                   " (HYBRID_SHARD with workload.parallelism.replica_group_size >= 2; or "
                   "checkpoint_restart)");
    } else if (values.has(kFtMinReplicas) && p.ft_min_replicas > replica_groups) {
      sink.add(values.where(kFtMinReplicas), kFtMinReplicas,
               "expected at most the job's " + str(replica_groups) + " replica groups, found " +
                   str(p.ft_min_replicas));
    }
  }
  sink.throw_if_any();
  return p;
}

std::vector<CostPiece> restart_pieces(const RecoveryPolicy& p) {
  if (p.restart_overhead) return {{"restart_overhead", *p.restart_overhead}};
  return {{"detection", p.detection},
          {"teardown", p.teardown},
          {"reallocation", p.reallocation},
          {"process_start", p.process_start},
          {"comm_init", p.comm_init},
          {"checkpoint_load", p.checkpoint_load},
          {"warmup", p.warmup}};
}

std::vector<CostPiece> ft_stall_pieces(const RecoveryPolicy& p) {
  if (p.ft_stall_override) return {{"ft_stall", *p.ft_stall_override}};
  return {{"ft_detection", p.ft_detection},
          {"ft_reconfiguration", p.ft_reconfiguration},
          {"ft_redo", p.ft_redo}};
}

std::vector<CostPiece> replica_recovery_pieces(const RecoveryPolicy& p) {
  if (p.replica_recovery_override) return {{"replica_recovery", *p.replica_recovery_override}};
  return {{"teardown", p.replica_teardown},
          {"reallocation", p.replica_reallocation},
          {"process_start", p.replica_process_start},
          {"comm_init", p.replica_comm_init},
          {"state_copy", p.state_copy},
          {"warmup", p.warmup}};
}

namespace {

SimTime total(const std::vector<CostPiece>& pieces) {
  SimTime sum;
  for (const CostPiece& piece : pieces) sum += piece.time;
  return sum;
}

}  // namespace

SimTime restart_cost(const RecoveryPolicy& policy) { return total(restart_pieces(policy)); }
SimTime ft_stall(const RecoveryPolicy& policy) { return total(ft_stall_pieces(policy)); }
SimTime replica_recovery(const RecoveryPolicy& policy) {
  return total(replica_recovery_pieces(policy));
}

bool ft_tolerates(const RecoveryPolicy& policy, int64_t failed_groups) {
  return failed_groups <= policy.ft_max_failed_replicas &&
         policy.replica_groups - failed_groups >= policy.ft_min_replicas;
}

}  // namespace clustersim::failures
