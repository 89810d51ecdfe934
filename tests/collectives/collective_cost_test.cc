#include "collectives/collective_cost.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "collectives/tuner.h"
#include "tests/support/round_profile.h"

namespace clustersim::collectives {
namespace {

GroupGeometry nodes_of_8(int nodes, double nvlink_Bps, double net_Bps, bool nvls) {
  return GroupGeometry{8 * nodes, nodes, 8, nvlink_Bps, net_Bps, nvls};
}

const std::string kHardwareDir = CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/";

TEST(BusBandwidth, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllReduce, 1), 0.0);
  // The H100 CSV's last row: 16 GiB in 62648 us -> 274.23 algbw, 479.90 busbw.
  const int64_t bytes = 17179869184;
  EXPECT_NEAR(algbw_Bps(bytes, 62648e-6) / 1e9, 274.23, 0.01);
  EXPECT_NEAR(busbw_Bps(CollectiveOp::kAllReduce, 8, bytes, 62648e-6) / 1e9, 479.90, 0.01);
}

TEST(BusBandwidth, RingBytesPerRank) {
  EXPECT_DOUBLE_EQ(ring_bytes_sent_per_rank(CollectiveOp::kAllReduce, 8, 800), 1400);
  EXPECT_DOUBLE_EQ(ring_bytes_sent_per_rank(CollectiveOp::kAllGather, 8, 800), 700);
  EXPECT_DOUBLE_EQ(ring_bytes_sent_per_rank(CollectiveOp::kReduceScatter, 8, 800), 700);
  EXPECT_DOUBLE_EQ(ring_bytes_sent_per_rank(CollectiveOp::kBroadcast, 8, 800), 800);
}

TEST(CollectiveCost, RingAllReduceByHand) {
  const HardwareProfile p = round_profile();
  const GroupGeometry g = nodes_of_8(1, 100e9, 10e9, false);
  // latency 10 + 2(8-1) x 1 = 24 us; 8e8 B x 2(7)/8 / 100e9 B/s = 14 ms.
  const CostBreakdown c = collective_cost(p, g, CollectiveOp::kAllReduce, 800'000'000,
                                          {Algorithm::kRing, Protocol::kSimple, 4});
  EXPECT_NEAR(c.latency_s, 24e-6, 1e-12);
  EXPECT_NEAR(c.transfer_s, 14e-3, 1e-12);
  EXPECT_EQ(c.time(), sim::SimTime::ns(14'024'000));
  EXPECT_DOUBLE_EQ(c.busbw_Bps, 100e9);
  // Half the channels, half the bandwidth.
  const CostBreakdown half = collective_cost(p, g, CollectiveOp::kAllReduce, 800'000'000,
                                             {Algorithm::kRing, Protocol::kSimple, 2});
  EXPECT_NEAR(half.transfer_s, 28e-3, 1e-12);
}

TEST(CollectiveCost, MultiNodeRingByHand) {
  const HardwareProfile p = round_profile();
  const GroupGeometry g = nodes_of_8(2, 100e9, 10e9, false);
  // 30 steps, 2 of them between nodes: 10 + 28 x 1 + 2 x 5 = 48 us. Bus
  // bandwidth min(100, 8 NICs x 10) = 80 GB/s.
  const CostBreakdown c = collective_cost(p, g, CollectiveOp::kAllReduce, 1'600'000'000,
                                          {Algorithm::kRing, Protocol::kSimple, 4});
  EXPECT_NEAR(c.latency_s, 48e-6, 1e-12);
  EXPECT_DOUBLE_EQ(c.busbw_Bps, 80e9);
  EXPECT_NEAR(c.transfer_s, 1.6e9 * (30.0 / 16.0) / 80e9, 1e-12);
  // Tree: 10 + 2 x (7 x 1 + 1 x 5) = 34 us; algbw = busbw / 2.
  const CostBreakdown t = collective_cost(p, g, CollectiveOp::kAllReduce, 1'600'000'000,
                                          {Algorithm::kTree, Protocol::kSimple, 4});
  EXPECT_NEAR(t.latency_s, 34e-6, 1e-12);
  EXPECT_NEAR(t.transfer_s, 1.6e9 * 2 / 80e9, 1e-12);
}

TEST(CollectiveCost, ProtocolEfficiencyAndRampFloor) {
  HardwareProfile p = round_profile();
  p.protocol(Protocol::kLL).efficiency = 0.5;
  p.protocol(Protocol::kLL).full_bandwidth_bytes = 4'000'000;  // 1 MB per channel
  const GroupGeometry g = nodes_of_8(1, 100e9, 10e9, false);
  const CollectiveChoice ll{Algorithm::kRing, Protocol::kLL, 1};
  // One channel: 12.5 GB/s busbw; below 1 MB the time is that of 1 MB.
  const CostBreakdown small = collective_cost(p, g, CollectiveOp::kAllReduce, 1000, ll);
  EXPECT_DOUBLE_EQ(small.busbw_Bps, 12.5e9);
  EXPECT_NEAR(small.transfer_s, 1e6 * 1.75 / 12.5e9, 1e-15);
  // The tuner then keeps one channel: more would not be faster.
  const TunedCollective tuned =
      tune_collective(p, g, CollectiveOp::kAllReduce, 1000, {std::nullopt, Protocol::kLL, {}});
  EXPECT_EQ(tuned.choice.channels, 1);
}

TEST(Tuner, ForcedChoicesAreChecked) {
  const HardwareProfile a100 = load_hardware_profile(kHardwareDir + "a100.yaml");
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  const GroupGeometry one_a100 = nodes_of_8(1, 300e9, 25e9, false);
  const GroupGeometry two_h100 = nodes_of_8(2, 450e9, 50e9, true);
  EXPECT_THROW(tune_collective(a100, one_a100, CollectiveOp::kAllReduce, 1 << 20,
                               {Algorithm::kNvls, {}, {}}),
               std::invalid_argument);
  EXPECT_THROW(tune_collective(h100, two_h100, CollectiveOp::kAllReduce, 1 << 20,
                               {Algorithm::kNvls, {}, {}}),
               std::invalid_argument);
  EXPECT_THROW(tune_collective(h100, two_h100, CollectiveOp::kAllGather, 1 << 20,
                               {Algorithm::kTree, {}, {}}),
               std::invalid_argument);
  EXPECT_THROW(tune_collective(h100, two_h100, CollectiveOp::kAllReduce, 1 << 20, {{}, {}, 33}),
               std::invalid_argument);
  try {
    tune_collective(h100, two_h100, CollectiveOp::kAllReduce, 1 << 20, {Algorithm::kNvls, {}, {}});
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("nvls needs one node"), std::string::npos) << e.what();
  }
  // Forcing restricts but still tunes the rest.
  const TunedCollective ll = tune_collective(h100, two_h100, CollectiveOp::kAllReduce, 1 << 30,
                                             {Algorithm::kRing, Protocol::kLL, {}});
  EXPECT_EQ(ll.choice.algorithm, Algorithm::kRing);
  EXPECT_EQ(ll.choice.protocol, Protocol::kLL);
  // NVLS on one H100 node is chosen for large all_reduce.
  const TunedCollective big = tune_collective(h100, nodes_of_8(1, 450e9, 50e9, true),
                                              CollectiveOp::kAllReduce, int64_t{1} << 32);
  EXPECT_EQ(big.choice.algorithm, Algorithm::kNvls);
}

TEST(Tuner, TreeBeatsRingSmallRingBeatsTreeLarge) {
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  const GroupGeometry g = nodes_of_8(16, 450e9, 50e9, true);
  auto time = [&](Algorithm a, int64_t bytes) {
    return tune_collective(h100, g, CollectiveOp::kAllReduce, bytes, {a, {}, {}}).cost.seconds();
  };
  // Tree's latency grows with log2(nodes), ring's linearly: tree wins small.
  EXPECT_LT(time(Algorithm::kTree, 8), time(Algorithm::kRing, 8));
  // Tree moves 2x the buffer at 0.92 of ring's busbw: ring wins large.
  EXPECT_LT(time(Algorithm::kRing, int64_t{1} << 34), time(Algorithm::kTree, int64_t{1} << 34));
}

// Large all_reduce across H100 nodes (8 GPUs, 8x 400 Gb/s NICs each): each of
// the 8 rails carries 1/8 of the ring traffic, so the busbw is bounded by
// 8 NICs x 47 GB/s = 376 GB/s and by NVLink's 370 GB/s; expect busbw per NIC
// in 40-48 GB/s (the lower edge allows ring latency at 1024 ranks).
TEST(Tuner, MultiNodeAllReduceIsNicBound) {
  const HardwareProfile h100 = load_hardware_profile(kHardwareDir + "h100.yaml");
  const int64_t bytes = int64_t{1} << 34;  // 16 GiB
  double last_small = 0;
  std::printf("%6s %12s %14s %12s %12s\n", "nodes", "algorithm", "busbw GB/s", "per NIC",
              "8 B (us)");
  for (int nodes = 2; nodes <= 128; nodes *= 2) {
    const GroupGeometry g = nodes_of_8(nodes, 450e9, 50e9, true);
    const TunedCollective big = tune_collective(h100, g, CollectiveOp::kAllReduce, bytes);
    const double busbw = busbw_Bps(CollectiveOp::kAllReduce, g.ranks, bytes, big.cost.seconds());
    const TunedCollective small = tune_collective(h100, g, CollectiveOp::kAllReduce, 8);
    std::printf("%6d %12s %14.1f %12.1f %12.1f\n", nodes, to_string(big.choice.algorithm),
                busbw / 1e9, busbw / 8e9, small.cost.seconds() * 1e6);
    EXPECT_LE(busbw, 8 * 48e9) << nodes;
    EXPECT_GE(busbw, 8 * 40e9) << nodes;
    EXPECT_GE(small.cost.seconds(), last_small) << nodes;  // latency grows with scale
    last_small = small.cost.seconds();
  }
  const GroupGeometry two = nodes_of_8(2, 450e9, 50e9, true);
  EXPECT_GT(last_small, tune_collective(h100, two, CollectiveOp::kAllReduce, 8).cost.seconds());
}

TEST(CollectiveCost, SingleRankCostsOnlyTheLaunch) {
  HardwareProfile p = round_profile();
  p.launch_overhead_us = 5;
  const GroupGeometry g{1, 1, 1, 100e9, 10e9, false};
  const CostBreakdown c = collective_cost(p, g, CollectiveOp::kAllReduce, 1 << 20,
                                          {Algorithm::kRing, Protocol::kSimple, 1});
  EXPECT_NEAR(c.seconds(), 5e-6, 1e-15);
}

}  // namespace
}  // namespace clustersim::collectives
