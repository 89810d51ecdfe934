// All-to-all (NCCL's grouped sends and receives, nccl-tests' alltoall): its
// closed form, its footprint on a real fabric and its sharing of links,
// each against hand-computed figures.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collectives/collective_cost.h"
#include "collectives/collective_flows.h"
#include "collectives/group_collectives.h"
#include "collectives/tuner.h"
#include "tests/support/round_profile.h"
#include "topology/cluster.h"
#include "topology/routing.h"

namespace clustersim::collectives {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// Round numbers (tests/support/round_profile.h) with NVLink at 0.8 of its rate and the
// network at 0.9.
HardwareProfile a2a_profile() { return round_profile(0.8, 0.9); }

const CollectiveChoice kP2p{Algorithm::kRing, Protocol::kSimple, 4};

TEST(AllToAll, NcclTestsBusFactorIsNMinusOneOverN) {
  EXPECT_DOUBLE_EQ(busbw_factor(CollectiveOp::kAllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(ring_bytes_sent_per_rank(CollectiveOp::kAllToAll, 64, 6400), 6300);
  EXPECT_STREQ(to_string(CollectiveOp::kAllToAll), "all_to_all");
}

// 8 GPUs of one node: every peer over NVLink, busbw = 0.8 x 450 GB/s.
// 1 GiB: latency 10 + 7 x 1 us; transfer 7/8 GiB / 360 GB/s.
TEST(AllToAll, OneNodeRunsAtNvLinkRate) {
  const GroupGeometry g{8, 1, 8, 450e9, 50e9, true};
  const CostBreakdown c = collective_cost(a2a_profile(), g, CollectiveOp::kAllToAll, kGiB, kP2p);
  EXPECT_DOUBLE_EQ(c.busbw_Bps, 360e9);
  EXPECT_DOUBLE_EQ(c.latency_s, 17e-6);
  EXPECT_NEAR(c.transfer_s, 0.875 * kGiB / 360e9, 1e-15);
}

// 64 GPUs on 8 nodes: each rank sends 7/64 of the buffer over NVLink
// (7/64 / 360e9 s per byte) and 56/64 over its NIC (56/64 / 45e9): the NIC
// binds, busbw = 63/56 x 45 GB/s = 50.625 GB/s. Latency 10 + 56 x 1 + 7 x 5 us.
TEST(AllToAll, AcrossNodesTheNicBindsAtNMinusOneOverNMinusROfItsRate) {
  const GroupGeometry g{64, 8, 8, 450e9, 50e9, true};
  const CostBreakdown c = collective_cost(a2a_profile(), g, CollectiveOp::kAllToAll, kGiB, kP2p);
  EXPECT_NEAR(c.busbw_Bps, 50.625e9, 1e-3);
  EXPECT_DOUBLE_EQ(c.latency_s, 101e-6);
  // What each NIC carries per second: 56/64 of the buffer over the time.
  EXPECT_NEAR(56.0 / 64.0 * kGiB / c.transfer_s, 45e9, 1e-3);
}

TEST(AllToAll, OnlyThePointToPointSlot) {
  const GroupGeometry g{16, 2, 8, 450e9, 50e9, true};
  EXPECT_EQ(why_invalid(a2a_profile(), g, CollectiveOp::kAllToAll,
                        {Algorithm::kTree, Protocol::kSimple, 1}),
            "tree runs only all_reduce (not all_to_all)");
  const TunedCollective t = tune_collective(a2a_profile(), g, CollectiveOp::kAllToAll, kGiB);
  EXPECT_EQ(t.choice.algorithm, Algorithm::kRing);
}

topology::Cluster hgx_h100(int64_t nodes) {
  topology::ClusterSpec spec;
  spec.nodes = nodes;
  EXPECT_TRUE(topology::node_preset("hgx_h100", spec.node));
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  return topology::build_cluster(spec);
}

HardwareProfile h100() {
  return load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml");
}

std::vector<int64_t> first(int64_t n) {
  std::vector<int64_t> g(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) g[static_cast<size_t>(i)] = i;
  return g;
}

// 16 GPUs on 2 HGX H100 nodes, per byte of buffer at busbw factor 1 (15/16
// of it sent): each GPU's NVLink carries its 7 node peers' 7/15, and the
// first hop off the node (its PCIe link to its NIC) the other 8 peers' 8/15.
TEST(AllToAll, FootprintSplitsEachMembersPeersBetweenNvLinkAndItsNic) {
  const topology::Cluster cluster = hgx_h100(2);
  const HardwareProfile profile = h100();
  CollectiveFlows flows(cluster, profile, Routing::kEcmp);
  const std::vector<int64_t> group = first(16);
  const Footprint f = flows.footprint(group, CollectiveOp::kAllToAll);
  // The loads are keyed by the solver's link ids: count them by coefficient.
  int nvlink = 0, nic = 0;
  for (const LinkLoad& load : f.loads) {
    if (std::abs(load.coefficient - 7.0 / 15.0) < 1e-12) nvlink += 1;
    if (std::abs(load.coefficient - 8.0 / 15.0) < 1e-12) nic += 1;
  }
  // 16 GPUs x 2 NVLink directions; each GPU's four hops off and onto its
  // node (PCIe and NIC, up and down) carry its 8 remote peers' 8/15 (the
  // switch links between carry shares that depend on the hashing).
  EXPECT_EQ(nvlink, 32);
  EXPECT_EQ(nic, 64);
  // Alone, the footprint's rate is the NIC's: 0.94 x 50 GB/s over 8/15 of
  // a byte, i.e. the tuner's all-to-all rate at busbw factor 15/16.
  const GroupGeometry g = geometry_of(cluster, group);
  const TunedCollective t = tune_collective(profile, g, CollectiveOp::kAllToAll, 4 * kGiB);
  const double tuner_Bps = 4.0 * kGiB / t.cost.transfer_s;
  EXPECT_NEAR(f.solo_rate_Bps / busbw_factor(CollectiveOp::kAllToAll, 16) / tuner_Bps, 1.0, 0.01);
}

// Two all-to-alls, each one GPU per node of 4 nodes, on a fat tree whose
// leaves are 2:1 oversubscribed (adaptive routing: a leaf's two 47 GB/s
// uplinks are one 94 GB/s bundle). Alone, each member's 3/4 of the buffer
// leaves over its NIC (94 GB/s) and its leaf's bundle (94 GB/s): the
// tuner's rate. Together, both groups' members on a node share the bundle:
// half each.
TEST(AllToAll, TwoGroupsOnOneOversubscribedLeafShareItsUplinksEvenly) {
  topology::ClusterSpec spec;
  spec.nodes = 4;
  spec.node = topology::NodeSpec{"custom", 2, 400e9, 2, 100e9, 200e9};
  spec.fabric.type = topology::FabricType::kFatTree;
  spec.fabric.switch_radix = 4;
  spec.fabric.leaf_oversubscription = 2.0;
  const topology::Cluster cluster = topology::build_cluster(spec);
  const HardwareProfile profile = h100();
  CollectiveFlows flows(cluster, profile, Routing::kAdaptive);
  const std::vector<int64_t> a{0, 2, 4, 6};
  const std::vector<int64_t> b{1, 3, 5, 7};
  const double factor = busbw_factor(CollectiveOp::kAllToAll, 4);
  const TunedCollective t =
      tune_collective(profile, geometry_of(cluster, a), CollectiveOp::kAllToAll, kGiB);
  const double alone = static_cast<double>(kGiB) / t.cost.transfer_s;
  EXPECT_NEAR(alone * factor, 94e9, 1e3);  // busbw: the NIC at 0.94 x 100 GB/s
  const FlowId fa = flows.start(flows.footprint(a, CollectiveOp::kAllToAll), factor, alone);
  EXPECT_DOUBLE_EQ(flows.rate(fa), alone);
  const FlowId fb = flows.start(flows.footprint(b, CollectiveOp::kAllToAll), factor, alone);
  EXPECT_NEAR(flows.rate(fa) / alone, 0.5, 1e-9);
  EXPECT_NEAR(flows.rate(fb) / alone, 0.5, 1e-9);
  // predict_concurrent runs them alike on its own flows.
  const std::vector<std::vector<int64_t>> groups{a, b};
  for (const GroupPrediction& p :
       predict_concurrent(profile, cluster, groups, CollectiveOp::kAllToAll, kGiB)) {
    EXPECT_LE(p.rate_share, 1.0);
    EXPECT_GE(p.seconds, t.cost.seconds());
  }
}

}  // namespace
}  // namespace clustersim::collectives

namespace clustersim::collectives {
namespace {

// Not fitted: H800 nodes (H100's efficiencies) against DeepEP's published
// H800 figures (deepseek-ai/DeepEP README, normal kernels; docs/network.md).
// 256 MiB a rank, about DeepSeek-V3's 4,096 tokens x 7,168 x top-8 in FP8.
TEST(AllToAllNotFitted, H800AgainstDeepEpsPublishedBandwidths) {
  const HardwareProfile profile =
      load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h800.yaml");
  topology::ClusterSpec spec;
  spec.nodes = 8;
  ASSERT_TRUE(topology::node_preset("hgx_h800", spec.node));
  EXPECT_EQ(spec.node.nvlink_Bps, 200e9);
  spec.fabric.type = topology::FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  const topology::Cluster cluster = topology::build_cluster(spec);
  const int64_t bytes = 256 << 20;
  const auto predict = [&](int64_t n) {
    const std::vector<std::vector<int64_t>> groups{first(n)};
    return predict_concurrent(profile, cluster, groups, CollectiveOp::kAllToAll, bytes).front();
  };
  // EP 8: NVLink bytes per GPU / time is the busbw; DeepEP 153 (dispatch) and
  // 158 GB/s (combine). The model: 160.8, within 6% of both.
  const GroupPrediction one_node = predict(8);
  EXPECT_NEAR(one_node.busbw_Bps / 153e9, 1.0, 0.06);
  EXPECT_NEAR(one_node.busbw_Bps / 158e9, 1.0, 0.06);
  // Across nodes: what a GPU's NIC carries, (n - 8) / n of the buffer over
  // the time: 0.94 x 50 GB/s less the latency's share at this size. DeepEP
  // reports 43 (EP 16), 58 (EP 32) and 51 GB/s (EP 64): its forwarding
  // counts bytes the NIC did not carry, which NCCL's pairwise all-to-all
  // cannot match at EP 32 and 64.
  for (const int64_t n : {16, 32, 64}) {
    SCOPED_TRACE(n);
    const GroupPrediction p = predict(n);
    const double nic = static_cast<double>(n - 8) / static_cast<double>(n) *
                       static_cast<double>(bytes) / p.seconds;
    EXPECT_LT(nic, 0.94 * 50e9);
    EXPECT_GT(nic, 0.94 * 50e9 * 0.93);
  }
  EXPECT_GT(static_cast<double>(16 - 8) / 16 * bytes / predict(16).seconds, 43e9);
  EXPECT_LT(static_cast<double>(32 - 8) / 32 * bytes / predict(32).seconds, 58e9);
  EXPECT_LT(static_cast<double>(64 - 8) / 64 * bytes / predict(64).seconds, 51e9);
}

}  // namespace
}  // namespace clustersim::collectives
