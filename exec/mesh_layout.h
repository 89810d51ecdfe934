// Ranks laid out as a device mesh, and the process groups the mesh defines
// (torchtitan's mesh order [pp, dp_replicate, dp_shard, cp, tp], tp fastest):
// rank
//   r = stage * (world / pp) + (replica * shard + shard_index) * tp + tp_index
// with shard_index = dp_shard_index * cp + cp_index: the FSDP shard group is
// torchtitan's flattened dp_shard_cp (`shard` counts the cp ranks too). So a
// tensor-parallel group is tp consecutive ranks (one node), a shard group the
// `shard` ranks with the same (stage, replica, tp_index), a context-parallel
// group the cp consecutive members of a shard group (stride tp), a replica
// group the `replica` ranks with the same (stage, shard_index, tp_index), and
// a pipeline group the pp ranks with the same position inside their stage
// (stage s's rank r sends to r + world / pp). Members are listed in ring
// order (ascending rank). Groups are computed, not stored, so a million ranks
// cost nothing here.
//
// Thread safety: a value; all functions are pure.
#pragma once

#include <cstdint>
#include <string_view>

namespace clustersim::workloads {

// The process group a collective runs on: the FSDP shard group, the HSDP
// replica group (all data-parallel ranks for NO_SHARD), the tensor-parallel
// group, the pipeline group (one rank per stage), or the context-parallel
// group (the ranks that split one sequence).
enum class GroupRole : uint8_t { kNone, kShard, kReplica, kTp, kPp, kCp };
inline constexpr int kGroupRoles = 6;
std::string_view group_role_name(GroupRole role);

struct Layout {
  int64_t world = 0;
  int64_t tp = 1;
  int64_t shard = 1;
  int64_t replica = 1;
  int64_t pp = 1;
  int64_t cp = 1;  // divides shard

  int64_t stage_ranks() const { return world / pp; }
  int64_t stage_of(int64_t r) const { return r / stage_ranks(); }

  int64_t group_count(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard:
        return pp * replica * tp;
      case GroupRole::kReplica:
        return pp * shard * tp;
      case GroupRole::kTp:
        return world / tp;
      case GroupRole::kPp:
        return stage_ranks();
      case GroupRole::kCp:
        return world / cp;
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  int64_t group_size(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard:
        return shard;
      case GroupRole::kReplica:
        return replica;
      case GroupRole::kTp:
        return tp;
      case GroupRole::kPp:
        return pp;
      case GroupRole::kCp:
        return cp;
      case GroupRole::kNone:
        break;
    }
    return 1;
  }
  // The group of `role` that rank r belongs to.
  int64_t group_of(GroupRole role, int64_t r) const {
    const int64_t stage = stage_of(r);
    const int64_t in_stage = r % stage_ranks();
    const int64_t t = in_stage % tp;
    const int64_t sh = (in_stage / tp) % shard;
    const int64_t rep = in_stage / (tp * shard);
    switch (role) {
      case GroupRole::kShard:
        return (stage * replica + rep) * tp + t;
      case GroupRole::kReplica:
        return (stage * shard + sh) * tp + t;
      case GroupRole::kTp:
        return r / tp;
      case GroupRole::kPp:
        return in_stage;
      case GroupRole::kCp:
        return (stage * (stage_ranks() / (tp * cp)) + in_stage / (tp * cp)) * tp + t;
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  // Rank r's position in its group of `role` (ring order).
  int64_t index_in_group(GroupRole role, int64_t r) const {
    const int64_t in_stage = r % stage_ranks();
    switch (role) {
      case GroupRole::kShard:
        return in_stage / tp % shard;
      case GroupRole::kReplica:
        return in_stage / (tp * shard);
      case GroupRole::kTp:
        return r % tp;
      case GroupRole::kPp:
        return stage_of(r);
      case GroupRole::kCp:
        return in_stage / tp % cp;
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  // The member `shift` places on from r around its group's ring (negative: back).
  int64_t ring_neighbor(GroupRole role, int64_t r, int64_t shift) const {
    const int64_t n = group_size(role);
    const int64_t i = ((index_in_group(role, r) + shift) % n + n) % n;
    return member(role, group_of(role, r), i);
  }
  // The i-th member (ring order) of group g.
  int64_t member(GroupRole role, int64_t g, int64_t i) const {
    switch (role) {
      case GroupRole::kShard: {
        const int64_t stage = g / (replica * tp);
        const int64_t rep = g / tp % replica;
        const int64_t t = g % tp;
        return stage * stage_ranks() + (rep * shard + i) * tp + t;
      }
      case GroupRole::kReplica: {
        const int64_t stage = g / (shard * tp);
        const int64_t sh = g / tp % shard;
        const int64_t t = g % tp;
        return stage * stage_ranks() + (i * shard + sh) * tp + t;
      }
      case GroupRole::kTp:
        return g * tp + i;
      case GroupRole::kPp:
        return i * stage_ranks() + g;
      case GroupRole::kCp: {
        const int64_t t = g % tp;
        const int64_t per_stage = stage_ranks() / (tp * cp);
        const int64_t stage = g / tp / per_stage;
        const int64_t block = g / tp % per_stage;
        return stage * stage_ranks() + (block * cp + i) * tp + t;
      }
      case GroupRole::kNone:
        break;
    }
    return g;
  }
};

}  // namespace clustersim::workloads
