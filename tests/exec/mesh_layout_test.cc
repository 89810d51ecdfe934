// The device mesh's groups: in torchtitan's order they are the closed forms
// the layout has always used (written out here by hand); in any other order
// every rank sits in exactly one group of each role, at the index it names,
// and a group's members differ only on the dims the role spans.
#include "exec/mesh_layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

#include "workloads/model/mesh_order.h"

namespace clustersim::workloads {
namespace {

constexpr std::array<GroupRole, 5> kRoles = {GroupRole::kShard, GroupRole::kReplica,
                                             GroupRole::kTp, GroupRole::kPp, GroupRole::kCp};

// pp 2 x dp_replicate 3 x dp_shard 2 x cp 2 x tp 2 = 48 ranks: every dim > 1,
// one of them odd.
Layout five_dims() {
  Layout l;
  l.world = 48;
  l.pp = 2;
  l.replica = 3;
  l.shard = 4;  // dp_shard 2 x cp 2
  l.cp = 2;
  l.tp = 2;
  return l;
}

TEST(MeshLayout, TorchtitanOrderIsTheClosedForm) {
  const Layout l = five_dims();
  const int64_t stage_ranks = 24;
  for (int64_t r = 0; r < l.world; ++r) {
    const int64_t stage = r / stage_ranks;
    const int64_t in_stage = r % stage_ranks;
    const int64_t t = in_stage % 2;
    const int64_t sh = in_stage / 2 % 4;  // dp_shard x cp
    const int64_t rep = in_stage / 8;
    EXPECT_EQ(l.stage_of(r), stage);
    EXPECT_EQ(l.group_of(GroupRole::kShard, r), (stage * 3 + rep) * 2 + t) << r;
    EXPECT_EQ(l.group_of(GroupRole::kReplica, r), (stage * 4 + sh) * 2 + t) << r;
    EXPECT_EQ(l.group_of(GroupRole::kTp, r), r / 2) << r;
    EXPECT_EQ(l.group_of(GroupRole::kPp, r), in_stage) << r;
    EXPECT_EQ(l.group_of(GroupRole::kCp, r), (stage * 6 + in_stage / 4) * 2 + t) << r;
    EXPECT_EQ(l.index_in_group(GroupRole::kShard, r), sh);
    EXPECT_EQ(l.index_in_group(GroupRole::kReplica, r), rep);
    EXPECT_EQ(l.index_in_group(GroupRole::kCp, r), sh % 2);
  }
  // Shard group 1 (stage 0, replica 0, tp 1): every second rank from 1.
  EXPECT_EQ(l.member(GroupRole::kShard, 1, 3), 7);
  // Pipeline group 5: rank 5 and rank 5 + 24.
  EXPECT_EQ(l.member(GroupRole::kPp, 5, 1), 29);
  EXPECT_EQ(l.ring_neighbor(GroupRole::kPp, 29, 1), 5);
}

TEST(MeshLayout, ReplicasOutsideStagesByHand) {
  // [dp_replicate, pp, dp_shard, cp, tp] on pp 2 x replica 2 x shard 2 x
  // tp 2 (16 ranks): a replica is 8 consecutive ranks holding both stages.
  Layout l;
  l.world = 16;
  l.pp = 2;
  l.replica = 2;
  l.shard = 2;
  l.tp = 2;
  ASSERT_EQ(parse_mesh_order("dp_replicate pp dp_shard cp tp", &l.order), "");
  // Rank 5 = replica 0, stage 1, dp_shard 0, tp 1.
  EXPECT_EQ(l.stage_of(5), 1);
  EXPECT_EQ(l.ring_neighbor(GroupRole::kPp, 5, -1), 1);
  EXPECT_EQ(l.ring_neighbor(GroupRole::kReplica, 5, 1), 13);
  EXPECT_EQ(l.member(GroupRole::kShard, l.group_of(GroupRole::kShard, 5), 1), 7);
  EXPECT_EQ(l.member(GroupRole::kTp, l.group_of(GroupRole::kTp, 5), 0), 4);
}

TEST(MeshLayout, TensorParallelOutermostStridesAcrossTheMesh) {
  Layout l;
  l.world = 32;
  l.tp = 4;
  l.shard = 8;
  ASSERT_EQ(parse_mesh_order("tp pp dp_replicate dp_shard cp", &l.order), "");
  // TP group of rank 3: ranks 3, 11, 19, 27 (stride world / tp).
  const int64_t g = l.group_of(GroupRole::kTp, 3);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(l.member(GroupRole::kTp, g, i), 3 + 8 * i);
  // The shard group is the 8 consecutive ranks.
  EXPECT_EQ(l.member(GroupRole::kShard, l.group_of(GroupRole::kShard, 9), 0), 8);
}

TEST(MeshLayout, EveryOrderPartitionsTheRanksIntoGroups) {
  MeshOrder order = kTorchtitanMeshOrder;
  std::sort(order.begin(), order.end());
  int orders = 0;
  do {
    Layout l = five_dims();
    l.order = order;
    ++orders;
    for (const GroupRole role : kRoles) {
      std::set<int64_t> seen;
      for (int64_t g = 0; g < l.group_count(role); ++g) {
        for (int64_t i = 0; i < l.group_size(role); ++i) {
          const int64_t r = l.member(role, g, i);
          ASSERT_TRUE(r >= 0 && r < l.world) << mesh_order_text(order);
          EXPECT_TRUE(seen.insert(r).second) << mesh_order_text(order) << " rank " << r;
          EXPECT_EQ(l.group_of(role, r), g) << mesh_order_text(order);
          EXPECT_EQ(l.index_in_group(role, r), i) << mesh_order_text(order);
        }
      }
      EXPECT_EQ(static_cast<int64_t>(seen.size()), l.world);
    }
    // Members of a pipeline group share every coordinate but the stage.
    for (int64_t r = 0; r < l.world; ++r) {
      const int64_t next = l.ring_neighbor(GroupRole::kPp, r, 1);
      for (const MeshDim d : {MeshDim::kDpReplicate, MeshDim::kDpShard, MeshDim::kCp,
                              MeshDim::kTp}) {
        EXPECT_EQ(l.coord(d, next), l.coord(d, r));
      }
      EXPECT_EQ(l.stage_of(next), (l.stage_of(r) + 1) % 2);
    }
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 120);
}

// member_step: a step it gives walks every group's members exactly; it is 0
// only for a shard group whose cp does not vary directly inside dp_shard.
TEST(MeshLayout, MemberStepWalksEveryGroupOfEveryOrder) {
  MeshOrder order = kTorchtitanMeshOrder;
  std::sort(order.begin(), order.end());
  int uneven = 0;
  do {
    Layout l = five_dims();
    l.order = order;
    for (const GroupRole role : kRoles) {
      const int64_t step = l.member_step(role);
      if (step == 0) {
        EXPECT_EQ(role, GroupRole::kShard) << mesh_order_text(order);
        // Then the members are not evenly spaced.
        const int64_t m0 = l.member(role, 0, 0);
        const int64_t d = l.member(role, 0, 1) - m0;
        bool even = true;
        for (int64_t i = 2; i < l.group_size(role); ++i) {
          even = even && l.member(role, 0, i) == m0 + i * d;
        }
        EXPECT_FALSE(even) << mesh_order_text(order);
        ++uneven;
        continue;
      }
      for (int64_t g = 0; g < l.group_count(role); ++g) {
        const int64_t base = l.member(role, g, 0);
        for (int64_t i = 0; i < l.group_size(role); ++i) {
          EXPECT_EQ(base + i * step, l.member(role, g, i)) << mesh_order_text(order);
        }
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  // cp directly after dp_shard: 4! = 24 of the 120 orders are even.
  EXPECT_EQ(uneven, 96);
  // In torchtitan's order the shard group of 4 (dp_shard 2 x cp 2) is every
  // second rank (tp 2 inside).
  EXPECT_EQ(five_dims().member_step(GroupRole::kShard), 2);
}

TEST(MeshOrder, ParsesNamesOnceEachAndRejectsTheRest) {
  MeshOrder order{};
  EXPECT_EQ(parse_mesh_order("tp, cp,dp_shard dp_replicate  pp", &order), "");
  EXPECT_EQ(mesh_order_text(order), "tp cp dp_shard dp_replicate pp");
  const MeshOrder before = order;
  for (const char* bad : {"", "pp dp_replicate dp_shard cp", "pp dp_replicate dp_shard cp tp tp",
                          "pp dp_replicate dp_shard cp cp", "pp dp dp_shard cp tp"}) {
    EXPECT_NE(parse_mesh_order(bad, &order), "") << bad;
    EXPECT_EQ(order, before) << bad;  // untouched on error
  }
}

}  // namespace
}  // namespace clustersim::workloads
