// Campaign simulation (the campaign level; steps are the other level, whose
// time is given to it): Monte Carlo trials of a training job over days or months of wall
// clock, each replayed event by event on the sim/ engine against a
// FailureModel (what fails, when) and a RecoveryPolicy (what it costs).
//
// One trial. The job trains at the full step rate (tokens_per_step per
// step_time) while all is well. Every checkpoint_interval of training it
// saves (blocking for checkpoint_save_blocking; durable checkpoint_write
// after the save starts). Failures arrive on the wall clock whatever the job
// is doing:
//  * checkpoint_restart: a failure that kills anything (process, node, leaf,
//    job) stops the job; the work since the last durable checkpoint is lost
//    and the job pays restart_pieces() in order (detection first). A failure
//    during a recovery restarts the recovery from its beginning (Daly's
//    assumption, the default of CheckpointRestartModel, so the closed form
//    checks the engine) and counts as an interruption too.
//  * ft_hsdp: a failure that kills processes or nodes takes out the replica
//    group(s) holding them; the healthy groups stall ft_stall(), then train
//    at throughput_by_live[alive]; a failed group is back replica_recovery()
//    after the end of its detection plus one step (the next step boundary,
//    counted as a whole step), and rejoins. A job-wide failure, or more
//    groups down at once than the policy tolerates (ft_tolerates()), falls
//    back to a full restart as above, after which every group is back.
//    Every step pays the policy's exposed per-step quorum cost.
//  * Failures that only degrade bandwidth (spine, core, fabric cable) stop
//    nothing: with slowdown_of_fabric_fault, the step runs that many times
//    longer until the policy's fabric_repair_time after the fault (the slowest fault or
//    straggler counts); without it they are counted only.
//  * Spares: a node taken out needs a spare to restart or rejoin; with a
//    finite pool, taken nodes come back repair_time after their failure and
//    a job (or group) without spares waits for them.
//  * Stragglers (FailureModel::stragglers): while a slow node is in the job,
//    the synchronous step runs slowdown_of_straggler(slowdown) times longer
//    (`slowdown` times without it; the slowest one counts); at its detection
//    it is removed like a failed node.
//
// Time accounting (TrialResult::seconds, summing to the trial's wall time):
// productive (training, in full-throughput seconds kept), lost work (training
// undone by a restart), detection, restart (the other restart pieces),
// checkpoint saves (blocking), degraded (throughput missing while groups are
// down, stragglers slow the step, or the quorum costs), ft stall, waiting for
// spares. ETTR = productive / wall.
//
// Trials run in parallel (OpenMP, `threads`); trial t draws only from the
// streams keyed (seed, ..., t), so results do not depend on the thread count.
// Thread safety: run_campaign is a pure function of its arguments.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "failures/failure_model.h"
#include "failures/recovery_policy.h"
#include "sim/sim_time.h"

namespace clustersim::failures {

struct CampaignSpec {
  sim::SimTime duration;  // wall clock of a trial (the cap when tokens are set)
  double tokens = 0;      // > 0: a trial ends when the job has trained this many
  int64_t trials = 100;
  uint64_t seed = 0;
  sim::SimTime step_time;  // one step of the whole job, no failure
  double tokens_per_step = 0;
  // Throughput (fraction of the full job's) with k replica groups alive,
  // k = 0..replica_groups; the last is 1. Empty: k / replica_groups.
  std::vector<double> throughput_by_live;
  // When set, replaces throughput_by_live: the fraction with k < replica_groups
  // groups alive, asked for when a trial first runs with k. It must be safe
  // to call from several threads at once and give the same answer for the
  // same k (so results do not depend on the thread count).
  std::function<double(int64_t live)> throughput_of_live;
  // When set: how many times longer the whole job's step takes while a
  // component of this kind (spine, core switch, switch-to-switch cable) is
  // down, >= 1; the same thread-safety contract as throughput_of_live.
  std::function<double(ComponentKind kind)> slowdown_of_fabric_fault;
  // When set: how many times longer the step takes with one node computing
  // `slowdown` times slower (a straggler), >= 1; unset: `slowdown` itself.
  // The same thread-safety contract.
  std::function<double(double slowdown)> slowdown_of_straggler;
  int64_t replica_groups = 1;
};

enum CampaignAccount : uint8_t {
  kProductive,
  kLostWork,
  kDetection,
  kRestart,
  kCheckpointSave,
  kDegraded,
  kFtStall,
  kSparesWait,
  kFtRejoin,
  kCampaignAccounts
};
// "productive", "lost_work", "detection", "restart", "checkpoint_saves",
// "degraded", "ft_stall", "spares_wait", "ft_rejoin".
const char* campaign_account_name(CampaignAccount account);

struct TrialResult {
  std::array<double, kCampaignAccounts> seconds{};
  double wall_s = 0;
  double tokens = 0;
  int64_t interruptions = 0;  // failures that stopped the job or took out a group
  int64_t failures = 0;       // every failure, including those with no effect
  int64_t full_restarts = 0;
  std::vector<int64_t> interruptions_by_cause;  // by FailureModel cause; stragglers last
  bool trained = false;                         // reached CampaignSpec::tokens
  double ettr() const;
};

struct CampaignResult {
  std::vector<TrialResult> trials;  // in trial order
  double ettr_mean = 0;
  double ettr_ci95_low = 0;  // normal approximation: mean -+ 1.96 s / sqrt(n)
  double ettr_ci95_high = 0;
  double interruptions_mean = 0;
  double goodput_tokens_per_s = 0;  // mean over trials of tokens / wall seconds
  double time_to_train_days = 0;    // mean wall time of the trials (tokens set)
  double trained_fraction = 0;      // trials that reached the tokens
  std::array<double, kCampaignAccounts> seconds_mean{};
  std::vector<double> interruptions_by_cause_mean;
  std::vector<std::string> cause_names;  // parallel to interruptions_by_cause_mean
};

// Preconditions (InvariantError): duration > 0, step_time > 0, tokens_per_step
// > 0, trials >= 1, replica_groups == policy.replica_groups, a
// throughput_by_live of replica_groups + 1 entries in [0, 1] if given.
TrialResult run_trial(const FailureModel& model, const RecoveryPolicy& policy,
                      const CampaignSpec& spec, uint64_t trial);
// Told after each trial how many have finished (for progress lines): one
// call at a time, from whichever thread ran the trial; never changes a result.
using TrialsDone = std::function<void(int64_t finished)>;

CampaignResult run_campaign(const FailureModel& model, const RecoveryPolicy& policy,
                            const CampaignSpec& spec, int threads = 0,
                            const TrialsDone& trials_done = {});

}  // namespace clustersim::failures
