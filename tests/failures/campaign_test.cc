#include "failures/campaign.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "failures/checkpoint_interval.h"
#include "failures/job_components.h"
#include "tests/support/failure_fixtures.h"
#include "topology/cluster_config.h"

namespace clustersim::failures {
namespace {

using sim::SimTime;
using test_support::h100_job;

RecoveryPolicy fixed_restart(SimTime restart, SimTime save, SimTime interval, int64_t gpus) {
  RecoveryPolicy p;
  p.kind = RecoveryPolicyKind::kCheckpointRestart;
  p.job_gpus = gpus;
  p.replica_groups = 1;
  p.gpus_per_replica_group = gpus;
  p.restart_overhead = restart;
  p.checkpoint_interval = interval;
  p.checkpoint_save_blocking = save;
  p.checkpoint_write = save;
  return p;
}

CampaignSpec spec_for(SimTime duration, int64_t trials) {
  CampaignSpec s;
  s.duration = duration;
  s.trials = trials;
  s.seed = 7;
  s.step_time = SimTime::s(10);
  s.tokens_per_step = 4e6;
  return s;
}

// 96 nodes in 12 replica groups of 64 GPUs: checkpoint-restart (15 min
// restart, 1 min saves every 30 min) and FT-HSDP (3 min stall, 20 min back,
// at most 5 groups down).
RecoveryPolicy restart_12_groups() {
  RecoveryPolicy p =
      fixed_restart(SimTime::minutes(15), SimTime::minutes(1), SimTime::minutes(30), 768);
  p.replica_groups = 12;
  p.gpus_per_replica_group = 64;
  return p;
}

RecoveryPolicy ft_12_groups() {
  RecoveryPolicy ft = restart_12_groups();
  ft.kind = RecoveryPolicyKind::kFtHsdp;
  ft.ft_stall_override = SimTime::minutes(3);
  ft.replica_recovery_override = SimTime::minutes(20);
  ft.ft_min_replicas = 7;
  ft.ft_max_failed_replicas = 5;
  return ft;
}

CampaignSpec spec_12_groups() {
  CampaignSpec spec = spec_for(SimTime::days(10), 20);
  spec.replica_groups = 12;
  return spec;
}

double sum_of(const std::array<double, kCampaignAccounts>& a) {
  return std::accumulate(a.begin(), a.end(), 0.0);
}

// Exponential failures, fixed restart and save costs: the mean ETTR is the
// renewal-reward formula (checkpoint_interval.h), within Monte Carlo error.
TEST(Campaign, ExponentialFailuresMatchTheRenewalRewardFormula) {
  const JobComponents job = h100_job(16);
  const FailureModel model = job_mtbf_failure_model(job, SimTime::hours(1));
  const RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(10), SimTime::minutes(1), SimTime::minutes(30), 128);
  const CampaignResult r = run_campaign(model, policy, spec_for(SimTime::days(30), 200), 2);
  CheckpointRestartModel closed;
  closed.mtbf = SimTime::hours(1);
  closed.restart = SimTime::minutes(10);
  closed.save = SimTime::minutes(1);
  closed.interval = SimTime::minutes(30);
  const double expected = expected_ettr(closed);  // 0.6257
  EXPECT_NEAR(expected, 0.625698, 1e-5);
  // 200 trials of 720 failures each: the CI is about +-0.001.
  EXPECT_NEAR(r.ettr_mean, expected, 0.005) << r.ettr_ci95_low << " .. " << r.ettr_ci95_high;
  EXPECT_LT(r.ettr_ci95_high - r.ettr_ci95_low, 0.005);
  // One interruption per hour of wall clock, during recoveries too.
  EXPECT_NEAR(r.interruptions_mean / (30 * 24), 1.0, 0.02);
}

TEST(Campaign, TimeIsConservedInEveryTrial) {
  const JobComponents job = h100_job(64);
  FailureModel model = job_mtbf_failure_model(job, SimTime::minutes(45));
  model.stragglers.rate_per_node_hour = 0.01;
  model.stragglers.slowdown = 1.5;
  model.stragglers.detection = SimTime::minutes(20);
  RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(5), SimTime::s(30), SimTime::minutes(20), 512);
  policy.spare_nodes = 1;
  policy.repair_time = SimTime::hours(2);
  const CampaignResult r = run_campaign(model, policy, spec_for(SimTime::days(3), 20), 1);
  for (const TrialResult& t : r.trials) {
    EXPECT_NEAR(sum_of(t.seconds), t.wall_s, 1e-6 * t.wall_s);
    EXPECT_DOUBLE_EQ(t.wall_s, 3 * 86400.0);
    EXPECT_GE(t.seconds[kProductive], 0);
  }
  EXPECT_GT(r.seconds_mean[kSparesWait], 0);  // one spare, repairs take 2 h
  EXPECT_GT(r.seconds_mean[kDegraded], 0);    // stragglers slow the step
}

TEST(Campaign, NoFailuresLeavesOnlyTheCheckpointOverhead) {
  const JobComponents job = h100_job(16);
  const FailureModel model = empty_failure_model(job);
  const RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(10), SimTime::minutes(2), SimTime::minutes(58), 128);
  const CampaignResult r = run_campaign(model, policy, spec_for(SimTime::days(1), 3), 1);
  // 24 cycles of 58 min training + 2 min save: 58/60 exactly.
  EXPECT_NEAR(r.ettr_mean, 58.0 / 60.0, 1e-9);
  EXPECT_EQ(r.interruptions_mean, 0);
  EXPECT_NEAR(r.seconds_mean[kCheckpointSave], 24 * 120.0, 1e-6);
}

TEST(Campaign, TokensEndTheTrialWhenTrained) {
  const JobComponents job = h100_job(16);
  const FailureModel model = empty_failure_model(job);
  const RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(10), SimTime::minutes(2), SimTime::minutes(58), 128);
  CampaignSpec spec = spec_for(SimTime::days(30), 2);
  spec.tokens = 4e6 * 6 * 58 * 10;  // 580 minutes of training at 6 steps a minute
  const CampaignResult r = run_campaign(model, policy, spec, 1);
  // 10 hours of wall clock: 10 saves of 2 minutes after every 58 minutes.
  EXPECT_NEAR(r.time_to_train_days * 86400, 580 * 60.0 + 9 * 120.0, 1e-6);
  EXPECT_EQ(r.trained_fraction, 1.0);
}

TEST(Campaign, ResultsDoNotDependOnTheThreadCount) {
  const JobComponents job = h100_job(32);
  const FailureModel model = job_mtbf_failure_model(job, SimTime::minutes(30));
  const RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(8), SimTime::minutes(1), SimTime::minutes(25), 256);
  const CampaignSpec spec = spec_for(SimTime::days(5), 16);
  const CampaignResult one = run_campaign(model, policy, spec, 1);
  const CampaignResult two = run_campaign(model, policy, spec, 2);
  EXPECT_EQ(one.ettr_mean, two.ettr_mean);
  EXPECT_EQ(one.ettr_ci95_low, two.ettr_ci95_low);
  for (size_t t = 0; t < one.trials.size(); ++t) {
    EXPECT_EQ(one.trials[t].seconds, two.trials[t].seconds) << t;
    EXPECT_EQ(one.trials[t].interruptions, two.trials[t].interruptions) << t;
  }
}

// Progress: told once per trial, one call at a time, counting up to the
// trials; results the same as unwatched.
TEST(Campaign, TellsEachTrialFinishedWithoutChangingTheResults) {
  const JobComponents job = h100_job(32);
  const FailureModel model = job_mtbf_failure_model(job, SimTime::minutes(30));
  const RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(8), SimTime::minutes(1), SimTime::minutes(25), 256);
  const CampaignSpec spec = spec_for(SimTime::days(5), 16);
  std::vector<int64_t> told;
  const CampaignResult watched =
      run_campaign(model, policy, spec, 2, [&told](int64_t finished) { told.push_back(finished); });
  std::vector<int64_t> counting(16);
  std::iota(counting.begin(), counting.end(), 1);
  EXPECT_EQ(told, counting);
  const CampaignResult alone = run_campaign(model, policy, spec, 2);
  EXPECT_EQ(watched.ettr_mean, alone.ettr_mean);
  EXPECT_EQ(watched.interruptions_mean, alone.interruptions_mean);
}

// Node failures on an HSDP job of 12 replica groups: fault-tolerant HSDP
// keeps the other groups training and loses far less than restarting the
// whole job from its checkpoint.
TEST(Campaign, FtHsdpBeatsCheckpointRestartOnNodeFailures) {
  const JobComponents job = h100_job(96);
  FailureModel model = empty_failure_model(job);
  for (FailureCause& c : model.causes) {
    if (c.name == "host_maintenance") c.rate_per_hour = 1.0 / 40.0 / 96.0 * 4;  // job MTBF 10 h/4
  }
  const RecoveryPolicy restart = restart_12_groups();
  const RecoveryPolicy ft = ft_12_groups();
  const CampaignSpec spec = spec_12_groups();
  const CampaignResult a = run_campaign(model, restart, spec, 2);
  const CampaignResult b = run_campaign(model, ft, spec, 2);
  EXPECT_GT(b.ettr_mean, a.ettr_mean + 0.02) << a.ettr_mean << " vs " << b.ettr_mean;
  EXPECT_GT(b.seconds_mean[kFtStall], 0);
  EXPECT_GT(b.seconds_mean[kDegraded], 0);  // 11 of 12 groups for a while
  EXPECT_EQ(b.seconds_mean[kLostWork], 0);  // no fallback with at most 5 down
  for (const TrialResult& t : b.trials) EXPECT_NEAR(sum_of(t.seconds), t.wall_s, 1e-6 * t.wall_s);
}

// failures.job_mtbf_blast_radius: the same failure times, each striking one
// node instead of the job. Checkpoint-restart restarts the job either way
// (the same ETTR to the last bit); FT-HSDP loses one replica group instead,
// where with blast radius job it can only restart as well.
TEST(Campaign, AJobMtbfStrikingNodesLetsFtHsdpAct) {
  const JobComponents job = h100_job(96);
  const FailureModel whole = job_mtbf_failure_model(job, SimTime::minutes(150));
  const FailureModel node = job_mtbf_failure_model(job, SimTime::minutes(150), BlastRadius::kNode);
  const RecoveryPolicy restart = restart_12_groups();
  const RecoveryPolicy ft = ft_12_groups();
  const CampaignSpec spec = spec_12_groups();
  const CampaignResult restart_whole = run_campaign(whole, restart, spec, 2);
  const CampaignResult restart_node = run_campaign(node, restart, spec, 2);
  const CampaignResult ft_whole = run_campaign(whole, ft, spec, 2);
  const CampaignResult ft_node = run_campaign(node, ft, spec, 2);
  EXPECT_DOUBLE_EQ(restart_node.ettr_mean, restart_whole.ettr_mean);
  EXPECT_DOUBLE_EQ(ft_whole.ettr_mean, restart_whole.ettr_mean);
  EXPECT_GT(ft_node.ettr_mean, restart_whole.ettr_mean + 0.05)
      << restart_whole.ettr_mean << " vs " << ft_node.ettr_mean;
  EXPECT_EQ(ft_whole.seconds_mean[kFtStall], 0);
  EXPECT_GT(ft_node.seconds_mean[kFtStall], 0);
}

// recovery.ft_rejoin_stall: every group pauses when a recovered one
// rejoins, on a line of its own. Rejoins are rarer than failures (a group
// struck again while down, or a full restart, rejoins no one), and a
// rejoin during a stall lengthens the stall instead, so the line is at
// most one pause per interruption; with failures 2.5 h apart and 100 s
// pauses nearly every contained failure pays it.
TEST(Campaign, ARejoiningGroupPausesTheOthers) {
  const JobComponents job = h100_job(96);
  const FailureModel node = job_mtbf_failure_model(job, SimTime::minutes(150), BlastRadius::kNode);
  RecoveryPolicy ft = ft_12_groups();
  const CampaignSpec spec = spec_12_groups();
  const CampaignResult none = run_campaign(node, ft, spec, 2);
  ft.ft_rejoin_stall = SimTime::s(100);
  const CampaignResult paused = run_campaign(node, ft, spec, 2);
  EXPECT_EQ(none.seconds_mean[kFtRejoin], 0);
  EXPECT_LE(paused.seconds_mean[kFtRejoin], paused.interruptions_mean * 100);
  EXPECT_GE(paused.seconds_mean[kFtRejoin], 0.9 * paused.interruptions_mean * 100);
  EXPECT_LT(paused.ettr_mean, none.ettr_mean);
  for (const TrialResult& t : paused.trials) {
    EXPECT_NEAR(sum_of(t.seconds), t.wall_s, 1e-6 * t.wall_s);
  }
}

// A spine down stops nothing: the job runs slowdown times slower until the
// repair, 10 min later. At 2x, each fault costs half of its 600 s as
// degraded time (faults rarely overlap or fall in a save: about 5 per 10-day
// trial); without the simulated step they are counted only.
TEST(Campaign, AFabricFaultSlowsTheStepUntilItsRepair) {
  const JobComponents job = h100_job(128);  // 128 nodes per rail: 4 leaves of 32
  ASSERT_GT(job.count(ComponentKind::kSpineSwitch), 0);
  FailureModel model = empty_failure_model(job);
  const std::span<const FailureCategory> categories = failure_categories();
  size_t spine = 0;
  while (categories[spine].component != ComponentKind::kSpineSwitch) ++spine;
  FailureCause& cause = model.causes[spine];
  cause.rate_per_hour = 5.0 / (240.0 * static_cast<double>(cause.components));
  RecoveryPolicy policy =
      fixed_restart(SimTime::minutes(10), SimTime::s(1), SimTime::hours(6), 1024);
  policy.fabric_repair_time = SimTime::minutes(10);
  CampaignSpec spec = spec_for(SimTime::days(10), 40);
  const CampaignResult counted = run_campaign(model, policy, spec, 1);
  EXPECT_EQ(counted.seconds_mean[kDegraded], 0);
  EXPECT_EQ(counted.interruptions_mean, 0);

  spec.slowdown_of_fabric_fault = [](ComponentKind kind) {
    return kind == ComponentKind::kSpineSwitch ? 2.0 : 1.0;
  };
  const CampaignResult slowed = run_campaign(model, policy, spec, 2);
  EXPECT_EQ(slowed.interruptions_mean, 0);
  double faults = 0;
  for (const TrialResult& t : slowed.trials) faults += static_cast<double>(t.failures);
  faults /= static_cast<double>(slowed.trials.size());
  EXPECT_GT(faults, 3);
  EXPECT_NEAR(slowed.seconds_mean[kDegraded], 300 * faults, 0.02 * 300 * faults);
  EXPECT_NEAR(slowed.ettr_mean, counted.ettr_mean - 300 * faults / (10 * 86400.0), 1e-4);
}

}  // namespace
}  // namespace clustersim::failures
