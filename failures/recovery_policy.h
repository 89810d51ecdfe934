// Recovery policies (section `recovery`): what a failure costs under
// checkpoint-restart and under fault-tolerant HSDP, piece by piece, and what
// checkpoints cost. The campaign engine replays failures against these
// figures; every piece is a named key so users can plug in their own.
//
// add_recovery_keys() declares every key once (type, unit, default with its
// source, doc, limits); read_recovery_policy() resolves them for one job into
// a plain RecoveryPolicy: overrides applied, job-size-dependent pieces
// (communicator initialisation, checkpoint load and save, state copy)
// computed. Errors are sim::ConfigError naming the key's file:line:col, every
// problem found at once: the schema rejects negative durations, a
// non-positive checkpoint interval and the like when the scenario loads;
// read_recovery_policy() adds what needs the job (ft_hsdp with fewer than 2
// replica groups, a quorum larger than the replica groups).
//
// checkpoint_restart: a failure stops the job. The job pays, in order,
//   detection (watchdog / collective timeout) + teardown + reallocation
//   (a spare node; when the pool is empty the engine waits for a repair
//   instead, `repair_time` after the failure) + process start (PyTorch
//   start-up, CUDA init) + communicator initialisation (grows with job size,
//   comm_init_time()) + checkpoint load + warm-up,
// which restart_cost() sums unless `recovery.restart_overhead` replaces the
// sum; plus the work since the last checkpoint, which the engine accounts.
// Teardown, reallocation and process start (the orchestration pieces) grow
// with the GPUs relaunched (orchestration_time()), communicator
// initialisation by its own law, the checkpoint load with the bytes all GPUs
// read through the storage; detection and warm-up do not grow.
//
// ft_hsdp (torchft-style fault-tolerant HSDP): a failure takes out one
// replica group. The healthy groups stall for ft_detection + ft_reconfiguration
// + ft_redo (the in-flight step), summed by ft_stall() unless
// `recovery.ft_stall` replaces it, then train without it. The failed group,
// from the end of detection, pays teardown + reallocation + process start +
// communicator initialisation, all of one group's GPUs, + state copy from a healthy peer
// + warm-up (replica_recovery(), or `recovery.replica_recovery`), then rejoins
// at the next step boundary, when every group pauses for ft_rejoin_stall. While running under ft_hsdp every step pays
// ft_step_overhead (the exposed part of the per-step quorum). When more
// groups are down at once than ft_max_failed_replicas (so fewer than the
// quorum, ft_min_replicas, would remain), the policy falls back to a full
// restart: restart_cost() and the work since the last checkpoint.
//
// Checkpoints (both policies; ft_hsdp needs them for its fallback): every
// `checkpoint_interval` of training the job blocks for
// checkpoint_save_blocking; the checkpoint is durable checkpoint_write after
// the save starts (equal for synchronous saves; longer for async saves, whose
// upload continues in the background).
//
// Units: SimTime for durations, bytes, bytes per second. Thread safety: pure
// functions; RecoveryPolicy is a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "config/config_schema.h"
#include "config/config_values.h"
#include "sim/sim_time.h"

namespace clustersim::failures {

enum class RecoveryPolicyKind { kCheckpointRestart, kFtHsdp };
// "checkpoint_restart", "ft_hsdp": the names the scenario uses.
std::string_view recovery_policy_name(RecoveryPolicyKind kind);

// How communicator initialisation grows with the number of GPUs N: a power
// law t(N) = t_ref * (N / N_ref)^k through two published points.
//  kStock (default): arXiv:2602.00277 measured 17 s at 16k GPUs (16,384) and
//    200 s at 98k (98,304) for PyTorch/NCCL initialisation at scale:
//    N_ref = 16,384, t_ref = 17 s, k = ln(200/17) / ln(6) = 1.3758. Through
//    both points exactly. The straight line a + b*N through them has a
//    negative intercept (-19.6 s), so it is no model below 9k GPUs; the
//    power law stays positive and superlinear, as rendezvous through one
//    store plus per-rank all-gathers of peer information are.
//  kMegascale: MegaScale (arXiv:2402.15627) after its optimisations: "under
//    5 s" on 2,048 GPUs and "under 30 s" at more than 10k (its largest run
//    is 12,288 GPUs): through (2,048, 5 s) and (12,288, 30 s), k = 1, i.e.
//    2.44 ms per GPU. Both figures are upper bounds.
// Below a few hundred GPUs the laws give well under a second; there the
// other pieces dominate anyway.
enum class CommInitPreset { kStock, kMegascale };
std::string_view comm_init_preset_name(CommInitPreset preset);
// Precondition: gpus > 0.
sim::SimTime comm_init_time(CommInitPreset preset, int64_t gpus);

struct RecoveryPolicy;
// An orchestration piece (teardown, reallocation, process start) for a
// restart of `gpus` GPUs, given `at_reference` at the policy's
// orchestration_reference_gpus: at_reference * (gpus / reference)^growth,
// growth = recovery.orchestration_growth (1: linear, a fixed cost per GPU at
// the services every process goes through; 0: constant). Defaults: 78 s at
// 16,384 GPUs in all and growth 1, fitted to arXiv:2602.00277's synchronous
// cold recovery (~200 / 300 / 600 / 900 s at 16k / 22k / 64k / 98k GPUs)
// with the rest of the restart at its defaults (detection 60 s, warm-up 60 s,
// the stock comm_init law, 1 GB per GPU at 2 TB/s): the sum that minimises
// the largest relative error over the four points (11.7%). Precondition:
// gpus > 0.
sim::SimTime orchestration_time(const RecoveryPolicy& policy, sim::SimTime at_reference,
                                int64_t gpus);

// What the workload tells the policy beyond the scenario's keys.
struct WorkloadFacts {
  // One training step with every replica group; zero when unknown. ft_redo is
  // one step unless `recovery.ft_redo` is given; the per-step quorum hides
  // behind it.
  sim::SimTime step_time;
  // Model and optimizer state one GPU holds (its shard), in bytes, from the
  // memory model; 0 when unknown. Used for checkpoint size and state copy
  // unless `recovery.checkpoint_bytes_per_gpu` is given.
  int64_t state_bytes_per_gpu = 0;
};

// One named cost, for breakdowns; `name` is the key's name without
// "recovery." ("detection", "comm_init", "restart_overhead"...).
struct CostPiece {
  std::string_view name;
  sim::SimTime time;
};

struct RecoveryPolicy {
  RecoveryPolicyKind kind = RecoveryPolicyKind::kCheckpointRestart;
  int64_t job_gpus = 0;
  int64_t replica_groups = 1;          // data-parallel replicas (HSDP replica group count)
  int64_t gpus_per_replica_group = 0;  // job_gpus / replica_groups

  // Full restart (checkpoint_restart; ft_hsdp's fallback), in the order paid.
  sim::SimTime detection;
  sim::SimTime teardown;      // of the whole job (orchestration_time())
  sim::SimTime reallocation;  // with a spare node available; of the whole job
  sim::SimTime process_start;  // of the whole job
  // The orchestration pieces' growth (orchestration_time()).
  double orchestration_growth = 1.0;
  int64_t orchestration_reference_gpus = 16384;
  sim::SimTime comm_init;  // of the whole job (override or comm_init_time())
  sim::SimTime checkpoint_load;
  sim::SimTime warmup;
  std::optional<sim::SimTime> restart_overhead;  // when set, restart_cost() is this

  // Spare pool: nullopt is unlimited spares. Without a spare, a failed node
  // is back repair_time after its failure.
  std::optional<int64_t> spare_nodes;
  sim::SimTime repair_time;
  // A failed spine, core switch or switch-to-switch cable: down this long.
  sim::SimTime fabric_repair_time;

  // Checkpoints.
  sim::SimTime checkpoint_interval;       // training time between saves, saves excluded
  sim::SimTime checkpoint_save_blocking;  // training blocked per save
  sim::SimTime checkpoint_write;          // save start -> durable (>= blocking)
  bool async_checkpoint = false;
  int64_t checkpoint_bytes_per_gpu = 0;

  // ft_hsdp: stall of the healthy replica groups.
  sim::SimTime ft_detection;
  sim::SimTime ft_reconfiguration;
  sim::SimTime ft_redo;
  std::optional<sim::SimTime> ft_stall_override;  // recovery.ft_stall
  // Training paused while a recovered group rejoins (recovery.ft_rejoin_stall).
  sim::SimTime ft_rejoin_stall;
  // Exposed per-step quorum cost: ft_quorum, less the step it overlaps with
  // when overlapped (never below zero).
  sim::SimTime ft_step_overhead;
  // ft_hsdp: the failed group's way back (warmup as above; the orchestration
  // pieces and comm_init of one group's GPUs).
  sim::SimTime replica_teardown;
  sim::SimTime replica_reallocation;
  sim::SimTime replica_process_start;
  sim::SimTime replica_comm_init;  // of one replica group, by comm_init_preset (never the override)
  sim::SimTime state_copy;         // state bytes per GPU / state_copy_bandwidth
  std::optional<sim::SimTime> replica_recovery_override;  // recovery.replica_recovery
  // Quorum: fewest live groups that may train, and the most groups that
  // may be down at once before the fallback to a full restart
  // (<= replica_groups - ft_min_replicas).
  int64_t ft_min_replicas = 1;
  int64_t ft_max_failed_replicas = 0;
};

void add_recovery_keys(sim::ConfigSchema& schema);

// Resolves the `recovery` section for a job of `job_gpus` GPUs in
// `replica_groups` data-parallel replica groups (1 without HSDP).
// Preconditions (InvariantError): job_gpus > 0, replica_groups >= 1 dividing
// job_gpus. Throws sim::ConfigError for the problems the header lists.
RecoveryPolicy read_recovery_policy(const sim::ConfigValues& values, int64_t job_gpus,
                                    int64_t replica_groups, const WorkloadFacts& workload = {});

// Full restart: restart_overhead when given, else the sum of the pieces.
sim::SimTime restart_cost(const RecoveryPolicy& policy);
// ft_hsdp stall of the healthy groups: the override, else detection +
// reconfiguration + redo.
sim::SimTime ft_stall(const RecoveryPolicy& policy);
// ft_hsdp: from the end of detection until the failed group can rejoin (the
// engine then waits for the next step boundary): the override, else the sum
// of its pieces.
sim::SimTime replica_recovery(const RecoveryPolicy& policy);

// The same as named pieces in the order paid, summing to the function above;
// an override is one piece named after its key.
std::vector<CostPiece> restart_pieces(const RecoveryPolicy& policy);
std::vector<CostPiece> ft_stall_pieces(const RecoveryPolicy& policy);
std::vector<CostPiece> replica_recovery_pieces(const RecoveryPolicy& policy);

// ft_hsdp: whether training continues with `failed_groups` groups down at
// once (false: fall back to a full restart).
bool ft_tolerates(const RecoveryPolicy& policy, int64_t failed_groups);

}  // namespace clustersim::failures
