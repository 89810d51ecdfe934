// Collectives of groups placed on a cluster: their geometry, and the sharing
// of links between groups that run at once (predict_concurrent).
//
// The contention cases use a fat-tree small enough to draw: 4 custom nodes of
// 2 GPUs and 2 NICs of 100 GB/s, radix-4 switches (4 leaves of 2 down and 2
// up ports, 2 spines), leaves 2:1 oversubscribed (each uplink 50 GB/s). With
// the H100 profile the solver sees NICs at 94 GB/s (x 0.94) and uplinks at
// 47 GB/s.
#include "collectives/group_collectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "collectives/tuner.h"
#include "sim/random_stream.h"
#include "topology/cluster.h"
#include "topology/routing.h"

namespace clustersim::collectives {
namespace {

using topology::Cluster;
using topology::ClusterSpec;
using topology::FabricType;

constexpr int64_t kGiB = int64_t{1} << 30;

HardwareProfile h100() {
  return load_hardware_profile(CLUSTERSIM_SOURCE_DIR "/scenarios/hardware/h100.yaml");
}

ClusterSpec latencies(ClusterSpec spec) {
  spec.latency = {sim::SimTime::ns(100), sim::SimTime::ns(200), sim::SimTime::ns(500)};
  return spec;
}

// `nodes` HGX H100 nodes on a non-blocking rail-optimised fabric.
Cluster hgx_h100(int64_t nodes) {
  ClusterSpec spec;
  spec.nodes = nodes;
  EXPECT_TRUE(topology::node_preset("hgx_h100", spec.node));
  spec.fabric.type = FabricType::kRailOptimized;
  spec.fabric.switch_radix = 64;
  return topology::build_cluster(latencies(spec));
}

// Custom nodes of 2 GPUs (NVLink 400 GB/s) and 2 NICs of 100 GB/s on PCIe of
// 200 GB/s (so PCIe never binds), in a fat-tree of radix-4 switches.
Cluster small_fat_tree(int64_t nodes, double leaf_oversubscription,
                       double spine_oversubscription = 1.0) {
  ClusterSpec spec;
  spec.nodes = nodes;
  spec.node = topology::NodeSpec{"custom", 2, 400e9, 2, 100e9, 200e9};
  spec.fabric.type = FabricType::kFatTree;
  spec.fabric.switch_radix = 4;
  spec.fabric.leaf_oversubscription = leaf_oversubscription;
  spec.fabric.spine_oversubscription = spine_oversubscription;
  return topology::build_cluster(latencies(spec));
}

// The leaf-spine edges (both directions) a group's inter-node rings cross:
// the route from each member to the next member in ring order.
std::set<topology::EdgeId> switch_edges(const Cluster& cluster, const std::vector<int64_t>& group) {
  std::set<topology::EdgeId> edges;
  for (size_t i = 0; i < group.size(); ++i) {
    for (const topology::EdgeId e :
         topology::route(cluster, group[i], group[(i + 1) % group.size()])) {
      if (cluster.link_kind(e) == topology::LinkKind::kLeafSpine) edges.insert(e);
    }
  }
  return edges;
}

std::vector<int64_t> iota_group(int64_t first, int64_t count, int64_t stride = 1) {
  std::vector<int64_t> group;
  for (int64_t i = 0; i < count; ++i) group.push_back(first + i * stride);
  return group;
}

// ---- geometry ----

TEST(GroupGeometry, OneHgxH100Node) {
  const Cluster cluster = hgx_h100(2);
  const GroupGeometry g = geometry_of(cluster, iota_group(0, 8));
  EXPECT_EQ(g.ranks, 8);
  EXPECT_EQ(g.nodes, 1);
  EXPECT_EQ(g.ranks_per_node, 8);
  EXPECT_EQ(g.nvlink_Bps_per_gpu, 450e9);
  // 8 NICs of 400 Gb/s for 8 GPUs: 50 GB/s each.
  EXPECT_EQ(g.net_Bps_per_gpu, 50e9);
  EXPECT_TRUE(g.nvls_available);
}

TEST(GroupGeometry, SixteenGpusOverTwoNodes) {
  const Cluster cluster = hgx_h100(2);
  const GroupGeometry g = geometry_of(cluster, iota_group(0, 16));
  EXPECT_EQ(g.ranks, 16);
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.ranks_per_node, 8);
  EXPECT_EQ(g.net_Bps_per_gpu, 50e9);
}

TEST(GroupGeometry, StrideEightPutsOneMemberOnEachNode) {
  const Cluster cluster = hgx_h100(4);
  const std::vector<int64_t> group = iota_group(0, 4, 8);  // 0, 8, 16, 24
  EXPECT_EQ(uniform_ranks_per_node(cluster, group), 1);
  const GroupGeometry g = geometry_of(cluster, group);
  EXPECT_EQ(g.ranks, 4);
  EXPECT_EQ(g.nodes, 4);
  EXPECT_EQ(g.ranks_per_node, 1);
}

TEST(GroupGeometry, UnevenGroupsHaveNoUniformRanksPerNode) {
  const Cluster cluster = hgx_h100(2);
  EXPECT_EQ(uniform_ranks_per_node(cluster, iota_group(0, 12)), 0);  // 8 + 4
  EXPECT_EQ(uniform_ranks_per_node(cluster, std::vector<int64_t>{0, 1, 8}), 0);
  EXPECT_EQ(uniform_ranks_per_node(cluster, std::vector<int64_t>{0, 8}), 1);
  EXPECT_EQ(uniform_ranks_per_node(cluster, std::vector<int64_t>{9, 1, 8, 0}), 2);
}

TEST(GroupGeometry, UnevenGroupIsABrokenInvariant) {
  const Cluster cluster = hgx_h100(2);
  EXPECT_THROW(geometry_of(cluster, iota_group(0, 12)), sim::InvariantError);
  EXPECT_THROW(geometry_of(cluster, std::vector<int64_t>{}), sim::InvariantError);
  EXPECT_THROW(geometry_of(cluster, std::vector<int64_t>{16}), sim::InvariantError);
}

// ---- one group, disjoint groups ----

TEST(PredictConcurrent, OneGroupIsTheTunersPrediction) {
  const HardwareProfile profile = h100();
  const Cluster cluster = hgx_h100(2);
  const std::vector<std::vector<int64_t>> groups{iota_group(0, 16)};
  for (const int64_t bytes : {int64_t{8}, int64_t{1} << 20, kGiB}) {
    const std::vector<GroupPrediction> p =
        predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, bytes);
    ASSERT_EQ(p.size(), 1u);
    const TunedCollective t =
        tune_collective(profile, geometry_of(cluster, groups[0]), CollectiveOp::kAllReduce, bytes);
    EXPECT_EQ(p[0].rate_share, 1);
    EXPECT_EQ(p[0].seconds, t.cost.seconds());
    EXPECT_EQ(p[0].tuned.choice.algorithm, t.choice.algorithm);
    EXPECT_EQ(p[0].tuned.choice.protocol, t.choice.protocol);
    EXPECT_EQ(p[0].tuned.choice.channels, t.choice.channels);
    EXPECT_EQ(p[0].busbw_Bps, busbw_Bps(CollectiveOp::kAllReduce, 16, bytes, t.cost.seconds()));
  }
}

// Two nodes' worth of single-node groups share no link. At 1 GiB the tuner
// picks NVLS, whose 480 GB/s bus bandwidth exceeds what the ring-shaped
// NVLink footprint allows (370 GB/s); that must not count as contention.
TEST(PredictConcurrent, DisjointSingleNodeGroupsDoNotSlowEachOther) {
  const HardwareProfile profile = h100();
  const Cluster cluster = hgx_h100(2);
  const std::vector<std::vector<int64_t>> groups{iota_group(0, 8), iota_group(8, 8)};
  for (const int64_t bytes : {int64_t{1} << 20, int64_t{64} << 20, kGiB}) {
    const std::vector<GroupPrediction> alone =
        predict_concurrent(profile, cluster, {&groups[0], 1}, CollectiveOp::kAllReduce, bytes);
    const std::vector<GroupPrediction> both =
        predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, bytes);
    ASSERT_EQ(both.size(), 2u);
    for (const GroupPrediction& p : both) {
      EXPECT_EQ(p.rate_share, 1) << bytes;
      EXPECT_EQ(p.seconds, alone[0].seconds) << bytes;
      EXPECT_EQ(p.busbw_Bps, alone[0].busbw_Bps) << bytes;
    }
  }
  const std::vector<GroupPrediction> big =
      predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, kGiB);
  EXPECT_EQ(big[0].tuned.choice.algorithm, Algorithm::kNvls);
}

// ---- the case: two all-reduces on one oversubscribed uplink ----
//
// A = {0, 2} (node 0 rail 0, node 1 rail 0), B = {1, 3} (the same nodes,
// rail 1): both rings cross from leaf 0 to leaf 1 and back; ECMP sends both
// over the same uplinks (checked below). Each group: 2 ranks on 2 nodes, all
// reduce busbw factor 2(2-1)/2 = 1, so one byte crosses each ring link per
// byte of buffer.
//  * tuner (uncontended): busbw = min(400 x 0.8222, 1 x 100 x 0.94) = 94 GB/s
//    = algbw (factor 1);
//  * solver, group alone: the 47 GB/s uplink binds (47 GB/s);
//  * solver, both: the uplink is split evenly, 23.5 GB/s each;
//  * rate share = 23.5 / 47 = 0.5; contended rate = 94 x 0.5 = 47 GB/s.
TEST(PredictConcurrent, TwoAllReducesOnAnOversubscribedUplinkEachGetHalf) {
  const HardwareProfile profile = h100();
  const Cluster cluster = small_fat_tree(4, 2.0);
  ASSERT_EQ(cluster.shape().tiers, 2);
  ASSERT_EQ(cluster.shape().leaf_up_Bps, 50e9);
  const std::vector<int64_t> a{0, 2};
  const std::vector<int64_t> b{1, 3};
  const std::set<topology::EdgeId> uplinks = switch_edges(cluster, a);
  ASSERT_EQ(uplinks.size(), 4u);  // up and down in each direction of the ring
  ASSERT_EQ(switch_edges(cluster, b), uplinks) << "the groups should cross the same uplinks";

  const std::vector<std::vector<int64_t>> alone_groups{a};
  const std::vector<std::vector<int64_t>> groups{a, b};
  const GroupPrediction alone =
      predict_concurrent(profile, cluster, alone_groups, CollectiveOp::kAllReduce, kGiB).front();
  const std::vector<GroupPrediction> both =
      predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, kGiB);
  ASSERT_EQ(both.size(), 2u);

  const CostBreakdown& cost = alone.tuned.cost;
  EXPECT_EQ(alone.tuned.choice.algorithm, Algorithm::kRing);
  EXPECT_EQ(alone.tuned.choice.protocol, Protocol::kSimple);
  EXPECT_NEAR(cost.busbw_Bps, 94e9, 1e3);
  EXPECT_NEAR(static_cast<double>(kGiB) / cost.transfer_s, 94e9, 1e3);
  EXPECT_EQ(alone.rate_share, 1);

  for (const GroupPrediction& p : both) {
    EXPECT_NEAR(p.rate_share, 0.5, 1e-12);
    EXPECT_NEAR(p.seconds, cost.latency_s + static_cast<double>(kGiB) / 47e9, 1e-9);
    // busbw factor 1: busbw = algbw, just under the 47 GB/s (latency).
    EXPECT_DOUBLE_EQ(p.busbw_Bps, static_cast<double>(kGiB) / p.seconds);
    EXPECT_LT(p.busbw_Bps, 47e9);
    EXPECT_GT(p.busbw_Bps, 46.9e9);
    // Adding the second group never makes the first faster.
    EXPECT_GT(p.seconds, alone.seconds);
  }
  EXPECT_EQ(both[0].seconds, both[1].seconds);
}

// At 4:1 the uplinks are 25 GB/s (23.5 effective): the group alone is bound
// there, and two groups still split it evenly: share 0.5.
TEST(PredictConcurrent, ShareOnAFourToOneUplinkIsStillHalf) {
  const HardwareProfile profile = h100();
  const Cluster cluster = small_fat_tree(4, 4.0);
  const std::vector<std::vector<int64_t>> groups{{0, 2}, {1, 3}};
  ASSERT_EQ(switch_edges(cluster, groups[0]), switch_edges(cluster, groups[1]));
  for (const GroupPrediction& p :
       predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, kGiB)) {
    EXPECT_NEAR(p.rate_share, 0.5, 1e-12);
  }
}

// A = {0, 2} and C = {4, 6} (nodes 2 and 3) cross different uplinks. Each is
// bound by its own 47 GB/s uplink in the solver even alone, which is not
// contention: both keep share 1 and the tuner's time.
TEST(PredictConcurrent, GroupsOnDisjointUplinksKeepTheirRate) {
  const HardwareProfile profile = h100();
  const Cluster cluster = small_fat_tree(4, 2.0);
  const std::vector<std::vector<int64_t>> groups{{0, 2}, {4, 6}};
  const std::set<topology::EdgeId> a = switch_edges(cluster, groups[0]);
  const std::set<topology::EdgeId> c = switch_edges(cluster, groups[1]);
  std::vector<topology::EdgeId> common;
  std::set_intersection(a.begin(), a.end(), c.begin(), c.end(), std::back_inserter(common));
  ASSERT_TRUE(common.empty());
  for (const GroupPrediction& p :
       predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, kGiB)) {
    EXPECT_EQ(p.rate_share, 1);
    EXPECT_EQ(p.seconds, p.tuned.cost.seconds());
  }
}

// Small buffers are latency-bound: the tuner's transfer term is the ramp
// floor, and contention can only stretch it, never shorten the time.
TEST(PredictConcurrent, SharedUplinkAtSmallSizesNeverFaster) {
  const HardwareProfile profile = h100();
  const Cluster cluster = small_fat_tree(4, 2.0);
  const std::vector<std::vector<int64_t>> groups{{0, 2}, {1, 3}};
  for (int64_t bytes = 8; bytes <= kGiB; bytes *= 8) {
    const GroupPrediction alone =
        predict_concurrent(profile, cluster, {&groups[0], 1}, CollectiveOp::kAllReduce, bytes)
            .front();
    const std::vector<GroupPrediction> both =
        predict_concurrent(profile, cluster, groups, CollectiveOp::kAllReduce, bytes);
    EXPECT_GE(both[0].seconds, alone.seconds) << bytes;
    EXPECT_GT(both[0].rate_share, 0) << bytes;
    EXPECT_LE(both[0].rate_share, 1) << bytes;
  }
}

// ---- property: contention never speeds a group up ----
//
// 8 nodes of 2 GPUs on a 3-tier radix-4 fat-tree with 2:1 leaves and 2:1
// spines. K groups of random shape (1 or 2 members per node, 1 to 4 nodes,
// possibly overlapping other groups) run a random collective at once.
TEST(PredictConcurrent, RandomPlacementsNeverBeatTheUncontendedTime) {
  const HardwareProfile profile = h100();
  const Cluster cluster = small_fat_tree(8, 2.0, 2.0);
  ASSERT_EQ(cluster.shape().tiers, 3);
  sim::RandomStream rng(20240611, "tests.group_collectives.placements", 0);
  const CollectiveOp ops[] = {CollectiveOp::kAllReduce, CollectiveOp::kAllGather,
                              CollectiveOp::kReduceScatter, CollectiveOp::kBroadcast};
  const int64_t sizes[] = {4096, int64_t{1} << 20, int64_t{64} << 20, kGiB};
  int contended_groups = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const auto k = static_cast<int>(2 + rng.next_below(4));
    std::vector<std::vector<int64_t>> groups;
    for (int j = 0; j < k; ++j) {
      std::vector<int64_t> nodes{0, 1, 2, 3, 4, 5, 6, 7};
      for (size_t i = nodes.size() - 1; i > 0; --i) {
        std::swap(nodes[i], nodes[rng.next_below(i + 1)]);
      }
      const auto node_count = static_cast<size_t>(1 + rng.next_below(4));
      const bool both_gpus = rng.next_below(2) == 1;
      std::vector<int64_t> group;
      for (size_t i = 0; i < node_count; ++i) {
        const int64_t first = cluster.first_gpu_of_node(nodes[i]);
        const auto local = static_cast<int64_t>(rng.next_below(2));
        group.push_back(first + local);
        if (both_gpus) group.push_back(first + 1 - local);
      }
      groups.push_back(group);
    }
    const CollectiveOp op = ops[rng.next_below(4)];
    const int64_t bytes = sizes[rng.next_below(4)];
    const std::vector<GroupPrediction> p = predict_concurrent(profile, cluster, groups, op, bytes);
    ASSERT_EQ(p.size(), groups.size());
    for (size_t j = 0; j < p.size(); ++j) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " group " + std::to_string(j) + " op " +
                   to_string(op) + " bytes " + std::to_string(bytes));
      const TunedCollective alone =
          tune_collective(profile, geometry_of(cluster, groups[j]), op, bytes);
      EXPECT_EQ(p[j].tuned.cost.seconds(), alone.cost.seconds());
      EXPECT_GE(p[j].seconds, alone.cost.seconds());
      EXPECT_GT(p[j].rate_share, 0);
      EXPECT_LE(p[j].rate_share, 1);
      EXPECT_LE(p[j].busbw_Bps, alone.cost.busbw_Bps * (1 + 1e-12));
      if (p[j].rate_share < 1) ++contended_groups;
    }
    // Deterministic: the same groups give the same answer.
    const std::vector<GroupPrediction> again =
        predict_concurrent(profile, cluster, groups, op, bytes);
    for (size_t j = 0; j < p.size(); ++j) {
      EXPECT_EQ(again[j].seconds, p[j].seconds);
    }
  }
  // The property must have been exercised, not vacuously true.
  EXPECT_GT(contended_groups, 50);
}

}  // namespace
}  // namespace clustersim::collectives
