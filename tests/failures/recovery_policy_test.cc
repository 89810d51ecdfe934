#include "failures/recovery_policy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "config/config_error.h"
#include "config/scenario_loader.h"
#include "sim/check.h"

namespace clustersim::failures {
namespace {

using sim::SimTime;

constexpr int64_t k16k = 16384;
constexpr int64_t k98k = 98304;

sim::ConfigSchema recovery_schema() {
  sim::ConfigSchema schema;
  sim::add_scenario_identity_keys(schema);
  add_recovery_keys(schema);
  return schema;
}

RecoveryPolicy read(std::string_view yaml, int64_t gpus = k16k, int64_t replicas = 1,
                    const WorkloadFacts& workload = {}) {
  return read_recovery_policy(sim::load_scenario_text(yaml, "s.yaml", recovery_schema()), gpus,
                              replicas, workload);
}

std::string error_of(std::string_view yaml, int64_t gpus = k16k, int64_t replicas = 1) {
  try {
    read(yaml, gpus, replicas);
  } catch (const sim::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

double seconds(SimTime t) { return t.to_seconds(); }

// Defaults at 16,384 GPUs (the orchestration pieces' reference size), 1 GB of
// state per GPU: 60 + 15 + 20 + 43 + 17 (comm init) + 8.192 (16384 GB / 2 TB/s)
// + 60 = 223.192 s.
TEST(RecoveryPolicy, DefaultsAt16kGpus) {
  const RecoveryPolicy p = read("name: t\n");
  EXPECT_EQ(p.kind, RecoveryPolicyKind::kCheckpointRestart);
  EXPECT_EQ(p.detection, SimTime::s(60));
  EXPECT_EQ(p.teardown, SimTime::s(15));
  EXPECT_EQ(p.reallocation, SimTime::s(20));
  EXPECT_EQ(p.process_start, SimTime::s(43));
  EXPECT_EQ(p.comm_init, SimTime::s(17));
  EXPECT_EQ(p.checkpoint_load, SimTime::ms(8192));
  EXPECT_EQ(p.warmup, SimTime::s(60));
  EXPECT_FALSE(p.restart_overhead.has_value());
  EXPECT_EQ(restart_cost(p), SimTime::ms(223192));
  EXPECT_FALSE(p.spare_nodes.has_value());
  EXPECT_EQ(p.repair_time, SimTime::days(1));
  EXPECT_EQ(p.checkpoint_interval, SimTime::minutes(30));
  EXPECT_EQ(p.checkpoint_save_blocking, SimTime::ms(8192));
  EXPECT_EQ(p.checkpoint_write, SimTime::ms(8192));
  EXPECT_FALSE(p.async_checkpoint);
  EXPECT_EQ(p.checkpoint_bytes_per_gpu, 1'000'000'000);
}

// At 98,304 GPUs the orchestration pieces are 6 times theirs at 16,384
// (growth 1): 60 + (15 + 20 + 43) x 6 + 200 + 49.152 + 60 = 837.152 s.
TEST(RecoveryPolicy, DefaultsAt98kGpus) {
  const RecoveryPolicy p = read("name: t\n", k98k);
  EXPECT_EQ(p.teardown, SimTime::s(90));
  EXPECT_EQ(p.reallocation, SimTime::s(120));
  EXPECT_EQ(p.process_start, SimTime::s(258));
  EXPECT_NEAR(seconds(p.comm_init), 200.0, 1e-6);
  EXPECT_EQ(p.checkpoint_load, SimTime::ms(49152));
  EXPECT_NEAR(seconds(restart_cost(p)), 837.152, 1e-6);
}

// Fitted: the orchestration pieces' 78 s at 16,384 GPUs (growth 1) is the
// sum that minimises the largest error against arXiv:2602.00277's
// synchronous cold recovery (Fig. 2, as reported: ~200 / 300 / 600 / 900 s
// at 16k / 22k / 64k / 98k GPUs; 22k read as 2,816 nodes). The restart by
// hand, 120 s (detection, warm-up) + 17 s x (N/16384)^1.3758 + N GB / 2 TB/s
// + 78 s x N/16384: 223.19 / 264.86 / 579.26 / 837.15 s, errors +11.6% /
// -11.7% / -3.5% / -7.0%; within the issue's 15% at all four, in sample.
TEST(RecoveryPolicy, ColdRecoveryFittedToFtHsdpFigure2) {
  const struct {
    int64_t gpus;
    double published_s;
    double restart_s;
  } points[] = {{16384, 200, 223.192}, {22528, 300, 264.861}, {65536, 600, 579.257},
                {98304, 900, 837.152}};
  for (const auto& point : points) {
    const double restart = seconds(restart_cost(read("name: t\n", point.gpus)));
    EXPECT_NEAR(restart, point.restart_s, 0.01) << point.gpus;
    EXPECT_LT(std::abs(restart / point.published_s - 1), 0.118) << point.gpus;
  }
}

// Growth 0 keeps the pieces as given at any size; another reference size
// scales from there (8,192 GPUs at half of 16,384's: 30 s at 8,192 is 60 s
// at 16,384).
TEST(RecoveryPolicy, OrchestrationGrowthAndReference) {
  const RecoveryPolicy flat = read("name: t\nrecovery:\n  orchestration_growth: 0\n", k98k);
  EXPECT_EQ(flat.process_start, SimTime::s(43));
  EXPECT_EQ(flat.teardown, SimTime::s(15));
  const RecoveryPolicy half = read(
      "name: t\nrecovery:\n  orchestration_reference_gpus: 8192\n  process_start: 30s\n"
      "  orchestration_growth: 0.5\n",
      32768);
  EXPECT_EQ(half.process_start, SimTime::s(60));  // 30 s x (32768 / 8192)^0.5
  EXPECT_NE(error_of("name: t\nrecovery:\n  orchestration_growth: -1\n").find(
                "recovery.orchestration_growth"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\nrecovery:\n  orchestration_reference_gpus: 0\n")
                .find("recovery.orchestration_reference_gpus"),
            std::string::npos);
}

// The stock law passes through both published points (17 s at 16k, 200 s at
// 98k): its error there is floating-point rounding only. MegaScale's through
// its two bounds, 5 s at 2,048 and 30 s at 12,288 (linear).
TEST(CommInit, PresetsThroughThePublishedPoints) {
  EXPECT_NEAR(seconds(comm_init_time(CommInitPreset::kStock, k16k)), 17.0, 1e-6);
  EXPECT_NEAR(seconds(comm_init_time(CommInitPreset::kStock, k98k)), 200.0, 1e-6);
  EXPECT_NEAR(seconds(comm_init_time(CommInitPreset::kStock, 8192)), 6.5508, 1e-4);
  EXPECT_NEAR(seconds(comm_init_time(CommInitPreset::kMegascale, 2048)), 5.0, 1e-6);
  EXPECT_NEAR(seconds(comm_init_time(CommInitPreset::kMegascale, 12288)), 30.0, 1e-6);
  EXPECT_NEAR(seconds(comm_init_time(CommInitPreset::kMegascale, k98k)), 240.0, 1e-6);
  EXPECT_EQ(read("name: t\nrecovery:\n  comm_init_preset: megascale\n").comm_init,
            SimTime::ms(40000));
  EXPECT_THROW(comm_init_time(CommInitPreset::kStock, 0), sim::InvariantError);
}

TEST(RecoveryPolicy, RestartOverheadReplacesTheSum) {
  const RecoveryPolicy p = read("name: t\nrecovery:\n  restart_overhead: 7min\n  warmup: 1h\n");
  EXPECT_EQ(restart_cost(p), SimTime::minutes(7));
  const std::vector<CostPiece> pieces = restart_pieces(p);
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].name, "restart_overhead");
}

TEST(RecoveryPolicy, PieceOverridesAndThePiecesSum) {
  const RecoveryPolicy p = read(
      "name: t\nrecovery:\n  detection: 10min\n  comm_init: 45s\n  checkpoint_load: 2min\n"
      "  teardown: 0s\n");
  EXPECT_EQ(p.comm_init, SimTime::s(45));
  EXPECT_EQ(p.checkpoint_load, SimTime::minutes(2));
  EXPECT_EQ(restart_cost(p), SimTime::s(600 + 0 + 20 + 43 + 45 + 120 + 60));
  SimTime sum;
  for (const CostPiece& piece : restart_pieces(p)) sum += piece.time;
  EXPECT_EQ(sum, restart_cost(p));
  EXPECT_EQ(restart_pieces(p).size(), 7u);
  EXPECT_EQ(restart_pieces(p)[4].name, "comm_init");
}

TEST(RecoveryPolicy, CheckpointBytesFromTheKeyOrTheWorkload) {
  const WorkloadFacts workload{SimTime::s(30), 500'000'000};
  EXPECT_EQ(read("name: t\n", k16k, 1, workload).checkpoint_load, SimTime::ms(4096));
  const RecoveryPolicy given =
      read("name: t\nrecovery:\n  checkpoint_bytes_per_gpu: 2GB\n", k16k, 1, workload);
  EXPECT_EQ(given.checkpoint_bytes_per_gpu, 2'000'000'000);
  EXPECT_EQ(given.checkpoint_load, SimTime::ms(16384));
}

TEST(RecoveryPolicy, PerGpuStorageBandwidthBoundsLoadAndSave) {
  // 1 GB at 0.1 GB/s per GPU: 10 s, longer than 8.192 s through the aggregate.
  const RecoveryPolicy p = read(
      "name: t\nrecovery:\n  storage_bandwidth_per_gpu: 100MB/s\n  storage_bandwidth: 4TB/s\n");
  EXPECT_EQ(p.checkpoint_load, SimTime::s(10));
  EXPECT_EQ(p.checkpoint_save_blocking, SimTime::s(10));
}

// Saves are deduplicated across replica groups: 98,304 GPUs x 1 GB / 12
// groups / 2 TB/s = 4.096 s; loads are not (every group reads its state).
TEST(RecoveryPolicy, SaveCostFromSizeAndBandwidth) {
  const RecoveryPolicy p = read("name: t\n", k98k, 12);
  EXPECT_EQ(p.checkpoint_save_blocking, SimTime::ms(4096));
  EXPECT_EQ(p.checkpoint_load, SimTime::ms(49152));
}

// Async: 8.192 s x 6.3/148.8 = 0.346839 s blocking; durable after the
// synchronous time.
TEST(RecoveryPolicy, AsyncSaveBlocksForTheDcpFraction) {
  const RecoveryPolicy p = read("name: t\nrecovery:\n  async_checkpoint: true\n");
  EXPECT_TRUE(p.async_checkpoint);
  EXPECT_NEAR(seconds(p.checkpoint_save_blocking), 8.192 * 6.3 / 148.8, 1e-9);
  EXPECT_EQ(p.checkpoint_write, SimTime::ms(8192));
  const RecoveryPolicy given = read(
      "name: t\nrecovery:\n  async_checkpoint: true\n  checkpoint_save_blocking: 3s\n"
      "  checkpoint_interval: 10min\n");
  EXPECT_EQ(given.checkpoint_save_blocking, SimTime::s(3));
  EXPECT_EQ(given.checkpoint_write, SimTime::ms(8192));
  EXPECT_EQ(given.checkpoint_interval, SimTime::minutes(10));
  const RecoveryPolicy sync = read("name: t\nrecovery:\n  checkpoint_save_blocking: 3s\n");
  EXPECT_EQ(sync.checkpoint_write, SimTime::s(3));
}

// 98,304 GPUs in 12 groups of 8,192, step 30 s:
//   stall = 60 + 90 + 30 = 180 s (arXiv:2602.00277's ~3 min);
//   replica = (15 + 20 + 43) x 8192/16384 + comm_init(8192) 6.5508
//             + 1 GB / 46 GB/s 0.021739 + 60 (one group's GPUs restart).
TEST(RecoveryPolicy, FtHsdpStallAndReplicaRecovery) {
  const RecoveryPolicy p =
      read("name: t\nrecovery:\n  policy: ft_hsdp\n", k98k, 12, WorkloadFacts{SimTime::s(30), 0});
  EXPECT_EQ(p.kind, RecoveryPolicyKind::kFtHsdp);
  EXPECT_EQ(p.gpus_per_replica_group, 8192);
  EXPECT_EQ(p.ft_redo, SimTime::s(30));
  EXPECT_EQ(ft_stall(p), SimTime::minutes(3));
  EXPECT_EQ(p.replica_comm_init, comm_init_time(CommInitPreset::kStock, 8192));
  EXPECT_EQ(p.state_copy, SimTime::from_seconds_rounded(1e9 / 46e9));
  EXPECT_EQ(p.replica_process_start, SimTime::ms(21500));
  EXPECT_NEAR(seconds(replica_recovery(p)), 39 + 60 + 6.5508 + 0.021739, 1e-3);
  EXPECT_EQ(replica_recovery_pieces(p).size(), 6u);
  EXPECT_EQ(ft_stall_pieces(p).size(), 3u);
  EXPECT_EQ(p.ft_step_overhead, SimTime::zero());  // 0.7 s quorum hidden behind a 30 s step
}

TEST(RecoveryPolicy, FtOverridesReplaceTheirSums) {
  const RecoveryPolicy p = read(
      "name: t\nrecovery:\n  policy: ft_hsdp\n  ft_stall: 2min\n  replica_recovery: 15min\n"
      "  ft_redo: 5s\n",
      k98k, 12);
  EXPECT_EQ(ft_stall(p), SimTime::minutes(2));
  EXPECT_EQ(replica_recovery(p), SimTime::minutes(15));
  ASSERT_EQ(ft_stall_pieces(p).size(), 1u);
  EXPECT_EQ(ft_stall_pieces(p)[0].name, "ft_stall");
  EXPECT_EQ(replica_recovery_pieces(p)[0].name, "replica_recovery");
  EXPECT_EQ(p.ft_redo, SimTime::s(5));
}

TEST(RecoveryPolicy, QuorumOverheadPerStep) {
  const std::string ft = "name: t\nrecovery:\n  policy: ft_hsdp\n";
  EXPECT_EQ(read(ft, k98k, 12, {SimTime::ms(500), 0}).ft_step_overhead, SimTime::ms(200));
  EXPECT_EQ(
      read(ft + "  ft_quorum_overlapped: false\n", k98k, 12, {SimTime::s(30), 0}).ft_step_overhead,
      SimTime::ms(700));
}

// Default quorum: more than half of 12 groups = 7, so 5 may be down at once.
TEST(RecoveryPolicy, QuorumAndTolerance) {
  const std::string ft = "name: t\nrecovery:\n  policy: ft_hsdp\n";
  const RecoveryPolicy p = read(ft, k98k, 12);
  EXPECT_EQ(p.ft_min_replicas, 7);
  EXPECT_EQ(p.ft_max_failed_replicas, 5);
  EXPECT_TRUE(ft_tolerates(p, 5));
  EXPECT_FALSE(ft_tolerates(p, 6));
  EXPECT_EQ(read(ft + "  ft_max_failed_replicas: 2\n", k98k, 12).ft_max_failed_replicas, 2);
  EXPECT_EQ(read(ft + "  ft_max_failed_replicas: 9\n", k98k, 12).ft_max_failed_replicas, 5);
  const RecoveryPolicy two = read(ft, 16, 2);
  EXPECT_EQ(two.ft_max_failed_replicas, 0);
  EXPECT_FALSE(ft_tolerates(two, 1));
  EXPECT_TRUE(ft_tolerates(read(ft + "  ft_min_replicas: 1\n", 16, 2), 1));
}

TEST(RecoveryPolicy, SparePool) {
  const RecoveryPolicy p = read("name: t\nrecovery:\n  spare_nodes: 16\n  repair_time: 3d\n");
  EXPECT_EQ(p.spare_nodes, 16);
  EXPECT_EQ(p.repair_time, SimTime::days(3));
}

TEST(RecoveryPolicyErrors, FtHsdpNeedsTwoReplicaGroups) {
  EXPECT_EQ(error_of("name: t\nrecovery:\n  policy: ft_hsdp\n"),
            "s.yaml:3:11: error: recovery.policy: ft_hsdp needs at least 2 replica groups, found 1 "
            "(HYBRID_SHARD with workload.parallelism.replica_group_size >= 2; or "
            "checkpoint_restart)");
}

TEST(RecoveryPolicyErrors, QuorumAboveTheReplicaGroups) {
  EXPECT_EQ(error_of("name: t\nrecovery:\n  policy: ft_hsdp\n  ft_min_replicas: 5\n", 32, 4),
            "s.yaml:4:20: error: recovery.ft_min_replicas: expected at most the job's 4 replica "
            "groups, found 5");
  // Ignored under checkpoint_restart, so that --set recovery.policy switches freely.
  EXPECT_EQ(error_of("name: t\nrecovery:\n  ft_min_replicas: 5\n", 32, 4), "no error");
}

TEST(RecoveryPolicyErrors, EveryBadValueAtOnceWithItsLine) {
  EXPECT_EQ(error_of("name: t\nrecovery:\n  detection: -5s\n  checkpoint_interval: 0s\n"
                     "  restart_overhead: -1min\n  ft_stall: -3s\n"),
            "s.yaml:3:14: error: recovery.detection: expected a non-negative duration such as "
            "'10min', found '-5s'\n"
            "s.yaml:4:24: error: recovery.checkpoint_interval: expected a positive duration "
            "such as '10min', found '0s'\n"
            "s.yaml:5:21: error: recovery.restart_overhead: expected a non-negative duration "
            "such as '10min', found '-1min'\n"
            "s.yaml:6:13: error: recovery.ft_stall: expected a non-negative duration such as "
            "'10min', found '-3s'");
  EXPECT_EQ(error_of("name: t\nrecovery:\n  async_blocking_fraction: 0\n"),
            "s.yaml:3:28: error: recovery.async_blocking_fraction: expected a number in (0, "
            "1], found '0'");
  EXPECT_EQ(error_of("name: t\nrecovery:\n  policy: ft_hdsp\n"),
            "s.yaml:3:11: error: recovery.policy: expected one of checkpoint_restart, ft_hsdp, "
            "found 'ft_hdsp': did you mean 'ft_hsdp'?");
}

TEST(RecoveryPolicy, BareNumbersAreSeconds) {
  EXPECT_EQ(read("name: t\nrecovery:\n  detection: 90\n").detection, SimTime::s(90));
}

TEST(RecoveryPolicy, EveryKeyIsDocumented) {
  const sim::ConfigSchema schema = recovery_schema();
  int keys = 0;
  for (const auto& [path, spec] : schema.keys()) {
    if (!path.starts_with("recovery.")) continue;
    ++keys;
    EXPECT_FALSE(spec.doc.empty()) << path;
  }
  EXPECT_EQ(keys, 33);
  for (const char* issue_key : {"recovery.policy", "recovery.restart_overhead", "recovery.ft_stall",
                                "recovery.replica_recovery", "recovery.ft_rejoin_stall", "recovery.checkpoint_interval",
                                "recovery.checkpoint_save_blocking", "recovery.async_checkpoint",
                                "recovery.spare_nodes", "recovery.repair_time"}) {
    EXPECT_NE(schema.find_key(issue_key), nullptr) << issue_key;
  }
}

}  // namespace
}  // namespace clustersim::failures
