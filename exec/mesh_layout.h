// Ranks laid out as a device mesh, and the process groups the mesh defines
// (torchtitan's mesh order, tp fastest): rank
//   r = (replica * shard + shard_index) * tp + tp_index
// so a tensor-parallel group is tp consecutive ranks (one node), a shard
// group the `shard` ranks with the same (replica, tp_index), a replica group
// the `replica` ranks with the same (shard_index, tp_index). Members are
// listed in ring order (ascending rank). Groups are computed, not stored, so
// a million ranks cost nothing here.
//
// Thread safety: a value; all functions are pure.
#pragma once

#include <cstdint>
#include <string_view>

namespace clustersim::workloads {

// The process group a collective runs on: the FSDP shard group, the HSDP
// replica group (all data-parallel ranks for NO_SHARD), or the
// tensor-parallel group.
enum class GroupRole : uint8_t { kNone, kShard, kReplica, kTp };
inline constexpr int kGroupRoles = 4;
std::string_view group_role_name(GroupRole role);

struct Layout {
  int64_t world = 0;
  int64_t tp = 1;
  int64_t shard = 1;
  int64_t replica = 1;

  int64_t group_count(GroupRole role) const {
    switch (role) {
      case GroupRole::kShard:
        return replica * tp;
      case GroupRole::kReplica:
        return shard * tp;
      case GroupRole::kTp:
        return world / tp;
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
      case GroupRole::kNone:
        break;
    }
    return 1;
  }
  // The group of `role` that rank r belongs to.
  int64_t group_of(GroupRole role, int64_t r) const {
    const int64_t t = r % tp;
    const int64_t sh = (r / tp) % shard;
    const int64_t rep = r / (tp * shard);
    switch (role) {
      case GroupRole::kShard:
        return rep * tp + t;
      case GroupRole::kReplica:
        return sh * tp + t;
      case GroupRole::kTp:
        return r / tp;
      case GroupRole::kNone:
        break;
    }
    return 0;
  }
  // The i-th member (ring order) of group g.
  int64_t member(GroupRole role, int64_t g, int64_t i) const {
    switch (role) {
      case GroupRole::kShard: {
        const int64_t rep = g / tp;
        const int64_t t = g % tp;
        return (rep * shard + i) * tp + t;
      }
      case GroupRole::kReplica: {
        const int64_t sh = g / tp;
        const int64_t t = g % tp;
        return (i * shard + sh) * tp + t;
      }
      case GroupRole::kTp:
        return g * tp + i;
      case GroupRole::kNone:
        break;
    }
    return g;
  }
};

}  // namespace clustersim::workloads
